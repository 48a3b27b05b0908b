package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Parameter serialization follows the "Style Values" and "Style Examples"
// tables of OpenAPI 3.1.2 (whose examples, unlike 3.0's, are valid RFC 3986),
// with these decisions:
//
//   - Escaping. Values and object keys are percent-encoded except RFC 3986
//     unreserved characters (A-Z a-z 0-9 - . _ ~); space is %20, never '+'.
//     Style delimiters stay literal (, ; = . &) except where RFC 3986 forbids
//     them in a query: spaceDelimited uses %20, pipeDelimited %7C, deepObject
//     brackets %5B %5D (the 3.1.2 table). A delimiter inside a value is
//     always escaped, so a server that splits before decoding sees each value
//     intact; one that decodes first (kin-openapi does) cannot tell them
//     apart, an inherent limit of these styles.
//   - allowReserved keeps :/?@!$'()*, and existing %XX triples literal, but
//     still escapes [ ] # (not allowed in a query), & = + (form syntax) and ;
//     (a legacy pair separator that Go's url.ParseQuery rejects).
//   - Path values cannot change the path's shape: '/', '\\', '?', '#', '%' and
//     ';' are escaped; '.' is escaped in label values (the label delimiter),
//     in all-dot values and all-dot runs between slashes ("../a" becomes
//     %2E%2E%2Fa, safe even for servers that decode %2F first), and when the
//     whole result would be a dot segment (label of "" is %2E). An empty
//     result is an error: "/pets/" would replace "/pets/{id}".
//   - Headers are not percent-encoded (the spec forbids it); control
//     characters other than tab are rejected.
//   - null means "not sent": query and cookie parameters write nothing and
//     headerValue returns "" (the caller skips the header); a null path value
//     is an error. Empty arrays and objects are RFC 6570 "undefined" and act
//     like null. A null array item is the empty string (positions are kept);
//     a null object property is skipped.
//   - Object properties are written in sorted key order (decoded JSON has
//     none), so {"R":100,"G":200,"B":150} reads B,150,G,200,R,100.
//   - Primitives: strings as-is, float64 without exponent (3, not 3e+00;
//     strconv 'f', -1), json.Number verbatim, true/false.
//   - Nested arrays/objects only go through deepObject (color[a][b]=x, arrays
//     by index color[a][0]=x as kin-openapi decodes them); elsewhere they are
//     an error. `content` parameters are JSON text (JSON media types) or plain
//     text (others), then serialized as a primitive.
//   - Combinations the table marks n/a are written leniently rather than
//     failing every call: a primitive with spaceDelimited, pipeDelimited or
//     deepObject is written as form (name=value); spaceDelimited and
//     pipeDelimited with explode=true act like form with explode=true;
//     deepObject ignores explode. Arrays with deepObject are an error.

// paramLocation is where an OpenAPI parameter goes.
type paramLocation string

// The four OpenAPI 3.0/3.1 parameter locations.
const (
	paramInPath   paramLocation = openapi3.ParameterInPath
	paramInQuery  paramLocation = openapi3.ParameterInQuery
	paramInHeader paramLocation = openapi3.ParameterInHeader
	paramInCookie paramLocation = openapi3.ParameterInCookie
)

// paramSpec is the precompiled serialization plan for one parameter, built
// once at startup by newParamSpec (a literal must set the resolved Style and
// Explode itself).
type paramSpec struct {
	Name          string        // name on the wire
	In            paramLocation // path, query, header or cookie
	Style         string        // resolved style (defaults applied: path/header "simple", query/cookie "form")
	Explode       bool          // resolved explode (default true for form, false otherwise; always true for deepObject)
	AllowReserved bool          // query only: RFC 3986 reserved characters pass unescaped
	ContentType   string        // non-empty for `content` parameters: the value is encoded per this media type, then serialized as a primitive
}

