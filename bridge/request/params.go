package request

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/mcpbridge/mcpbridge/bridge/media"
	"slices"
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
//     brackets %5B %5D (the 3.1.2 table). A literal delimiter inside a value
//     is escaped, so a server that splits before decoding sees each value
//     intact (one that decodes first, as kin-openapi does, cannot). An
//     escaped delimiter (%20, %7C, and %09, %20, %7C of Swagger 2.0 tsv, ssv
//     and pipes outside headers) is written just as the character in a
//     value is, so no server can split them: an item, key or value holding
//     it is an error naming the argument.
//   - allowReserved keeps :/?@!$'()*, and existing %XX triples literal, but
//     still escapes [ ] # (not allowed in a query), & = + (form syntax) and ;
//     (a legacy pair separator that Go's url.ParseQuery rejects).
//   - Path values cannot change the path's shape: '/', '\\', '?', '#', '%' and
//     ';' are escaped; '.' is escaped in label values (the label delimiter),
//     in all-dot values and all-dot runs between slashes ("../a" becomes
//     %2E%2E%2Fa, safe even for servers that decode %2F first), and when the
//     whole result would be a dot segment (label of "" is %2E). An empty
//     result is an error: "/pets/" would replace "/pets/{id}".
//   - Headers are not percent-encoded: OAS 3.1.2 and 3.2.0 say "URI
//     percent-encoding MUST NOT be applied" to headers serialized with
//     `schema`, so a ',' or '=' inside an item or member reads like a
//     delimiter (values that need escaping come escaped, as the spec
//     puts it). Control characters other than tab are rejected.
//   - null means "not sent": query and cookie parameters write nothing and
//     headerValue returns "" (the caller skips the header); a null path value
//     is an error. Empty arrays and objects are RFC 6570 "undefined" and act
//     like null. A null array item is the empty string (positions are kept);
//     a null object property is skipped.
//   - Object properties are written in sorted key order (decoded JSON has
//     none), so {"R":100,"G":200,"B":150} reads B,150,G,200,R,100.
//   - Primitives: strings as-is, float64 without exponent (3, not 3e+00;
//     strconv 'f', -1), json.Number verbatim, true/false.
//   - Nested values (arrays and objects inside arrays and objects, and
//     deepObject arrays), which no style defines, follow the spec's
//     [NestedStyle] in query parameters: brackets by default
//     (color[a][0][b]=x, which kin-openapi decodes for deepObject objects),
//     brackets-empty, dots or json. In path, header and cookie values a
//     value that nests is written as its JSON text, as a primitive would be.
//     `content` parameters are JSON text (JSON media types) or plain text
//     (others; an object or array is an XML element for XML types, JSON
//     text for the rest), then serialized as a primitive.
//   - Combinations the table marks n/a are written leniently rather than
//     failing every call: a primitive with spaceDelimited, pipeDelimited or
//     deepObject is written as form (name=value); spaceDelimited and
//     pipeDelimited with explode=true act like form with explode=true;
//     deepObject ignores explode, and writes arrays by the nested style
//     (color[0]=x).
//   - Swagger 2.0 collectionFormat: the loader gives a converted array the
//     style that writes it (csv form or simple, ssv spaceDelimited, pipes
//     pipeDelimited, multi form exploded) and, where none does (tsv; ssv and
//     pipes in a path or header; arrays nested in items), marks it with
//     [CollectionFormatExtension]: its items are joined by the format's
//     delimiter (',', ' ', tab, '|'; escaped but for ',', except in
//     headers) and nested arrays by theirs ([ParamSpec.Delims]).
//   - allowSlashes (a whitelist setting, [Options.AllowSlashes]) lets a
//     simple path value hold '/': each segment is escaped as above, then
//     joined with '/'; empty, "." and ".." segments are errors.

// Location is where an OpenAPI parameter goes.
type Location string

// The four OpenAPI 3.0/3.1 parameter locations.
const (
	InPath   Location = openapi3.ParameterInPath
	InQuery  Location = openapi3.ParameterInQuery
	InHeader Location = openapi3.ParameterInHeader
	InCookie Location = openapi3.ParameterInCookie
)

