package request

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// BodyArg is the input-schema property that carries the request body.
const BodyArg = "body"

// Plan is how one operation's arguments become an HTTP request, computed
// once when the tool is built. Its fields are plain data so that the tool
// cache can encode plans as they are (encoding/gob); call [Plan.Prepare]
// after decoding one.
type Plan struct {
	Label  string  // "GET /pets/{petId}", for messages
	Method string  // upper-case HTTP method
	Base   string  // base URL, with any fixed query of the path key
	Path   []Seg   // the path template after Base
	Params []Param // path, query, header and cookie parameters
	Body   *Body   // nil: the operation takes no body
	Accept string  // Accept header
	// Headers are the response headers shown to the agent beside a
	// successful answer: those the spec documents for the operation's
	// success responses, and Link (pagination), canonical and sorted.
	Headers []string
	// Auth are the spec's security schemes whose configured credentials
	// every request of the operation carries (see [Credentials.WithSchemes]):
	// the first of its security requirements whose schemes are all
	// configured; nil when none is (or it declares security: []).
	Auth []SchemeUse

	base *url.URL // Base, parsed by Prepare
	// baseNames are the names in base's query that no query parameter of
	// the operation declares (see credKey): arguments may not send them
	// (Build).
	baseNames []credKey
	// basePairs splits base's query when a query parameter of the
	// operation declares one of its names (nil otherwise): a value the
	// arguments give that parameter replaces the base's pairs of that
	// name rather than following them (Build).
	basePairs []basePair
}

// basePair is one name=value pair of the base URL's query.
type basePair struct {
	raw      string  // as written, escaped
	name     credKey // unescaped
	declared bool    // a query parameter of the operation has this name (credKey.same)
}

// Seg is a literal, already escaped, or a reference to a path parameter.
type Seg struct {
	Lit   string
	Param int // index into Plan.Params; -1 for a literal
}

// Param binds an argument name to a parameter's serialization.
type Param struct {
	Arg  string
	Spec ParamSpec
}

// ArgumentError reports tool arguments that cannot be serialized as the
// spec requires. The upstream is not called.
type ArgumentError struct {
	// Field is the argument at fault ("" when the problem is the whole
	// argument object).
	Field string
	// Reason says what is wrong, in words an agent can act on.
	Reason string
}

func (e *ArgumentError) Error() string {
	if e.Field == "" {
		return "invalid arguments: " + e.Reason
	}
	return fmt.Sprintf("invalid argument %q: %s", e.Field, e.Reason)
}

// Prepare parses Base and checks the path plan; a plan must be prepared
// before [Plan.Build].
func (p *Plan) Prepare() error {
	u, err := url.Parse(p.Base)
	if err != nil {
		return fmt.Errorf("%s: base URL: %w", p.Label, err)
	}
	for _, seg := range p.Path {
		if seg.Param >= len(p.Params) {
			return fmt.Errorf("%s: corrupt path plan", p.Label)
		}
	}
	p.base = u
	p.baseNames, p.basePairs = nil, nil
	if u.RawQuery != "" {
		var declared []credKey
		for _, prm := range p.Params {
			if prm.Spec.In == InQuery {
				declared = append(declared, newCredKey(prm.Spec.Name))
			}
		}
		var pairs []basePair
		anyDeclared := false
		for pair := range strings.SplitSeq(u.RawQuery, "&") {
			k, _, _ := strings.Cut(pair, "=")
			k = unescapeName(k)
			name := newCredKey(k)
			bp := basePair{raw: pair, name: name, declared: k != "" && slices.ContainsFunc(declared, name.same)}
			anyDeclared = anyDeclared || bp.declared
			pairs = append(pairs, bp)
			if k != "" && !bp.declared {
				p.baseNames = append(p.baseNames, name)
			}
		}
		if anyDeclared {
			p.basePairs = pairs
		}
	}
	return nil
}