// newParamSpec builds a paramSpec from a kin-openapi parameter, applying the
// OpenAPI defaults. It returns an error for a missing name, an unknown
// location, a header or cookie name that is not an RFC 9110 token, and a
// style the location does not allow (path: simple, label, matrix; query:
// form, spaceDelimited, pipeDelimited, deepObject; header: simple; cookie:
// form). Style is not checked for `content` parameters, which ignore it.
func newParamSpec(p *openapi3.Parameter) (paramSpec, error) {
	if p == nil {
		return paramSpec{}, errors.New("parameter is nil")
	}
	if p.Name == "" {
		return paramSpec{}, errors.New("parameter has no name")
	}
	s := paramSpec{Name: p.Name, In: paramLocation(p.In)}
	var allowed []string
	switch s.In {
	case paramInPath:
		allowed = []string{openapi3.SerializationSimple, openapi3.SerializationLabel, openapi3.SerializationMatrix}
	case paramInQuery:
		allowed = []string{openapi3.SerializationForm, openapi3.SerializationSpaceDelimited, openapi3.SerializationPipeDelimited, openapi3.SerializationDeepObject}
	case paramInHeader:
		allowed = []string{openapi3.SerializationSimple}
	case paramInCookie:
		allowed = []string{openapi3.SerializationForm}
	default:
		return paramSpec{}, fmt.Errorf("unsupported location %q", p.In)
	}
	if (s.In == paramInHeader || s.In == paramInCookie) && !paramIsToken(p.Name) {
		return paramSpec{}, fmt.Errorf("%q is not a valid %s name", p.Name, p.In)
	}
	sm, err := p.SerializationMethod()
	if err != nil {
		return paramSpec{}, err
	}
	s.Style, s.Explode = sm.Style, sm.Explode
	s.AllowReserved = p.AllowReserved && s.In == paramInQuery
	if len(p.Content) > 0 {
		s.ContentType = paramPickContent(p.Content)
		s.Style, s.Explode = allowed[0], s.In == paramInQuery || s.In == paramInCookie
		return s, nil
	}
	if !slices.Contains(allowed, s.Style) {
		return paramSpec{}, fmt.Errorf("style %q is not allowed in %s (allowed: %s)",
			s.Style, s.In, strings.Join(allowed, ", "))
	}
	if s.Style == openapi3.SerializationDeepObject {
		// explode=false is undefined for deepObject, yet it is the declared
		// default, so real specs omit it: deepObject is always exploded.
		s.Explode = true
	}
	return s, nil
}

// paramPickContent chooses the media type of a `content` parameter. The
// spec allows exactly one; with several, a JSON one wins, then the first in
// sorted order.
func paramPickContent(c openapi3.Content) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if encIsJSONMedia(k) {
			return k
		}
	}
	return keys[0]
}

// encodePath returns the serialized, percent-escaped value to substitute for
// {name} in a path template (already escaped: it goes into URL.RawPath).
// Styles simple, label and matrix, with explode, per the OpenAPI table.
// The value cannot change the path's shape (see the notes above); null and
// empty results are errors.
func (s paramSpec) encodePath(v any) (string, error) {
	if v == nil {
		return "", errors.New("path parameter must not be null")
	}
	var b []byte
	if s.ContentType != "" {
		str, err := s.contentString(v)
		if err != nil {
			return "", err
		}
		b = encAppendPathPart(nil, str, encStrict)
	} else {
		var err error
		if b, err = s.op().expand(nil, s.Name, v); err != nil {
			return "", err
		}
	}
	if len(b) == 0 {
		return "", errors.New("path parameter must not serialize to an empty segment")
	}
	if strings.Trim(string(b), ".") == "" {
		// Label of "" is "." and label explode of ["",""] is "..": dot
		// segments that a client or server would normalize away.
		b = encAppendEscaped(nil, string(b), encLabel)
	}
	return string(b), nil
}

