package schema

import "github.com/google/jsonschema-go/jsonschema"

// RecursiveChoice reports whether root refers to itself (a $ref to one of
// its $defs that leads back to it) and offers alternatives (oneOf, anyOf)
// anywhere. Validating a value against such a schema can take time
// exponential in the value's nesting: every alternative of every level
// follows the reference down again (a 135-byte argument 22 levels deep took
// 39 s), so the caller bounds the nesting it accepts for it.
func RecursiveChoice(root *jsonschema.Schema) bool {
	if root == nil {
		return false
	}
	defs := map[string]*jsonschema.Schema{}
	for name, d := range root.Defs {
		defs["#/$defs/"+name] = d
	}
	for name, d := range root.Definitions {
		defs["#/definitions/"+name] = d
	}
	alternatives := false
	var recursive bool
	for ref, d := range defs {
		seen := map[*jsonschema.Schema]bool{}
		var walk func(s *jsonschema.Schema, depth int) bool
		walk = func(s *jsonschema.Schema, depth int) bool {
			if s == nil || seen[s] || depth > 64 {
				return false
			}
			seen[s] = true
			if len(s.OneOf) > 0 || len(s.AnyOf) > 0 {
				alternatives = true
			}
			if s.Ref != "" {
				if s.Ref == ref {
					return true
				}
				if t, ok := defs[s.Ref]; ok && walk(t, depth+1) {
					return true
				}
			}
			for _, sub := range subschemas(s) {
				if walk(sub, depth+1) {
					return true
				}
			}
			return false
		}
		for _, sub := range subschemas(d) {
			if walk(sub, 1) {
				recursive = true
			}
		}
		if len(d.OneOf) > 0 || len(d.AnyOf) > 0 {
			alternatives = true
		}
	}
	if !recursive {
		return false
	}
	if !alternatives {
		// Alternatives outside the $defs count too.
		var walk func(s *jsonschema.Schema, depth int) bool
		walk = func(s *jsonschema.Schema, depth int) bool {
			if s == nil || depth > 64 {
				return false
			}
			if len(s.OneOf) > 0 || len(s.AnyOf) > 0 {
				return true
			}
			for _, sub := range subschemas(s) {
				if walk(sub, depth+1) {
					return true
				}
			}
			return false
		}
		alternatives = walk(root, 0)
	}
	return alternatives
}

// subschemas are the schemas directly inside s (not through $ref).
func subschemas(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	for _, p := range s.Properties {
		out = append(out, p)
	}
	for _, p := range s.PatternProperties {
		out = append(out, p)
	}
	out = append(out, s.Items, s.AdditionalProperties, s.Not, s.If, s.Then, s.Else, s.Contains, s.UnevaluatedItems, s.UnevaluatedProperties, s.PropertyNames, s.AdditionalItems)
	out = append(out, s.PrefixItems...)
	out = append(out, s.ItemsArray...)
	out = append(out, s.AllOf...)
	out = append(out, s.AnyOf...)
	out = append(out, s.OneOf...)
	for _, d := range s.DependentSchemas {
		out = append(out, d)
	}
	return out
}

// Depth is the deepest nesting of arrays and objects in raw, found by a
// byte scan (brackets inside strings skipped) before anything is decoded.
func Depth(raw []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
			deepest = max(deepest, depth)
		case b == '}' || b == ']':
			depth--
		}
	}
	return deepest
}