// baseQuery is the base URL's query to send ahead of q, the pairs the
// arguments wrote: without the pairs of a declared parameter that q
// writes again (most servers read the first of repeated names, so the
// base's value would win over the argument's).
func (p *Plan) baseQuery(q []byte) string {
	if p.basePairs == nil || len(q) == 0 {
		return p.base.RawQuery
	}
	var written []credKey
	for pair := range strings.SplitSeq(string(q), "&") {
		k, _, _ := strings.Cut(pair, "=")
		written = append(written, newCredKey(unescapeName(k)))
	}
	var kept []string
	for _, bp := range p.basePairs {
		if !bp.declared || !slices.ContainsFunc(written, bp.name.same) {
			kept = append(kept, bp.raw)
		}
	}
	return strings.Join(kept, "&")
}

// BaseURL is the parsed base URL (nil before Prepare).
func (p *Plan) BaseURL() *url.URL { return p.base }

// Build turns validated arguments into the upstream request. The URL is
// assembled from the plan's base URL and escaped path segments only: no
// argument can change the scheme, host, or path shape. Upstream credentials
// come from configuration (creds may be nil), never from arguments. The
// query string and the body are capped at DefaultMaxEncodedBytes (see
// BuildLimit).
func (p *Plan) Build(ctx context.Context, args map[string]any, creds *Prepared, userAgent string) (*http.Request, error) {
	return p.BuildLimit(ctx, args, creds, userAgent, 0, 0)
}

