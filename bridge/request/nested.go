package request

// Nested values: arrays and objects inside the arrays and objects of a
// query parameter, form field or multipart text field, which OpenAPI's
// styles leave undefined, written by a convention servers read.

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// NestedStyle is the convention for a value that nests (an array or object
// holding arrays or objects) in a query parameter, a form-urlencoded field
// or a multipart text field whose Encoding Object sets a style, and for
// deepObject arrays. OpenAPI defines none; servers read one of these. The
// zero value "" means [NestedBrackets].
//
// The convention takes over at the same point whatever its kind: at the
// whole value for an array or a non-exploded object, at each property of
// an exploded (form) object, and below the first level of a deepObject
// (name[key], which deepObject defines itself). Keys and array indexes are
// then written as the convention says, and each primitive at the end of a
// key is one name=value pair; [NestedJSON] writes the value found there as
// one JSON string instead (written as given inside: nulls and empty arrays
// and objects included). Otherwise null properties, null values and empty
// arrays and objects write nothing, and a null array item is the empty
// string (its position is kept).
type NestedStyle string

// The nested styles. Examples are for items=[{"price":"p1","tax":["t1"]}]
// and expand=["a"] (form style), unescaped for reading; on the wire,
// brackets in a query or form body are %5B and %5D.
const (
	// NestedBrackets writes keys in brackets and arrays by index from 0:
	// items[0][price]=p1&items[0][tax][0]=t1, expand=a (a form array of
	// primitives does not nest), deepObject expand[0]=a. Rails, Rack, PHP,
	// Express (qs) and Stripe read it. The default.
	NestedBrackets NestedStyle = "brackets"
	// NestedBracketsEmpty is NestedBrackets with empty brackets for
	// arrays of primitives: items[0][price]=p1&items[0][tax][]=t1,
	// deepObject expand[]=a. Arrays holding arrays or objects keep their
	// indexes, which "a[][k]" would lose.
	NestedBracketsEmpty NestedStyle = "brackets-empty"
	// NestedDots joins keys with dots and numbers arrays from 1, as the
	// AWS query protocol does: items.1.price=p1&items.1.tax.1=t1. A '.'
	// inside an object key is escaped (%2E); deepObject keeps its own
	// first level: filter[a].1=x.
	NestedDots NestedStyle = "dots"
	// NestedJSON writes the nested value as one JSON string:
	// items=[{"price":"p1","tax":["t1"]}].
	NestedJSON NestedStyle = "json"
)

// NestedStyles lists the nested styles, default first.
func NestedStyles() []NestedStyle {
	return []NestedStyle{NestedBrackets, NestedBracketsEmpty, NestedDots, NestedJSON}
}

// ParseNestedStyle checks a nested style name ("" gives NestedBrackets).
func ParseNestedStyle(s string) (NestedStyle, error) {
	if s == "" {
		return NestedBrackets, nil
	}
	for _, n := range NestedStyles() {
		if string(n) == s {
			return n, nil
		}
	}
	return "", fmt.Errorf("nested style %q: want brackets, brackets-empty, dots or json", s)
}

// Options tunes [NewParamSpec] and [NewBody]. The zero value gives the
// defaults.
type Options struct {
	// Nested is the convention for nested values (query parameters, form
	// and multipart fields); "" means NestedBrackets. Path, header and
	// cookie values that nest are JSON text whatever it says.
	Nested NestedStyle
	// AllowSlashes lets a path parameter (style simple) hold a path: its
	// value is split at '/', each segment escaped on its own, and the
	// segments joined with '/'; empty, "." and ".." segments are refused.
	// False (the default) escapes '/' like any other byte, so the value is
	// one segment. NewParamSpec refuses it for other parameters;
	// NewBody ignores it.
	AllowSlashes bool
}

// nestedWriter appends the query pairs (or form fields) of a nested value:
// keys as the style says, primitive values escaped with mode. Object keys
// are strictly escaped, '.' too under NestedDots (see keyMode).
type nestedWriter struct {
	style NestedStyle
	mode  escMode
	limit int // the buffer's cap in bytes (0: none): see TooLargeError
}

// append writes the pairs of v under key (escaped; it is reused as scratch
// space for the keys below it, so it must not share buf's array).
func (w nestedWriter) append(buf, key []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return buf, nil
	case map[string]any:
		if len(sortedKeys(x)) == 0 {
			return buf, nil
		}
		if w.style == NestedJSON {
			return w.appendJSON(buf, key, v)
		}
		for _, k := range sortedKeys(x) {
			var err error
			if buf, err = w.append(buf, w.appendKey(key, k), x[k]); err != nil {
				return buf, err
			}
		}
		return buf, nil
	case []any:
		if len(x) == 0 {
			return buf, nil
		}
		if w.style == NestedJSON {
			return w.appendJSON(buf, key, v)
		}
		empty := w.style == NestedBracketsEmpty && !hasComposite(x)
		for i, item := range x {
			if item == nil {
				item = ""
			}
			var err error
			if buf, err = w.append(buf, w.appendIndex(key, i, empty), item); err != nil {
				return buf, err
			}
		}
		return buf, nil
	}
	str, err := scalarString(v)
	if err != nil {
		return buf, err
	}
	return w.checked(appendKeyValue(buf, key, str, w.mode))
}

