package schema

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// coerceMaxDepth bounds how deep Coerce follows a value.
const coerceMaxDepth = 32

// Coerce converts, in place, the strings of the tool arguments v that
// obviously stand for what the schema root asks at their place: "1" or
// "-2.5" where an integer or a number is wanted, "true" or "false" where a
// boolean is. Agents often send query-like values as strings; the upstream
// would get the same bytes for a query parameter, and a JSON body gets the
// typed value. Only properties, array items and $defs references are
// followed (not alternatives, whose intent is ambiguous), and a string is
// left alone wherever the schema also admits a string. It reports whether
// anything changed; the caller validates again.
func Coerce(v any, root *jsonschema.Schema) bool {
	if root == nil {
		return false
	}
	k := &checker{defs: root.Defs}
	_, changed := k.coerce(v, root, 0)
	return changed
}

// coerce returns v, or the value a string becomes, and whether anything
// changed at or below v.
func (k *checker) coerce(v any, s *jsonschema.Schema, depth int) (any, bool) {
	if s == nil || depth > coerceMaxDepth {
		return v, false
	}
	if t := k.ref(s); t != nil && s.Type == "" && len(s.Types) == 0 {
		s = t
	}
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for name, val := range x {
			ps := s.Properties[name]
			if ps == nil {
				continue
			}
			if nv, ch := k.coerce(val, ps, depth+1); ch {
				x[name], changed = nv, true
			}
		}
	case []any:
		for i, item := range x {
			sub := s.Items
			if i < len(s.PrefixItems) {
				sub = s.PrefixItems[i]
			}
			if nv, ch := k.coerce(item, sub, depth+1); ch {
				x[i], changed = nv, true
			}
		}
	case string:
		return coerceString(x, s)
	}
	return v, changed
}

// coerceString converts s when the schema wants one scalar type that is
// not a string and s spells a value of it.
func coerceString(str string, s *jsonschema.Schema) (any, bool) {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	want := ""
	for _, t := range types {
		switch t {
		case "string":
			return str, false
		case "null":
		default:
			if want != "" {
				return str, false // several types: ambiguous
			}
			want = t
		}
	}
	switch want {
	case "integer":
		if i, err := strconv.ParseInt(str, 10, 64); err == nil {
			return i, true
		}
	case "number":
		if !isJSONNumber(str) {
			break
		}
		if i, err := strconv.ParseInt(str, 10, 64); err == nil {
			return i, true
		}
		if f, err := strconv.ParseFloat(str, 64); err == nil {
			return f, true
		}
	case "boolean":
		switch strings.ToLower(str) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return str, false
}

// isJSONNumber reports whether s is a number as JSON writes it (no "NaN",
// "Inf", hex or leading "+").
func isJSONNumber(s string) bool {
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}
