package request

// Value expansion for parameters (RFC 6570 operators as OpenAPI styles),
// primitive formatting and percent-escaping.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpbridge/mcpbridge/bridge/media"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// styleOp is an RFC 6570 expression operator as an OpenAPI style and
// location use it.
type styleOp struct {
	style   string
	explode bool
	first   string  // written before the expansion: "", "." (label), ";" (matrix)
	sep     string  // between exploded members
	delim   string  // between the items of a non-exploded array or object
	named   bool    // members are name=value (matrix, form)
	ifemp   string  // after the name when the value is empty (";x" but "x=")
	mode    escMode // escaping of values and keys
	path    bool    // escape dot segments too
	raw     bool    // no escaping (headers)
	inner   string  // delimiters of nested arrays, outermost first (ParamSpec.Delims[1:])
	// split is the byte delim stands for when it is written escaped, as
	// that byte inside a value is (%20, %09, %7C): a value holding it
	// cannot be told from two, so it is an error. 0: none.
	split byte
}

func (s ParamSpec) op() styleOp {
	op := styleOp{style: s.Style, explode: s.Explode, sep: ",", delim: ",", mode: escStrict}
	switch s.In {
	case InPath:
		op.path = true
		switch s.Style {
		case openapi3.SerializationLabel:
			op.first, op.sep, op.mode = ".", ".", escLabel
		case openapi3.SerializationMatrix:
			op.first, op.sep, op.named = ";", ";", true
		}
	case InQuery:
		op.sep, op.named, op.ifemp = "&", true, "="
		if s.AllowReserved {
			op.mode = escReserved
		}
		switch s.Style {
		case openapi3.SerializationSpaceDelimited:
			op.delim, op.split = "%20", ' '
		case openapi3.SerializationPipeDelimited:
			op.delim, op.split = "%7C", '|'
		}
	case InHeader:
		op.raw = true
	case InCookie:
		op.sep, op.named, op.ifemp = "; ", true, "="
	}
	if s.Delims != "" {
		op.delim, op.inner, op.split = delimText(s.Delims[0], op.raw), s.Delims[1:], 0
		if !op.raw && s.Delims[0] != ',' {
			op.split = s.Delims[0]
		}
	}
	return op
}