// BuildLimit is Build with the query string the arguments write and the
// body each capped at limit bytes (0: DefaultMaxEncodedBytes; the query
// string at 1 MiB in any case). Encoding
// stops where a value passes the cap, and the call is refused with a
// TooLargeError naming the argument, so that no arguments make the bridge
// build a request far larger than themselves. The request target (path
// and query) and each header line the arguments write are capped at
// maxURL bytes (0: DefaultMaxURLBytes; negative: no cap), past which
// servers answer 414 or 431: the call is refused naming the argument that
// wrote most of it.
func (p *Plan) BuildLimit(ctx context.Context, args map[string]any, creds *Prepared, userAgent string, limit, maxURL int) (*http.Request, error) {
	if limit <= 0 {
		limit = DefaultMaxEncodedBytes
	}
	if maxURL == 0 {
		maxURL = DefaultMaxURLBytes
	}
	var widest urlShare // the argument that wrote most of the URL
	queryLimit := min(limit, maxQueryBytes)
	if creds == nil {
		creds = &Prepared{}
	}
	base := p.base
	// Path.
	var path strings.Builder
	path.WriteString(strings.TrimRight(base.EscapedPath(), "/"))
	var expanded []span // where each path parameter's value went
	for _, seg := range p.Path {
		if seg.Param < 0 {
			path.WriteString(seg.Lit)
			continue
		}
		prm := p.Params[seg.Param]
		v, ok := args[prm.Arg]
		if !ok || v == nil {
			return nil, &ArgumentError{Field: prm.Arg, Reason: "required path parameter is missing"}
		}
		enc, err := prm.Spec.encodePath(v)
		if err != nil {
			return nil, &ArgumentError{Field: prm.Arg, Reason: err.Error()}
		}
		if enc == "" {
			return nil, &ArgumentError{Field: prm.Arg, Reason: "path parameter must not be empty"}
		}
		expanded = append(expanded, span{path.Len(), path.Len() + len(enc), prm.Arg})
		path.WriteString(enc)
		widest.add(prm.Arg, len(enc))
	}
	u := *base
	u.RawPath = path.String()
	if arg := dotSegment(u.RawPath, expanded); arg != "" {
		return nil, &ArgumentError{Field: arg, Reason: `the value would make a path segment "." or ".." (once %2E, %2F and %5C are decoded, as many servers do before normalizing, or fullwidth dots and slashes read as ASCII, as servers that normalize Unicode do), which could reach another endpoint`}
	}
	unescaped, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return nil, fmt.Errorf("building path for %s: %w", p.Label, err)
	}
	u.Path = unescaped

	// Query (the pairs the arguments write; the base URL's own go
	// first, see baseQuery), headers, cookies.
	var query []byte
	header := make(http.Header, 4)
	var cookies []string
	for i := range p.Params {
		prm := &p.Params[i]
		v, ok := args[prm.Arg]
		if !ok || prm.Spec.In == "path" {
			continue
		}
		switch prm.Spec.In {
		case "query":
			if len(query) > 0 {
				query = append(query, '&')
			}
			before := len(query)
			query, err = prm.Spec.appendQueryLimit(query, v, queryLimit)
			if err == nil && overLimit(len(query), queryLimit) {
				err = &TooLargeError{What: "query string", Limit: queryLimit}
			}
			if err != nil {
				return nil, &ArgumentError{Field: prm.Arg, Reason: err.Error()}
			}
			if len(query) == before && before > 0 {
				query = query[:before-1] // nothing was written: drop the '&'
			}
			widest.add(prm.Arg, len(query)-before)
		case "header":
			if creds.headerNamed(prm.Spec.Name) {
				// Left out of the tool when it was built (see
				// SameHeaderName); a tool restored from an older build may
				// still have it.
				return nil, &ArgumentError{Field: prm.Arg, Reason: fmt.Sprintf("the header %q is read as the one that carries the bridge's upstream credential", prm.Spec.Name)}
			}
			hv, err := prm.Spec.headerValue(v)
			if err != nil {
				return nil, &ArgumentError{Field: prm.Arg, Reason: err.Error()}
			}
			if strings.ContainsAny(hv, "\r\n") {
				return nil, &ArgumentError{Field: prm.Arg, Reason: "header values must not contain line breaks"}
			}
			if n := len(prm.Spec.Name) + 2 + len(hv); overLimit(n, maxURL) {
				return nil, &ArgumentError{Field: prm.Arg, Reason: fmt.Sprintf("the header %q would be %d bytes, more than the %d the bridge sends (servers commonly answer 431 Request Header Fields Too Large past 8 KiB): send a shorter value", prm.Spec.Name, n, maxURL)}
			}
			if hv != "" {
				header.Set(prm.Spec.Name, hv)
			}
		case "cookie":
			pairs, err := prm.Spec.cookiePairs(v)
			if err != nil {
				return nil, &ArgumentError{Field: prm.Arg, Reason: err.Error()}
			}
			cookies = append(cookies, pairs...)
		}
	}
	// An object exploded into the query or the cookies writes pairs
	// named by its keys: one named like another parameter there would be
	// read in its place (most servers read the first of repeated names)
	// or get past its schema.
	for _, in := range [...]Location{InQuery, InCookie} {
		if arg, name := objectParamClash(p.Params, args, in); name != "" {
			return nil, &ArgumentError{Field: arg, Reason: fmt.Sprintf("the object would send the %s parameter %q, which servers read as another %s parameter of the tool: give that argument instead", in, name, in)}
		}
	}
	// A parameter named like a credential is not a tool argument, but a
	// free-form object (form-exploded query or cookie) writes pairs named
	// by its keys: {"api_key": "..."} would send the agent's key ahead of
	// the configured one, which most servers read first.
	if len(creds.queryNames) > 0 && len(query) > 0 {
		if arg, name := queryCredential(query, creds.queryNames, p.Params, args); name != "" {
			return nil, &ArgumentError{Field: arg, Reason: fmt.Sprintf("the value would send the query parameter %q, which carries the bridge's upstream credential", name)}
		}
	}
	// The base URL's own query (an API key in --upstream, say) is
	// configuration too: arguments may not repeat its names, but for a
	// parameter the operation declares under that name, whose value
	// replaces the base's.
	if len(p.baseNames) > 0 && len(query) > 0 {
		if arg, name := queryCredential(query, p.baseNames, p.Params, args); name != "" {
			return nil, &ArgumentError{Field: arg, Reason: fmt.Sprintf("the value would send the query parameter %q, which the bridge's upstream URL sets", name)}
		}
	}
	if len(creds.cookieNames) > 0 && len(cookies) > 0 {
		for _, c := range cookies {
			name, _, _ := strings.Cut(c, "=")
			name = unescapeName(name)
			if slices.ContainsFunc(creds.cookieNames, newCredKey(name).same) {
				return nil, &ArgumentError{Field: cookieArg(p.Params, args), Reason: fmt.Sprintf("the value would send the cookie %q, which carries the bridge's upstream credential", name)}
			}
		}
	}
	if bq := p.baseQuery(query); bq != "" {
		if len(query) > 0 {
			query = slices.Concat([]byte(bq), []byte{'&'}, query)
		} else {
			query = []byte(bq)
		}
	}
	for _, kv := range creds.query {
		if len(query) > 0 {
			query = append(query, '&')
		}
		query = append(query, kv...)
	}
	u.RawQuery = string(query)
	if n := len(u.RawPath) + 1 + len(query); overLimit(n, maxURL) {
		return nil, &ArgumentError{Field: widest.arg, Reason: fmt.Sprintf("the URL path and query these arguments make would be %d bytes, more than the %d the bridge sends (servers commonly answer 414 URI Too Long past 8 KiB): send shorter values or fewer items", n, maxURL)}
	}

	// Body.
	var body []byte
	var contentType string
	if p.Body != nil {
		if v, ok := args[BodyArg]; ok {
			// Servers that merge a form body with the query (PHP's
			// $_REQUEST, Rack, Sinatra) read a field named like a query
			// credential, or a name the upstream URL's query sets, instead
			// of it.
			var field func(string) error
			if len(creds.queryNames) > 0 || len(p.baseNames) > 0 {
				field = func(name string) error {
					k := newCredKey(name)
					switch {
					case slices.ContainsFunc(creds.queryNames, k.same):
						return &fieldError{fmt.Sprintf("the value would send the form field %q, which servers that merge the body with the query read as the query parameter that carries the bridge's upstream credential", name)}
					case slices.ContainsFunc(p.baseNames, k.same):
						return &fieldError{fmt.Sprintf("the value would send the form field %q, which servers that merge the body with the query read as a query parameter the bridge's upstream URL sets", name)}
					}
					return nil
				}
			}
			body, contentType, err = p.Body.encodeChecked(v, limit, field)
			var fe *fieldError
			if errors.As(err, &fe) {
				return nil, &ArgumentError{Field: BodyArg, Reason: fe.reason}
			}
			if err != nil {
				return nil, &ArgumentError{Field: BodyArg, Reason: err.Error()}
			}
		}
	}
	var rd *bytes.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	// The request gets u itself rather than its text parsed back: the URL
	// is the one assembled above, and the parse cost a quarter of Build.
	var req *http.Request
	if rd != nil {
		req, err = http.NewRequestWithContext(ctx, p.Method, "", rd)
	} else {
		req, err = http.NewRequestWithContext(ctx, p.Method, "", nil)
	}
	if err != nil {
		return nil, fmt.Errorf("building request for %s: %w", p.Label, err)
	}
	*req.URL = u
	req.Host = strings.TrimSuffix(u.Host, ":") // as http.NewRequest sets it: no empty port
	for k, vs := range header {
		req.Header[k] = vs
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	// Set, with one backing array for both values (as Header.Clone does).
	// A User-Agent header parameter is the API's to ask for (Just Eat
	// requires one, Bing shapes its results by it): the argument's value
	// goes, and the bridge's own only without one.
	fixed := []string{p.Accept, userAgent}
	req.Header["Accept"] = fixed[0:1:1]
	if _, ok := header["User-Agent"]; !ok {
		req.Header["User-Agent"] = fixed[1:2:2]
	}
	if len(cookies) > 0 {
		cookies = append(cookies, creds.cookies...)
		line := strings.Join(cookies, "; ")
		if n := len("Cookie: ") + len(line); overLimit(n, maxURL) {
			return nil, &ArgumentError{Field: cookieArg(p.Params, args), Reason: fmt.Sprintf("the Cookie header these arguments make would be %d bytes, more than the %d the bridge sends (servers commonly answer 431 Request Header Fields Too Large past 8 KiB): send shorter values", n, maxURL)}
		}
		req.Header.Set("Cookie", line)
	} else if len(creds.cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(creds.cookies, "; "))
	}
	for k, v := range creds.headers {
		req.Header.Set(k, v)
	}
	if creds.authorization != "" {
		req.Header.Set("Authorization", creds.authorization)
	}
	return req, nil
}