func (w nestedWriter) appendJSON(buf, key []byte, v any) ([]byte, error) {
	data, err := compactJSON(v)
	if err != nil {
		return buf, err
	}
	return w.checked(appendKeyValue(buf, key, string(data), w.mode))
}

// checked fails once buf has passed the writer's limit, so that a value
// stops being written there rather than when it is whole.
func (w nestedWriter) checked(buf []byte) ([]byte, error) {
	if overLimit(len(buf), w.limit) {
		return buf, &TooLargeError{What: "query string", Limit: w.limit}
	}
	return buf, nil
}

// appendKey extends key with an object key: [k] or .k.
func (w nestedWriter) appendKey(key []byte, k string) []byte {
	if w.style == NestedDots {
		return appendEscaped(append(key, '.'), k, escLabel)
	}
	key = appendEscaped(append(key, "%5B"...), k, escStrict)
	return append(key, "%5D"...)
}

// keyMode escapes object keys: a '.' in a key is a delimiter to a server
// reading dots, so it is escaped there (the parameter name never is).
func (w nestedWriter) keyMode() escMode {
	if w.style == NestedDots {
		return escLabel
	}
	return escStrict
}

// appendIndex extends key with an array index: [i], [] or .(i+1).
func (w nestedWriter) appendIndex(key []byte, i int, empty bool) []byte {
	switch {
	case w.style == NestedDots:
		return strconv.AppendInt(append(key, '.'), int64(i)+1, 10)
	case empty:
		return append(key, "%5B%5D"...)
	}
	key = strconv.AppendInt(append(key, "%5B"...), int64(i), 10)
	return append(key, "%5D"...)
}

// appendKeyValue writes [&]key=value with key already escaped.
func appendKeyValue(buf, key []byte, value string, mode escMode) []byte {
	buf = appendSep(buf)
	buf = append(buf, key...)
	buf = append(buf, '=')
	return appendEscaped(buf, value, mode)
}

// appendNestedQuery writes a query (or form) value that nests, or any
// deepObject value that is an array or object; see [NestedStyle] for where
// the convention takes over.
func (s ParamSpec) appendNestedQuery(buf []byte, v any, op styleOp, limit int) ([]byte, error) {
	w := nestedWriter{style: s.Nested, mode: op.mode, limit: limit}
	name := appendEscaped(make([]byte, 0, 64), s.Name, escStrict)
	obj, isObj := v.(map[string]any)
	switch {
	case isObj && s.Style == openapi3.SerializationDeepObject:
		for _, k := range sortedKeys(obj) {
			key := appendEscaped(append(name, "%5B"...), k, w.keyMode())
			key = append(key, "%5D"...)
			var err error
			if buf, err = w.append(buf, key, obj[k]); err != nil {
				return buf, err
			}
		}
		return buf, nil
	case isObj && s.Explode:
		// form (and spaceDelimited, pipeDelimited acting as form) explode:
		// each property is a pair of its own, named by its key.
		for _, k := range sortedKeys(obj) {
			var err error
			if buf, err = w.append(buf, appendEscaped(name[:0], k, w.keyMode()), obj[k]); err != nil {
				return buf, err
			}
		}
		return buf, nil
	}
	return w.append(buf, name, v)
}

// nests reports whether an array or object holds an array or object (a
// null or primitive value does not nest).
func nests(v any) bool {
	switch x := v.(type) {
	case []any:
		return hasComposite(x)
	case map[string]any:
		for _, e := range x {
			switch e.(type) {
			case []any, map[string]any:
				return true
			}
		}
	}
	return false
}

func hasComposite(items []any) bool {
	for _, e := range items {
		switch e.(type) {
		case []any, map[string]any:
			return true
		}
	}
	return false
}

// nestedAsJSON replaces a path, header or cookie value that nests by its
// JSON text, which the style then writes as a primitive.
func nestedAsJSON(v any) (any, error) {
	if !nests(v) {
		return v, nil
	}
	data, err := compactJSON(v)
	if err != nil {
		return nil, err
	}
	return string(data), nil
}

// appendSlashPath escapes a path value that may hold '/': each segment is
// escaped as one path value would be (so "..." and "a\\.." cannot act as
// dot segments either), then joined with '/'. Empty, "." and ".." segments
// are errors: they would change the path's shape once normalized.
func appendSlashPath(dst []byte, s string) ([]byte, error) {
	if s == "" {
		return dst, errors.New("path parameter must not serialize to an empty segment")
	}
	for i, seg := range strings.Split(s, "/") {
		switch seg {
		case "":
			return dst, errors.New("path must not have empty segments (a leading, trailing or doubled '/')")
		case ".", "..":
			return dst, errors.New(`path must not have "." or ".." segments`)
		}
		if i > 0 {
			dst = append(dst, '/')
		}
		dst = appendPathPart(dst, seg, escStrict)
	}
	return dst, nil
}