// expand appends the expansion of name=v (RFC 6570 section 3.2.1's
// algorithm, objects in sorted key order, null as undefined).
func (op styleOp) expand(dst []byte, name string, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return dst, nil
	case []any:
		if len(x) == 0 {
			return dst, nil
		}
		dst = append(dst, op.first...)
		for i, item := range x {
			var sub []any // a nested array the collection's delimiters join
			joined := false
			if op.inner != "" {
				sub, joined = item.([]any)
			}
			var str string
			if !joined {
				var err error
				if str, err = itemString(item, op.style); err != nil {
					return dst, err
				}
			}
			switch {
			case op.explode:
				if i > 0 {
					dst = append(dst, op.sep...)
				}
				switch {
				case joined && op.named:
					dst = append(appendEscaped(dst, name, escStrict), '=')
				case op.named:
					dst = op.appendName(dst, name, str)
				}
			case i == 0:
				if op.named {
					dst = append(appendEscaped(dst, name, escStrict), '=')
				}
			default:
				dst = append(dst, op.delim...)
			}
			if !op.explode && !joined {
				if err := op.checkSplit(str); err != nil {
					return dst, err
				}
			}
			if joined {
				var err error
				if dst, err = op.appendJoined(dst, sub, op.inner); err != nil {
					return dst, err
				}
				continue
			}
			dst = op.escape(dst, str)
		}
		return dst, nil
	case map[string]any:
		keys := sortedKeys(x)
		if len(keys) == 0 {
			return dst, nil
		}
		dst = append(dst, op.first...)
		if op.named && !op.explode {
			dst = append(appendEscaped(dst, name, escStrict), '=')
		}
		for i, k := range keys {
			str, err := itemString(x[k], op.style)
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
			if !op.explode {
				if err := errors.Join(op.checkSplit(k), op.checkSplit(str)); err != nil {
					return dst, err
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
	str, err := scalarString(v)
	if err != nil {
		return dst, err
	}
	dst = append(dst, op.first...)
	if op.named {
		dst = op.appendName(dst, name, str)
	}
	return op.escape(dst, str), nil
}

// checkSplit refuses a value holding the byte that op.delim stands for
// when that delimiter is written escaped just like the byte is (see
// styleOp.split): the upstream would read it as two values.
func (op styleOp) checkSplit(str string) error {
	if op.split == 0 || strings.IndexByte(str, op.split) < 0 {
		return nil
	}
	return fmt.Errorf("%q holds %q, the delimiter between items, which this style writes encoded exactly like the character in a value (%s), so the upstream would read it as two: send values without it", str, string(op.split), op.delim)
}

// appendName writes name= (or name plus ifemp when the value is empty).
func (op styleOp) appendName(dst []byte, name, value string) []byte {
	dst = appendEscaped(dst, name, escStrict)
	if value == "" {
		return append(dst, op.ifemp...)
	}
	return append(dst, '=')
}

func (op styleOp) escape(dst []byte, s string) []byte {
	switch {
	case op.raw:
		return append(dst, s...)
	case op.path:
		return appendPathPart(dst, s, op.mode)
	}
	return appendEscaped(dst, s, op.mode)
}

// contentString encodes the value of a `content` parameter: JSON for JSON
// media types; for others (text/plain...) primitives as text and
// arrays/objects as an XML element for XML types (see ParamSpec.XML), else
// as JSON.
func (s ParamSpec) contentString(v any) (string, error) {
	if !media.IsJSON(s.ContentType) {
		switch v.(type) {
		case []any, map[string]any:
			if s.XML != nil {
				b, err := encodeXMLElement(s.XML, v)
				return string(b), err
			}
		default:
			return scalarString(v)
		}
	}
	b, err := compactJSON(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// scalarString formats a primitive: strings as-is, numbers without exponent,
// json.Number verbatim, booleans as true/false, null as "".
func scalarString(v any) (string, error) {
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
		return scalarString(float64(x))
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

// itemString formats an array item or object property value: it must be
// a primitive (nested arrays/objects need deepObject or `content`).
func itemString(v any, style string) (string, error) {
	switch v.(type) {
	case []any, map[string]any:
		return "", fmt.Errorf("style %s cannot serialize nested arrays or objects", style)
	}
	return scalarString(v)
}

// sortedKeys returns the keys of m whose values are not null, sorted.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if v != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// compactJSON is compact JSON without HTML escaping ('<' stays '<'), so upstreams
// receive the argument's text unchanged.
func compactJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encoding JSON: %w", err)
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil // Encode appends '\n'
}

// escMode selects which bytes appendEscaped leaves literal.
type escMode uint8

const (
	escStrict   escMode = iota // RFC 3986 unreserved only
	escLabel                   // unreserved except '.', the label delimiter
	escReserved                // allowReserved: also :/?@!$'()*, and %XX triples
	escCookie                  // RFC 6265 cookie-octets except '%'
)

const upperHex = "0123456789ABCDEF"

func keepLiteral(c byte, m escMode) bool {
	unreserved := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
	switch m {
	case escLabel:
		return unreserved && c != '.'
	case escReserved:
		// Reserved characters except those the query or form encoding
		// gives meaning to: '[' ']' '#' (not allowed in a query), '&' '='
		// '+' (form-urlencoded) and ';' (a legacy pair separator that Go's
		// url.ParseQuery rejects).
		return unreserved || strings.IndexByte(":/?@!$'()*,", c) >= 0
	case escCookie:
		return c == 0x21 || 0x23 <= c && c <= 0x2B && c != '%' || 0x2D <= c && c <= 0x3A ||
			0x3C <= c && c <= 0x5B || 0x5D <= c && c <= 0x7E
	}
	return unreserved
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// appendEscaped appends s percent-encoded per mode (UTF-8 bytes, upper
// case hex).
func appendEscaped(dst []byte, s string, m escMode) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if keepLiteral(c, m) || m == escReserved && c == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
			dst = append(dst, c)
			continue
		}
		dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
	}
	return dst
}

// appendPathPart escapes one path value. Dots are escaped too where
// they would form a dot segment, even for a server that decodes %2F or
// %5C before normalizing: a value made only of dots ("." is %2E, ".." is
// %2E%2E) and every all-dot run between '/' or '\\' ("../a" is
// %2E%2E%2Fa).
func appendPathPart(dst []byte, s string, m escMode) []byte {
	for len(s) > 0 {
		i := strings.IndexAny(s, "/\\")
		if i < 0 {
			i = len(s)
		} else {
			i++ // the separator itself is always escaped
		}
		run, rm := s[:i], m
		if strings.Trim(strings.TrimRight(run, "/\\"), ".") == "" {
			rm = escLabel
		}
		dst = appendEscaped(dst, run, rm)
		s = s[i:]
	}
	return dst
}

// appendSep writes '&' unless buf is empty or already ends a pair.
func appendSep(buf []byte) []byte {
	if n := len(buf); n > 0 && buf[n-1] != '&' && buf[n-1] != '?' {
		buf = append(buf, '&')
	}
	return buf
}

// appendPair writes [&]name=value with the name strictly escaped.
func appendPair(buf []byte, name, value string, m escMode) []byte {
	buf = appendSep(buf)
	buf = appendEscaped(buf, name, escStrict)
	buf = append(buf, '=')
	return appendEscaped(buf, value, m)
}

// isToken reports whether s is an RFC 9110 token (header and cookie
// names).
func isToken(s string) bool {
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

// AppendQueryPair writes [&]name=value with both strictly escaped, as
// parameter values are (a fixed query in a path key, for example).
func AppendQueryPair(buf []byte, name, value string) []byte {
	return appendPair(buf, name, value, escStrict)
}
