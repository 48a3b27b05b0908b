package schema

import (
	"reflect"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// oneOfOverlaps reports whether the plainest value meant for one
// alternative of a oneOf also fits another, so that "exactly one" refuses
// the very values the author meant. Real specs write exclusive shapes as
// open objects that differ only in which optional properties they list
// (Ably's channel subscriptions: {channel, deviceId} or {channel,
// clientId}, none required): as JSON Schema every object then fits both,
// and the tool could not be called with any value. Only plain open objects
// are compared. Two of them are taken to overlap when the properties one
// requires include all the other requires (an object with just those fits
// both), unless a required property has provably disjoint schemas in the
// two (different types, or enums and consts without a common value).
// Alternatives told apart by which property they require ({bark} or
// {meow}) keep their oneOf. A false answer leaves oneOf as written; a
// wrong true one only loosens the check to anyOf, which the upstream still
// enforces.
func oneOfOverlaps(branches openapi3.SchemaRefs) bool {
	for i, a := range branches {
		if !openObject(a) {
			continue
		}
		for _, b := range branches[i+1:] {
			if !openObject(b) {
				continue
			}
			ra, rb := a.Value.Required, b.Value.Required
			if (subset(ra, rb) || subset(rb, ra)) && !disjointObjects(a.Value, b.Value) {
				return true
			}
		}
	}
	return false
}

// subset reports whether every name in a is also in b.
func subset(a, b []string) bool {
	for _, n := range a {
		if !slices.Contains(b, n) {
			return false
		}
	}
	return true
}

// openObject is a schema that admits every object whose listed properties
// fit: type object (or untyped with properties), additional properties
// allowed, and no keyword that constrains the object otherwise.
func openObject(r *openapi3.SchemaRef) bool {
	if r == nil || r.Value == nil {
		return false
	}
	s := r.Value
	if s.Always != nil || len(s.AllOf)+len(s.AnyOf)+len(s.OneOf) > 0 || s.Not != nil ||
		s.If != nil || s.Discriminator != nil || len(s.Enum) > 0 || s.Const != nil {
		return false
	}
	switch {
	case s.Type == nil || len(*s.Type) == 0:
		if len(s.Properties) == 0 {
			return false
		}
	case !s.Type.Is("object"):
		return false
	}
	ap := s.AdditionalProperties
	if (ap.Has != nil && !*ap.Has) || ap.Schema != nil {
		return false
	}
	up := s.UnevaluatedProperties
	if (up.Has != nil && !*up.Has) || up.Schema != nil {
		return false
	}
	return len(s.PatternProperties) == 0 && s.PropertyNames == nil && s.MaxProps == nil &&
		len(s.DependentRequired) == 0 && len(s.DependentSchemas) == 0
}

// disjointObjects reports whether no object fits both open objects a and
// b: some property either requires has schemas in the two that share no
// value.
func disjointObjects(a, b *openapi3.Schema) bool {
	for _, name := range slices.Concat(a.Required, b.Required) {
		pa, pb := a.Properties[name], b.Properties[name]
		if pa != nil && pb != nil && disjointValues(pa.Value, pb.Value) {
			return true
		}
	}
	return false
}

// disjointValues reports whether the two schemas provably share no value,
// judged by their types, enums and consts alone.
func disjointValues(a, b *openapi3.Schema) bool {
	if a == nil || b == nil {
		return false
	}
	va, oka := valueList(a)
	vb, okb := valueList(b)
	switch {
	case oka && okb:
		return !slices.ContainsFunc(va, func(x any) bool {
			return slices.ContainsFunc(vb, func(y any) bool { return reflect.DeepEqual(x, y) })
		})
	case oka:
		return !slices.ContainsFunc(va, func(x any) bool { return admitsType(b, x) })
	case okb:
		return !slices.ContainsFunc(vb, func(y any) bool { return admitsType(a, y) })
	}
	ta, tb := typeList(a), typeList(b)
	if ta == nil || tb == nil {
		return false
	}
	return !slices.ContainsFunc(ta, func(t string) bool { return slices.Contains(tb, t) })
}

// valueList is the values a schema's const or enum allows, if it has one.
func valueList(s *openapi3.Schema) ([]any, bool) {
	switch {
	case s.Const != nil:
		return []any{s.Const}, true
	case len(s.Enum) > 0:
		return s.Enum, true
	}
	return nil, false
}

// typeList is the JSON types a schema allows ("integer" counted as
// "number", nullable as "null"), or nil when it does not say.
func typeList(s *openapi3.Schema) []string {
	if s.Type == nil || len(*s.Type) == 0 {
		return nil
	}
	var out []string
	for _, t := range *s.Type {
		if t == "integer" {
			t = "number"
		}
		out = append(out, t)
	}
	if s.Nullable {
		out = append(out, "null")
	}
	return out
}

// admitsType reports whether v is of a JSON type s allows (any, when s
// names none).
func admitsType(s *openapi3.Schema, v any) bool {
	ts := typeList(s)
	if ts == nil {
		return true
	}
	var t string
	switch v.(type) {
	case nil:
		t = "null"
	case bool:
		t = "boolean"
	case string:
		t = "string"
	case float64, float32, int, int64, int32, uint64:
		t = "number"
	case []any:
		t = "array"
	case map[string]any:
		t = "object"
	default:
		return true
	}
	return slices.Contains(ts, t)
}