// queryCredential finds, in the query pairs the arguments wrote, one
// whose name (unescaped) is a credential's, and the query argument whose
// own encoding wrote it.
func queryCredential(q []byte, names []credKey, params []Param, args map[string]any) (arg, name string) {
	if name = credentialPair(q, names); name == "" {
		return "", ""
	}
	for i := range params {
		prm := &params[i]
		v, ok := args[prm.Arg]
		if !ok || prm.Spec.In != "query" {
			continue
		}
		if one, err := prm.Spec.appendQuery(nil, v); err == nil && credentialPair(one, names) != "" {
			return prm.Arg, name
		}
	}
	return "", name
}

// objectParamClash finds a query or cookie (in) argument given as an
// object whose encoding writes a pair named (as lenient servers read
// names, see credKey) like another parameter of the operation in that
// location, and that name.
func objectParamClash(params []Param, args map[string]any, in Location) (arg, name string) {
	for i := range params {
		prm := &params[i]
		if prm.Spec.In != in || prm.Spec.ContentType != "" {
			continue
		}
		v, ok := args[prm.Arg].(map[string]any)
		if !ok || len(v) == 0 {
			continue
		}
		var others []credKey
		for j := range params {
			if j != i && params[j].Spec.In == in {
				others = append(others, newCredKey(params[j].Spec.Name))
			}
		}
		if len(others) == 0 {
			continue
		}
		var pairs []string
		if in == InCookie {
			var err error
			if pairs, err = prm.Spec.cookiePairs(v); err != nil {
				continue // reported where the cookies are written
			}
		} else {
			one, err := prm.Spec.appendQuery(nil, v)
			if err != nil {
				continue // reported where the query is written
			}
			pairs = strings.Split(string(one), "&")
		}
		own := newCredKey(prm.Spec.Name)
		for _, pair := range pairs {
			k, _, _ := strings.Cut(pair, "=")
			k = unescapeName(k)
			if key := newCredKey(k); !key.same(own) && slices.ContainsFunc(others, key.same) {
				return prm.Arg, k
			}
		}
	}
	return "", ""
}

