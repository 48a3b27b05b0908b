package bridge_test

// Schema plumbing for the oracle's argument generator: $ref and allOf
// resolution and merging, over decoded JSON Schema.

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
)

// schemaMap turns a decoded schema (map or boolean) into a map; false
// schemas become {"not":{}}.
func schemaMap(s any) map[string]any {
	switch x := s.(type) {
	case map[string]any:
		return x
	case bool:
		if !x {
			return map[string]any{"not": map[string]any{}}
		}
	}
	return map[string]any{}
}

// isFalseSchema reports whether s is the schema that admits nothing.
func isFalseSchema(s map[string]any) bool {
	n, ok := s["not"].(map[string]any)
	return ok && len(n) == 0
}

// resolve follows $ref into $defs and flattens allOf (and $ref siblings)
// into one merged schema. oneOf/anyOf lists are kept under "x-choices".
func (g *argGen) resolve(s map[string]any, depth int) (map[string]any, error) {
	if depth > genMaxDepth {
		return nil, genFailf("schema nesting deeper than %d", genMaxDepth)
	}
	var parts []map[string]any
	base := map[string]any{}
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := s[k]
		switch k {
		case "$ref":
			ref, _ := v.(string)
			name, ok := strings.CutPrefix(ref, "#/$defs/")
			target, found := g.defs[name]
			if !ok || !found {
				return nil, genFailf("unresolvable $ref %q", ref)
			}
			r, err := g.resolve(schemaMap(target), depth+1)
			if err != nil {
				return nil, err
			}
			parts = append(parts, r)
		case "allOf":
			list, _ := v.([]any)
			for _, sub := range list {
				r, err := g.resolve(schemaMap(sub), depth+1)
				if err != nil {
					return nil, err
				}
				parts = append(parts, r)
			}
		case "oneOf", "anyOf":
			list, _ := v.([]any)
			choices, _ := base["x-choices"].([]any)
			base["x-choices"] = append(choices, list)
		default:
			base[k] = v
		}
	}
	out := base
	for _, p := range parts {
		out = genMerge(out, p)
	}
	return out, nil
}

// genMerge combines two schemas that must both hold (allOf).
func genMerge(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, bv := range b {
		av, ok := out[k]
		if !ok {
			out[k] = bv
			continue
		}
		switch k {
		case "properties":
			pa, _ := av.(map[string]any)
			pb, _ := bv.(map[string]any)
			m := make(map[string]any, len(pa)+len(pb))
			for name, s := range pa {
				m[name] = s
			}
			for name, s := range pb {
				if prev, ok := m[name]; ok {
					m[name] = map[string]any{"allOf": []any{prev, s}}
				} else {
					m[name] = s
				}
			}
			out[k] = m
		case "required":
			ra, _ := av.([]any)
			rb, _ := bv.([]any)
			req := slices.Clone(ra)
			for _, r := range rb {
				if !slices.Contains(req, r) {
					req = append(req, r)
				}
			}
			out[k] = req
		case "type":
			ta, tb := genTypes(av), genTypes(bv)
			var both []any
			for _, t := range ta {
				if slices.Contains(tb, t) || t == "number" && slices.Contains(tb, "integer") {
					both = append(both, t)
				}
			}
			for _, t := range tb {
				if t == "integer" && slices.Contains(ta, "number") && !slices.Contains(both, "integer") {
					both = append(both, t)
				}
			}
			out[k] = both
		case "x-choices":
			out[k] = append(slices.Clone(av.([]any)), bv.([]any)...)
		case "minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties":
			out[k] = genBound(av, bv, math.Max)
		case "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties":
			out[k] = genBound(av, bv, math.Min)
		case "enum":
			ea, _ := av.([]any)
			eb, _ := bv.([]any)
			var both []any
			for _, e := range ea {
				if slices.ContainsFunc(eb, func(x any) bool { return genEqual(x, e) }) {
					both = append(both, e)
				}
			}
			out[k] = both
		case "items", "additionalProperties":
			if isFalseSchema(schemaMap(av)) || isFalseSchema(schemaMap(bv)) {
				out[k] = false
			} else {
				out[k] = map[string]any{"allOf": []any{av, bv}}
			}
		case "pattern":
			if av != bv {
				out["x-patterns"] = append(genStrings(out["x-patterns"]), bv.(string))
			}
		}
		// Other keywords: the first one met wins.
	}
	return out
}

// genBound combines two numeric bounds with f, ignoring a non-number.
func genBound(a, b any, f func(x, y float64) float64) any {
	x, y := genNum(a), genNum(b)
	switch {
	case math.IsNaN(x):
		return b
	case math.IsNaN(y):
		return a
	}
	return f(x, y)
}

// genStrings reads a []string kept in a merged schema.
func genStrings(v any) []string { s, _ := v.([]string); return s }

// genTypes is the "type" keyword as a list.
func genTypes(v any) []any {
	switch x := v.(type) {
	case string:
		return []any{x}
	case []any:
		return x
	}
	return nil
}

// genNum reads a JSON number; NaN when v is not one.
func genNum(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case json.Number:
		f, _ := x.Float64()
		return f
	case int:
		return float64(x)
	}
	return math.NaN()
}

// genEqual compares two decoded JSON values.
func genEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// genNumOr is genNum with a default.
func genNumOr(v any, def float64) float64 {
	if f := genNum(v); !math.IsNaN(f) {
		return f
	}
	return def
}
