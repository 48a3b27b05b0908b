package schema

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// AdmitMask makes every property of root (at any depth, $defs included)
// whose name redactable reports also admit [sanitizer.Mask]: the sanitizer replaces
// such a member's whole value, whatever its type, before the answer is
// checked, so under --output-schema strict an answer that conforms to
// the spec would otherwise break its own output schema once redacted
// (Plaid's {"authorization": {...}}, Mist's "enable_cookie": true) and go
// as an error result blaming the upstream. The property becomes
// anyOf [its schema, const "[REDACTED]"], which admits nothing else.
// Tolerant mode has its own, looser, form ([Tolerant]).
func AdmitMask(root *jsonschema.Schema, redactable func(name string) bool) {
	if root == nil || redactable == nil {
		return
	}
	a := admitMask{redactable: redactable, seen: map[*jsonschema.Schema]bool{}}
	a.schema(root)
	for _, name := range sortedKeys(root.Defs) {
		a.schema(root.Defs[name])
	}
}

type admitMask struct {
	redactable func(string) bool
	seen       map[*jsonschema.Schema]bool
}

func (a *admitMask) schema(s *jsonschema.Schema) {
	if s == nil || a.seen[s] {
		return
	}
	a.seen[s] = true
	for _, name := range sortedKeys(s.Properties) {
		p := s.Properties[name]
		a.schema(p)
		if a.redactable(name) && p != nil && !isFalse(p) {
			var mask any = sanitizer.Mask
			s.Properties[name] = &jsonschema.Schema{
				Description: p.Description,
				AnyOf:       []*jsonschema.Schema{p, {Const: &mask}},
			}
		}
	}
	for _, name := range sortedKeys(s.PatternProperties) {
		a.schema(s.PatternProperties[name])
	}
	for _, name := range sortedKeys(s.DependentSchemas) {
		a.schema(s.DependentSchemas[name])
	}
	for _, sub := range []*jsonschema.Schema{s.AdditionalProperties, s.Items, s.Contains, s.If, s.Then, s.Else, s.UnevaluatedProperties, s.UnevaluatedItems} {
		a.schema(sub)
	}
	for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range list {
			a.schema(sub)
		}
	}
}