// credentialPair is the name of the first pair of the query q named like
// one of names, once unescaped; "" if none is. "Like" is as lenient as the
// servers that read it: see credName and credKey.
func credentialPair(q []byte, names []credKey) string {
	for pair := range strings.SplitSeq(string(q), "&") {
		k, _, _ := strings.Cut(pair, "=")
		k = unescapeName(k)
		if slices.ContainsFunc(names, newCredKey(k).same) {
			return k
		}
	}
	return ""
}

// fieldError is a form field or multipart part the body may not write.
type fieldError struct{ reason string }

func (e *fieldError) Error() string { return e.reason }

// cookieArg names the first cookie argument given, for an error about
// the cookies the arguments wrote.
func cookieArg(params []Param, args map[string]any) string {
	for i := range params {
		if _, ok := args[params[i].Arg]; ok && params[i].Spec.In == "cookie" {
			return params[i].Arg
		}
	}
	return ""
}

// Credentials are the upstream credentials attached to every request. They
// come from configuration only, are never accepted as tool arguments, and
// are fed to the redactor so they never reach a client or a log.
type Credentials struct {
	// BearerToken is sent as "Authorization: Bearer <token>".
	BearerToken string
	// BasicUser and BasicPassword are sent as HTTP basic auth.
	BasicUser, BasicPassword string
	// Headers are static headers (API keys in a header).
	Headers map[string]string
	// Query are static query parameters (API keys in the query string).
	Query map[string]string
	// Cookies are static cookies (API keys in a cookie).
	Cookies map[string]string
}

// Prepared are the configured upstream credentials rendered once.
type Prepared struct {
	authorization string
	headers       map[string]string
	query         []string // escaped key=value pairs
	cookies       []string // name=value pairs
	// queryNames and cookieNames are the credentials' parameter names:
	// an argument may not send a pair of that name (see [Plan.Build]).
	queryNames, cookieNames []credKey
	// headerNames are the configured headers' names, as credName reads
	// them (Authorization aside).
	headerNames []string
}