// ParamSpec is the precompiled serialization plan for one parameter, built
// once at startup by NewParamSpec (a literal must set the resolved Style and
// Explode itself).
type ParamSpec struct {
	Name          string      // name on the wire
	In            Location    // path, query, header or cookie
	Style         string      // resolved style (defaults applied: path/header "simple", query/cookie "form")
	Explode       bool        // resolved explode (default true for form, false otherwise; always true for deepObject)
	AllowReserved bool        // query only: RFC 3986 reserved characters pass unescaped
	ContentType   string      // non-empty for `content` parameters: the value is encoded per this media type, then serialized as a primitive
	Nested        NestedStyle // query only: the convention for nested values; "" means NestedBrackets
	AllowSlashes  bool        // path only (style simple): '/' separates segments escaped one by one
	XML           *XMLNode    // XML ContentType: the shape an object or array value is written in (named by xml.name, else Name)
	// Delims, set from [CollectionFormatExtension] for a Swagger 2.0 array
	// (collectionFormat), are the delimiters of its items (Delims[0], in
	// place of the style's) and of the items of arrays nested in it
	// (Delims[1] one level down, and so on): ',' csv, ' ' ssv, '\t' tsv,
	// '|' pipes. Nested arrays it covers are joined so, not written as
	// [NestedStyle] or JSON says. "" means the style decides.
	Delims string
}

// NewParamSpec builds a ParamSpec from a kin-openapi parameter, applying the
// OpenAPI defaults and o. It returns an error for a missing name, an unknown
// location, a header or cookie name that is not an RFC 9110 token, a style
// the location does not allow (path: simple, label, matrix; query: form,
// spaceDelimited, pipeDelimited, deepObject; header: simple; cookie: form),
// an unknown nested style, a [CollectionFormatExtension] that is not a
// list of formats, and AllowSlashes for anything but a path parameter of
// style simple. Style and the extension are not checked for `content`
// parameters, which ignore them.
func NewParamSpec(p *openapi3.Parameter, o Options) (ParamSpec, error) {
	if p == nil {
		return ParamSpec{}, errors.New("parameter is nil")
	}
	if p.Name == "" {
		return ParamSpec{}, errors.New("parameter has no name")
	}
	s := ParamSpec{Name: p.Name, In: Location(p.In)}
	var allowed []string
	switch s.In {
	case InPath:
		allowed = []string{openapi3.SerializationSimple, openapi3.SerializationLabel, openapi3.SerializationMatrix}
	case InQuery:
		allowed = []string{openapi3.SerializationForm, openapi3.SerializationSpaceDelimited, openapi3.SerializationPipeDelimited, openapi3.SerializationDeepObject}
	case InHeader:
		allowed = []string{openapi3.SerializationSimple}
	case InCookie:
		allowed = []string{openapi3.SerializationForm}
	default:
		return ParamSpec{}, fmt.Errorf("unsupported location %q", p.In)
	}
	if (s.In == InHeader || s.In == InCookie) && !isToken(p.Name) {
		return ParamSpec{}, fmt.Errorf("%q is not a valid %s name", p.Name, p.In)
	}
	sm, err := p.SerializationMethod()
	if err != nil {
		return ParamSpec{}, err
	}
	s.Style, s.Explode = sm.Style, sm.Explode
	s.AllowReserved = p.AllowReserved && s.In == InQuery
	if o.Nested != "" {
		if _, err := ParseNestedStyle(string(o.Nested)); err != nil {
			return ParamSpec{}, err
		}
		if s.In == InQuery {
			s.Nested = o.Nested
		}
	}
	if o.AllowSlashes {
		if s.In != InPath || len(p.Content) > 0 || s.Style != openapi3.SerializationSimple {
			return ParamSpec{}, errors.New("allowSlashes needs a path parameter of style simple (without content)")
		}
		s.AllowSlashes = true
	}
	if len(p.Content) > 0 {
		s.ContentType = pickContent(p.Content)
		s.XML = contentXML(s.ContentType, p.Content[s.ContentType], p.Name)
		s.Style, s.Explode = allowed[0], s.In == InQuery || s.In == InCookie
		return s, nil
	}
	if s.Delims, err = collectionDelims(p.Extensions); err != nil {
		return ParamSpec{}, err
	}
	if !slices.Contains(allowed, s.Style) {
		return ParamSpec{}, fmt.Errorf("style %q is not allowed in %s (allowed: %s)",
			s.Style, s.In, strings.Join(allowed, ", "))
	}
	if s.Style == openapi3.SerializationDeepObject {
		// explode=false is undefined for deepObject, yet it is the declared
		// default, so real specs omit it: deepObject is always exploded.
		s.Explode = true
	}
	return s, nil
}