// appendQuery appends the serialized query pair(s) for the value to a raw
// (already escaped) query string and returns the extended buffer. Pairs are
// joined with '&'; a '&' is written first only when buf is non-empty and
// does not already end in '&' or '?'. A null value or an empty array/object
// appends nothing, and so does an error. Styles: form (explode true/false),
// spaceDelimited and pipeDelimited (explode false; explode true behaves
// like form), deepObject (nested objects color[a][b]=x, arrays by index
// color[a][0]=x).
func (s paramSpec) appendQuery(buf []byte, v any) ([]byte, error) {
	if v == nil {
		return buf, nil
	}
	if s.ContentType != "" {
		str, err := s.contentString(v)
		if err != nil {
			return buf, err
		}
		return encAppendPair(buf, s.Name, str, encStrict), nil
	}
	op := s.op()
	if s.Style == openapi3.SerializationDeepObject {
		switch v.(type) {
		case []any:
			return buf, errors.New("style deepObject cannot serialize an array")
		case map[string]any:
			key := encAppendEscaped(make([]byte, 0, 64), s.Name, encStrict)
			out, err := encAppendDeep(buf, key, v, op.mode)
			if err != nil {
				return buf, err
			}
			return out, nil
		}
	}
	sep := encAppendSep(buf)
	out, err := op.expand(sep, s.Name, v)
	if err != nil || len(out) == len(sep) {
		return buf, err // nothing written: drop the separator
	}
	return out, nil
}

// encAppendDeep writes deepObject pairs for v under the escaped key prefix
// (key is reused as scratch space for nested keys).
func encAppendDeep(buf, key []byte, v any, mode encMode) ([]byte, error) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range encSortedKeys(x) {
			sub := append(key, "%5B"...)
			sub = encAppendEscaped(sub, k, encStrict)
			sub = append(sub, "%5D"...)
			var err error
			if buf, err = encAppendDeep(buf, sub, x[k], mode); err != nil {
				return buf, err
			}
		}
		return buf, nil
	case []any:
		for i, item := range x {
			sub := append(key, "%5B"...)
			sub = strconv.AppendInt(sub, int64(i), 10)
			sub = append(sub, "%5D"...)
			if item == nil {
				item = ""
			}
			var err error
			if buf, err = encAppendDeep(buf, sub, item, mode); err != nil {
				return buf, err
			}
		}
		return buf, nil
	}
	str, err := encScalar(v)
	if err != nil {
		return buf, err
	}
	buf = encAppendSep(buf)
	buf = append(buf, key...)
	buf = append(buf, '=')
	return encAppendEscaped(buf, str, mode), nil
}

// headerValue serializes a header parameter (style simple, explode
// true/false, arrays and objects). Values are not percent-encoded. It
// returns "" for null and for empty arrays/objects: callers must then not
// send the header.
func (s paramSpec) headerValue(v any) (string, error) {
	var b []byte
	if s.ContentType != "" && v != nil {
		str, err := s.contentString(v)
		if err != nil {
			return "", err
		}
		b = []byte(str)
	} else {
		var err error
		if b, err = s.op().expand(nil, s.Name, v); err != nil {
			return "", err
		}
	}
	if bytes.ContainsFunc(b, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
		return "", errors.New("header value must not contain control characters")
	}
	return string(b), nil
}

// cookiePairs returns the cookie name=value pair(s) (style form; explode
// true/false) to join with "; ". Values are percent-encoded like form query
// values (RFC 6570), so they only hold unreserved characters, %XX and the
// ',' delimiter; `content` cookies are only escaped where RFC 6265 forbids a
// byte (and '%'). Null and empty arrays/objects give no pairs.
func (s paramSpec) cookiePairs(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	if s.ContentType != "" {
		str, err := s.contentString(v)
		if err != nil {
			return nil, err
		}
		return []string{string(encAppendPair(nil, s.Name, str, encCookie))}, nil
	}
	b, err := s.op().expand(nil, s.Name, v)
	if err != nil || len(b) == 0 {
		return nil, err
	}
	// Escaped names and values hold no ';' or ' ', so this split is exact.
	return strings.Split(string(b), "; "), nil
}

// encOp is an RFC 6570 expression operator as an OpenAPI style and
// location use it.
type encOp struct {
	style   string
	explode bool
	first   string  // written before the expansion: "", "." (label), ";" (matrix)
	sep     string  // between exploded members
	delim   string  // between the items of a non-exploded array or object
	named   bool    // members are name=value (matrix, form)
	ifemp   string  // after the name when the value is empty (";x" but "x=")
	mode    encMode // escaping of values and keys
	path    bool    // escape dot segments too
	raw     bool    // no escaping (headers)
}