func (c Credentials) Prepare() (*Prepared, error) {
	p := &Prepared{}
	switch {
	case c.BearerToken != "" && c.BasicUser != "":
		return nil, fmt.Errorf("upstream credentials: bearer token and basic auth are mutually exclusive")
	case c.BearerToken != "":
		p.authorization = "Bearer " + c.BearerToken
	case c.BasicUser != "" || c.BasicPassword != "":
		p.authorization = "Basic " + base64.StdEncoding.EncodeToString([]byte(c.BasicUser+":"+c.BasicPassword))
	}
	p.headers = map[string]string{}
	for k, v := range c.Headers {
		name := http.CanonicalHeaderKey(strings.TrimSpace(k))
		if name == "" || strings.ContainsAny(name+v, "\r\n") {
			return nil, fmt.Errorf("upstream header %q: invalid name or value", k)
		}
		if name == "Authorization" && p.authorization != "" {
			return nil, fmt.Errorf("upstream header Authorization conflicts with the configured token")
		}
		p.headers[name] = v
		p.headerNames = append(p.headerNames, credName(name, true))
	}
	for _, k := range slices.Sorted(maps.Keys(c.Query)) {
		p.query = append(p.query, url.QueryEscape(k)+"="+url.QueryEscape(c.Query[k]))
		p.queryNames = append(p.queryNames, newCredKey(k))
	}
	for _, k := range slices.Sorted(maps.Keys(c.Cookies)) {
		p.cookies = append(p.cookies, k+"="+c.Cookies[k])
		p.cookieNames = append(p.cookieNames, newCredKey(k))
	}
	return p, nil
}

// headerNamed reports whether lenient servers read a header of that name
// as a configured credential header (see SameHeaderName).
func (p *Prepared) headerNamed(name string) bool {
	return len(p.headerNames) > 0 && slices.Contains(p.headerNames, credName(name, true))
}

// secrets lists every credential value, for the sanitizer.
func (c Credentials) Secrets() []string {
	s := []string{c.BearerToken, c.BasicPassword}
	for _, v := range c.Headers {
		s = append(s, v)
	}
	for _, v := range c.Query {
		s = append(s, v)
	}
	for _, v := range c.Cookies {
		s = append(s, v)
	}
	if c.BasicUser != "" || c.BasicPassword != "" {
		s = append(s, base64.StdEncoding.EncodeToString([]byte(c.BasicUser+":"+c.BasicPassword)))
	}
	out := s[:0]
	for _, v := range s {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// urlShare is the argument that wrote the most bytes of a URL, to be
// named when the URL is too long.
type urlShare struct {
	arg string
	n   int
}

func (w *urlShare) add(arg string, n int) {
	if n > w.n {
		w.arg, w.n = arg, n
	}
}

// span is where one path parameter's encoded value sits in a raw path.
type span struct {
	start, end int
	arg        string
}

// dotSegment returns the argument whose value makes a segment of raw
// (between literal slashes) read "." or ".." once decoded, with decoded
// '/' and '\\' splitting it further: ".%2E" from a label-style ".", or
// "%2E%2E" from "..", is a parent-directory step to a server that decodes
// before it normalizes (Go's ServeMux, most proxies). Segments without a
// parameter are the template's own and are not judged.
func dotSegment(raw string, expanded []span) string {
	if len(expanded) == 0 {
		return ""
	}
	start := 0
	for start <= len(raw) {
		end := strings.IndexByte(raw[start:], '/')
		if end < 0 {
			end = len(raw)
		} else {
			end += start
		}
		for _, e := range expanded {
			if e.start < end && e.end > start {
				if dotty(raw[start:end]) {
					return e.arg
				}
				break
			}
		}
		start = end + 1
	}
	return ""
}

// dotty reports whether a raw segment, decoded, has a piece (split at '/'
// and '\\') that is "." or "..", read as is or in NFKC, which makes
// fullwidth dots and slashes and the dot leaders ("．．", "‥", "／")
// ASCII, as servers that normalize Unicode before routing read them.
func dotty(seg string) bool {
	dec, err := url.PathUnescape(seg)
	if err != nil {
		dec = seg
	}
	if dotPiece(dec) {
		return true
	}
	for i := 0; i < len(dec); i++ {
		if dec[i] >= utf8.RuneSelf {
			return dotPiece(norm.NFKC.String(dec))
		}
	}
	return false
}

// dotPiece reports whether s has a piece (split at '/' and '\\') that is
// "." or "..".
func dotPiece(s string) bool {
	for _, piece := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		if piece == "." || piece == ".." {
			return true
		}
	}
	return false
}
