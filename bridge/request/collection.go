package request

// Swagger 2.0 collections: array parameters and form properties whose
// collectionFormat no OpenAPI 3 style expresses (tsv; ssv and pipes in a
// path or a header; arrays nested in `items`), marked by the loader that
// converts the spec (specloader) with CollectionFormatExtension.

import (
	"fmt"
	"strings"
)

// CollectionFormatExtension is the extension of a parameter or an Encoding
// Object that lists, comma-separated, the Swagger 2.0 collectionFormat of
// an array and of each level of arrays nested in it ("tsv", "multi,pipes"),
// when its style cannot say them. specloader writes it when it converts a
// Swagger 2.0 document (its CollectionFormatExtension is this name).
const CollectionFormatExtension = "x-mcpbridge-collection-format"

// collectionDelims reads CollectionFormatExtension from a parameter's or
// Encoding Object's extensions into the delimiters of [ParamSpec.Delims]:
// "" when it is absent, an error when it is not a list of csv, ssv, tsv,
// pipes or multi (which is csv where explode does not apply: the style,
// form with explode, then repeats the name instead).
func collectionDelims(ext map[string]any) (string, error) {
	v, ok := ext[CollectionFormatExtension]
	if !ok {
		return "", nil
	}
	list, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string, not %T", CollectionFormatExtension, v)
	}
	d := make([]byte, 0, 4)
	for f := range strings.SplitSeq(list, ",") {
		switch strings.TrimSpace(f) {
		case "csv", "multi":
			d = append(d, ',')
		case "ssv":
			d = append(d, ' ')
		case "tsv":
			d = append(d, '\t')
		case "pipes":
			d = append(d, '|')
		default:
			return "", fmt.Errorf("%s %q: want csv, ssv, tsv, pipes or multi, comma-separated", CollectionFormatExtension, list)
		}
	}
	return string(d), nil
}

// delimText is how a collection delimiter is written: as it is in a header
// (raw), else percent-encoded, but for the comma that the styles write
// literally too.
func delimText(c byte, raw bool) string {
	switch c {
	case ' ':
		if raw {
			return " "
		}
		return "%20"
	case '\t':
		if raw {
			return "\t"
		}
		return "%09"
	case '|':
		if raw {
			return "|"
		}
		return "%7C"
	}
	return ","
}

// joins reports whether v is an array whose nested arrays s.Delims join
// (a Swagger 2.0 collection of collections), holding no object, rather
// than a value that nests.
func (s ParamSpec) joins(v any) bool {
	if len(s.Delims) < 2 {
		return false
	}
	arr, ok := v.([]any)
	if !ok {
		return false
	}
	for _, item := range arr {
		if _, ok := item.(map[string]any); ok {
			return false
		}
	}
	return true
}

// flatten is the value a path, header or cookie style writes: v, or its
// JSON text when it nests (nestedAsJSON) but for the collections s.Delims
// join.
func (s ParamSpec) flatten(v any) (any, error) {
	if s.joins(v) {
		return v, nil
	}
	return nestedAsJSON(v)
}

// appendJoined writes the items of an array nested in a collection, joined
// by delims[0] (written as the location needs), and those of the arrays in
// it by delims[1:]; deeper arrays are an error, as in any style.
func (op styleOp) appendJoined(dst []byte, items []any, delims string) ([]byte, error) {
	d := delimText(delims[0], op.raw)
	for i, item := range items {
		if i > 0 {
			dst = append(dst, d...)
		}
		if sub, ok := item.([]any); ok && len(delims) > 1 {
			var err error
			if dst, err = op.appendJoined(dst, sub, delims[1:]); err != nil {
				return dst, err
			}
			continue
		}
		str, err := itemString(item, op.style)
		if err != nil {
			return dst, err
		}
		if !op.raw && delims[0] != ',' && strings.IndexByte(str, delims[0]) >= 0 {
			return dst, fmt.Errorf("%q holds %q, the delimiter between items, which is written encoded exactly like the character in a value (%s), so the upstream would read it as two: send values without it", str, string(delims[0]), d)
		}
		dst = op.escape(dst, str)
	}
	return dst, nil
}