func (s paramSpec) op() encOp {
	op := encOp{style: s.Style, explode: s.Explode, sep: ",", delim: ",", mode: encStrict}
	switch s.In {
	case paramInPath:
		op.path = true
		switch s.Style {
		case openapi3.SerializationLabel:
			op.first, op.sep, op.mode = ".", ".", encLabel
		case openapi3.SerializationMatrix:
			op.first, op.sep, op.named = ";", ";", true
		}
	case paramInQuery:
		op.sep, op.named, op.ifemp = "&", true, "="
		if s.AllowReserved {
			op.mode = encReserved
		}
		switch s.Style {
		case openapi3.SerializationSpaceDelimited:
			op.delim = "%20"
		case openapi3.SerializationPipeDelimited:
			op.delim = "%7C"
		}
	case paramInHeader:
		op.raw = true
	case paramInCookie:
		op.sep, op.named, op.ifemp = "; ", true, "="
	}
	return op
}

// expand appends the expansion of name=v (RFC 6570 section 3.2.1's
// algorithm, objects in sorted key order, null as undefined).
func (op encOp) expand(dst []byte, name string, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return dst, nil
	case []any:
		if len(x) == 0 {
			return dst, nil
		}
		dst = append(dst, op.first...)
		for i, item := range x {
			str, err := encItemString(item, op.style)
			if err != nil {
				return dst, err
			}
			switch {
			case op.explode:
				if i > 0 {
					dst = append(dst, op.sep...)
				}
				if op.named {
					dst = op.appendName(dst, name, str)
				}
			case i == 0:
				if op.named {
					dst = append(encAppendEscaped(dst, name, encStrict), '=')
				}
			default:
				dst = append(dst, op.delim...)
			}
			dst = op.escape(dst, str)
		}
		return dst, nil
	case map[string]any:
		keys := encSortedKeys(x)
		if len(keys) == 0 {
			return dst, nil
		}
		dst = append(dst, op.first...)
		if op.named && !op.explode {
			dst = append(encAppendEscaped(dst, name, encStrict), '=')
		}
		for i, k := range keys {
			str, err := encItemString(x[k], op.style)
			if err != nil {
				return dst, err
			}
			if i > 0 {
				if op.explode {
					dst = append(dst, op.sep...)
				} else {
					dst = append(dst, op.delim...)
				}
			}
			dst = op.escape(dst, k)
			switch {
			case !op.explode:
				dst = append(dst, op.delim...)
			case op.named && str == "":
				dst = append(dst, op.ifemp...)
				continue
			default:
				dst = append(dst, '=')
			}
			dst = op.escape(dst, str)
		}
		return dst, nil
	}
	str, err := encScalar(v)
	if err != nil {
		return dst, err
	}
	dst = append(dst, op.first...)
	if op.named {
		dst = op.appendName(dst, name, str)
	}
	return op.escape(dst, str), nil
}

// appendName writes name= (or name plus ifemp when the value is empty).
func (op encOp) appendName(dst []byte, name, value string) []byte {
	dst = encAppendEscaped(dst, name, encStrict)
	if value == "" {
		return append(dst, op.ifemp...)
	}
	return append(dst, '=')
}

func (op encOp) escape(dst []byte, s string) []byte {
	switch {
	case op.raw:
		return append(dst, s...)
	case op.path:
		return encAppendPathPart(dst, s, op.mode)
	}
	return encAppendEscaped(dst, s, op.mode)
}

// contentString encodes the value of a `content` parameter: JSON for JSON
// media types; for others (text/plain...) primitives as text and
// arrays/objects as JSON.
func (s paramSpec) contentString(v any) (string, error) {
	if !encIsJSONMedia(s.ContentType) {
		switch v.(type) {
		case []any, map[string]any:
		default:
			return encScalar(v)
		}
	}
	b, err := encJSON(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// encScalar formats a primitive: strings as-is, numbers without exponent,
// json.Number verbatim, booleans as true/false, null as "".
func encScalar(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("number %v cannot be serialized", x)
		}
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case float32:
		return encScalar(float64(x))
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case nil:
		return "", nil
	case []any, map[string]any:
		return "", errors.New("expected a primitive value, got an array or object")
	}
	return "", fmt.Errorf("unsupported value of type %T", v)
}