// pickContent chooses the media type of a `content` parameter. The
// spec allows exactly one; with several, a JSON one wins, then the first in
// sorted order.
func pickContent(c openapi3.Content) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if media.IsJSON(k) {
			return k
		}
	}
	return keys[0]
}

// encodePath returns the serialized, percent-escaped value to substitute for
// {name} in a path template (already escaped: it goes into URL.RawPath).
// Styles simple, label and matrix, with explode, per the OpenAPI table; a
// value that nests is its JSON text; with AllowSlashes a primitive may
// hold '/' between segments.
// The value cannot change the path's shape (see the notes above); null and
// empty results are errors.
func (s ParamSpec) encodePath(v any) (string, error) {
	if v == nil {
		return "", errors.New("path parameter must not be null")
	}
	var b []byte
	switch v.(type) {
	case []any, map[string]any:
	default:
		if s.AllowSlashes && s.ContentType == "" {
			str, err := scalarString(v)
			if err != nil {
				return "", err
			}
			b, err := appendSlashPath(nil, str)
			return string(b), err
		}
	}
	if s.ContentType != "" {
		str, err := s.contentString(v)
		if err != nil {
			return "", err
		}
		b = appendPathPart(nil, str, escStrict)
	} else {
		v, err := s.flatten(v)
		if err != nil {
			return "", err
		}
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
		b = appendEscaped(nil, string(b), escLabel)
	}
	return string(b), nil
}

// appendQuery appends the serialized query pair(s) for the value to a raw
// (already escaped) query string and returns the extended buffer. Pairs are
// joined with '&'; a '&' is written first only when buf is non-empty and
// does not already end in '&' or '?'. A null value or an empty array/object
// appends nothing, and so does an error. Styles: form (explode true/false),
// spaceDelimited and pipeDelimited (explode false; explode true behaves
// like form), deepObject (color[a]=x). Values that nest, and deepObject
// arrays, follow s.Nested (see [NestedStyle]).
func (s ParamSpec) appendQuery(buf []byte, v any) ([]byte, error) {
	return s.appendQueryLimit(buf, v, 0)
}

// appendQueryLimit is appendQuery failing with a TooLargeError once a
// nested value has taken buf past limit bytes (0: no limit).
func (s ParamSpec) appendQueryLimit(buf []byte, v any, limit int) ([]byte, error) {
	if v == nil {
		return buf, nil
	}
	if s.ContentType != "" {
		str, err := s.contentString(v)
		if err != nil {
			return buf, err
		}
		return appendPair(buf, s.Name, str, escStrict), nil
	}
	op := s.op()
	composite := false
	switch v.(type) {
	case []any, map[string]any:
		composite = true
	}
	if composite && (s.Style == openapi3.SerializationDeepObject || !s.joins(v) && nests(v)) {
		out, err := s.appendNestedQuery(buf, v, op, limit)
		if err != nil {
			return buf, err
		}
		return out, nil
	}
	sep := appendSep(buf)
	out, err := op.expand(sep, s.Name, v)
	if err != nil || len(out) == len(sep) {
		return buf, err // nothing written: drop the separator
	}
	return out, nil
}

// headerValue serializes a header parameter (style simple, explode
// true/false, arrays and objects; a value that nests is its JSON text).
// Values are not percent-encoded. It
// returns "" for null and for empty arrays/objects: callers must then not
// send the header.
func (s ParamSpec) headerValue(v any) (string, error) {
	var b []byte
	if s.ContentType != "" && v != nil {
		str, err := s.contentString(v)
		if err != nil {
			return "", err
		}
		b = []byte(str)
	} else {
		v, err := s.flatten(v)
		if err != nil {
			return "", err
		}
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
// ',' delimiter (a value that nests is its JSON text, escaped so);
// `content` cookies are only escaped where RFC 6265 forbids a byte (and
// '%'). Null and empty arrays/objects give no pairs.
func (s ParamSpec) cookiePairs(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	if s.ContentType != "" {
		str, err := s.contentString(v)
		if err != nil {
			return nil, err
		}
		return []string{string(appendPair(nil, s.Name, str, escCookie))}, nil
	}
	v, err := s.flatten(v)
	if err != nil {
		return nil, err
	}
	b, err := s.op().expand(nil, s.Name, v)
	if err != nil || len(b) == 0 {
		return nil, err
	}
	// Escaped names and values hold no ';' or ' ', so this split is exact.
	return strings.Split(string(b), "; "), nil
}