// encItemString formats an array item or object property value: it must be
// a primitive (nested arrays/objects need deepObject or `content`).
func encItemString(v any, style string) (string, error) {
	switch v.(type) {
	case []any, map[string]any:
		return "", fmt.Errorf("style %s cannot serialize nested arrays or objects", style)
	}
	return encScalar(v)
}

// encSortedKeys returns the keys of m whose values are not null, sorted.
func encSortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// encJSON is compact JSON without HTML escaping ('<' stays '<'), so upstreams
// receive the argument's text unchanged.
func encJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding JSON: %w", err)
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil // Encode appends '\n'
}

// encIsJSONMedia reports whether a media type (parameters allowed) is JSON:
// application/json, any +json, or any */json.
func encIsJSONMedia(ct string) bool {
	mt := encMediaType(ct)
	return strings.HasSuffix(mt, "/json") || strings.HasSuffix(mt, "+json")
}

// encMediaType lower-cases a media type and drops its parameters; it
// tolerates strings mime.ParseMediaType rejects.
func encMediaType(ct string) string {
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// encMode selects which bytes encAppendEscaped leaves literal.
type encMode uint8

const (
	encStrict   encMode = iota // RFC 3986 unreserved only
	encLabel                   // unreserved except '.', the label delimiter
	encReserved                // allowReserved: also :/?@!$'()*, and %XX triples
	encCookie                  // RFC 6265 cookie-octets except '%'
)

const encHex = "0123456789ABCDEF"

func encKeep(c byte, m encMode) bool {
	unreserved := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
	switch m {
	case encLabel:
		return unreserved && c != '.'
	case encReserved:
		// Reserved characters except those the query or form encoding
		// gives meaning to: '[' ']' '#' (not allowed in a query), '&' '='
		// '+' (form-urlencoded) and ';' (a legacy pair separator that Go's
		// url.ParseQuery rejects).
		return unreserved || strings.IndexByte(":/?@!$'()*,", c) >= 0
	case encCookie:
		return c == 0x21 || 0x23 <= c && c <= 0x2B && c != '%' || 0x2D <= c && c <= 0x3A ||
			0x3C <= c && c <= 0x5B || 0x5D <= c && c <= 0x7E
	}
	return unreserved
}

func encIsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// encAppendEscaped appends s percent-encoded per mode (UTF-8 bytes, upper
// case hex).
func encAppendEscaped(dst []byte, s string, m encMode) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if encKeep(c, m) || m == encReserved && c == '%' && i+2 < len(s) && encIsHex(s[i+1]) && encIsHex(s[i+2]) {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, '%', encHex[c>>4], encHex[c&15])
	}
	return dst
}

// encAppendPathPart escapes one path value. Dots are escaped too where
// they would form a dot segment, even for a server that decodes %2F or
// %5C before normalizing: a value made only of dots ("." is %2E, ".." is
// %2E%2E) and every all-dot run between '/' or '\\' ("../a" is
// %2E%2E%2Fa).
func encAppendPathPart(dst []byte, s string, m encMode) []byte {
	for len(s) > 0 {
		i := strings.IndexAny(s, "/\\")
		if i < 0 {
			i = len(s)
		} else {
			i++ // the separator itself is always escaped
		}
		run, rm := s[:i], m
		if strings.Trim(strings.TrimRight(run, "/\\"), ".") == "" {
			rm = encLabel
		}
		dst = encAppendEscaped(dst, run, rm)
		s = s[i:]
	}
	return dst
}

// encAppendSep writes '&' unless buf is empty or already ends a pair.
func encAppendSep(buf []byte) []byte {
	if n := len(buf); n > 0 && buf[n-1] != '&' && buf[n-1] != '?' {
		buf = append(buf, '&')
	}
	return buf
}

// encAppendPair writes [&]name=value with the name strictly escaped.
func encAppendPair(buf []byte, name, value string, m encMode) []byte {
	buf = encAppendSep(buf)
	buf = encAppendEscaped(buf, name, encStrict)
	buf = append(buf, '=')
	return encAppendEscaped(buf, value, m)
}

// paramIsToken reports whether s is an RFC 9110 token (header and cookie
// names).
func paramIsToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}
