package schema

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxConstraintNote bounds the note that tells a model, in a description,
// which constraint [Tolerant] removed; longer notes are left out.
const maxConstraintNote = 160

// Tolerant rewrites a converted output schema, in place, into one that
// real answers, which drift from their specs, still satisfy, while keeping
// what helps a client read them: types, properties, descriptions, titles.
//
//   - No `required`, `dependentRequired`, min/maxProperties: a member may
//     be missing.
//   - Every typed schema also admits null; the root stays "object" (MCP
//     requires it).
//   - additionalProperties, unevaluatedProperties and unevaluatedItems are
//     never false, and a property whose schema is false accepts anything.
//   - enum, const, pattern, format, minimum/maximum and their exclusive
//     forms, multipleOf, min/maxLength, min/maxItems, uniqueItems,
//     contains, propertyNames are removed; when short, the description
//     says what they were ("One of: "open", "closed".").
//   - oneOf becomes anyOf (tolerant branches would overlap), and not,
//     if/then/else and dependentSchemas, whose outcome a looser subschema
//     would invert or change, are removed.
//   - A property whose name redactable reports (the sanitizer masks the
//     whole value of such members, whatever its type, with the string
//     "[REDACTED]") also admits a string.
//
// redactable may be nil. Every subschema, $defs included, is rewritten
// once.
func Tolerant(root *jsonschema.Schema, redactable func(name string) bool) {
	t := tolerant{redactable: redactable, seen: map[*jsonschema.Schema]bool{}}
	t.schema(root)
	for _, name := range sortedKeys(root.Defs) {
		t.schema(root.Defs[name])
	}
	root.Type, root.Types = "object", nil
}

type tolerant struct {
	redactable func(string) bool
	seen       map[*jsonschema.Schema]bool
}

func (t *tolerant) schema(s *jsonschema.Schema) {
	if s == nil || t.seen[s] {
		return
	}
	t.seen[s] = true
	if note := constraintNote(s); note != "" {
		if s.Description == "" {
			s.Description = note
		} else {
			s.Description = strings.TrimRight(s.Description, "\n ") + "\n\n" + note
		}
	}
	s.Required, s.DependentRequired = nil, nil
	s.MinProperties, s.MaxProperties = nil, nil
	s.Enum, s.Const = nil, nil
	s.Pattern, s.Format = "", ""
	s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum, s.MultipleOf = nil, nil, nil, nil, nil
	s.MinLength, s.MaxLength = nil, nil
	s.MinItems, s.MaxItems, s.UniqueItems = nil, nil, false
	s.Contains, s.MinContains, s.MaxContains = nil, nil, nil
	s.PropertyNames = nil
	s.Not, s.If, s.Then, s.Else = nil, nil, nil, nil
	s.DependentSchemas = nil
	s.UnevaluatedProperties, s.UnevaluatedItems = nil, nil
	if isFalse(s.AdditionalProperties) {
		s.AdditionalProperties = nil
	}
	if isFalse(s.Items) {
		s.Items = nil
	}
	switch {
	case s.Type != "" && s.Type != "null":
		s.Types, s.Type = []string{s.Type, "null"}, ""
	case len(s.Types) > 0 && !slices.Contains(s.Types, "null"):
		s.Types = append(s.Types, "null")
	}
	if len(s.OneOf) > 0 {
		if len(s.AnyOf) == 0 {
			s.AnyOf = s.OneOf
		} else {
			s.AllOf = append(s.AllOf, &jsonschema.Schema{AnyOf: s.OneOf})
		}
		s.OneOf = nil
	}
	for _, name := range sortedKeys(s.Properties) {
		p := s.Properties[name]
		if isFalse(p) {
			s.Properties[name] = &jsonschema.Schema{}
			continue
		}
		t.schema(p)
		if t.redactable != nil && t.redactable(name) {
			s.Properties[name] = admitString(p)
		}
	}
	for _, name := range sortedKeys(s.PatternProperties) {
		t.schema(s.PatternProperties[name])
	}
	t.schema(s.AdditionalProperties)
	t.schema(s.Items)
	for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.AllOf, s.AnyOf} {
		for _, sub := range list {
			t.schema(sub)
		}
	}
}

// admitString returns s made to accept a string too (the redaction mask):
// a type list gains "string"; a schema with $ref or composition is wrapped
// in anyOf [s, {type: string}], its description lifted to the wrapper.
func admitString(s *jsonschema.Schema) *jsonschema.Schema {
	switch {
	case s.Ref == "" && s.AllOf == nil && s.AnyOf == nil && s.OneOf == nil && s.Not == nil:
		switch {
		case s.Type != "":
			if s.Type != "string" {
				s.Types, s.Type = []string{s.Type, "string"}, ""
			}
		case len(s.Types) > 0:
			if !slices.Contains(s.Types, "string") {
				s.Types = append(s.Types, "string")
			}
		}
		return s
	case s.Ref == "" && s.AllOf == nil && s.OneOf == nil && s.Not == nil && s.Type == "" && s.Types == nil:
		s.AnyOf = append(s.AnyOf, &jsonschema.Schema{Type: "string"})
		return s
	}
	w := &jsonschema.Schema{Title: s.Title, Description: s.Description, AnyOf: []*jsonschema.Schema{s, {Type: "string"}}}
	s.Title, s.Description = "", ""
	return w
}

// constraintNote says, in a sentence or two, what the constraints
// Tolerant removes from s were; "" when there are none or the note would
// be longer than maxConstraintNote.
func constraintNote(s *jsonschema.Schema) string {
	if len(s.Enum) == 0 && s.Const == nil && s.Format == "" && s.Pattern == "" && s.Minimum == nil && s.Maximum == nil &&
		s.ExclusiveMinimum == nil && s.ExclusiveMaximum == nil && s.MinLength == nil && s.MaxLength == nil && s.MinItems == nil && s.MaxItems == nil {
		return ""
	}
	var parts []string
	if len(s.Enum) > 0 {
		vals := make([]string, 0, len(s.Enum))
		for _, v := range s.Enum {
			if v == nil {
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				return ""
			}
			vals = append(vals, string(b))
		}
		if len(vals) > 0 {
			parts = append(parts, "One of: "+strings.Join(vals, ", ")+".")
		}
	}
	if s.Const != nil {
		if b, err := json.Marshal(*s.Const); err == nil {
			parts = append(parts, "Always "+string(b)+".")
		}
	}
	switch s.Format {
	case "", "int32", "int64", "float", "double": // implied by the type, mostly
	default:
		parts = append(parts, "Format: "+s.Format+".")
	}
	if s.Pattern != "" {
		parts = append(parts, "Pattern: "+s.Pattern)
	}
	bound := func(name string, f *float64) {
		if f != nil {
			parts = append(parts, name+" "+strconv.FormatFloat(*f, 'g', -1, 64)+".")
		}
	}
	bound("Minimum", s.Minimum)
	bound("Maximum", s.Maximum)
	bound("Greater than", s.ExclusiveMinimum)
	bound("Less than", s.ExclusiveMaximum)
	count := func(name string, n *int) {
		if n != nil {
			parts = append(parts, name+" "+strconv.Itoa(*n)+".")
		}
	}
	count("Minimum length", s.MinLength)
	count("Maximum length", s.MaxLength)
	count("Minimum items", s.MinItems)
	count("Maximum items", s.MaxItems)
	note := strings.Join(parts, " ")
	if len(note) > maxConstraintNote {
		return ""
	}
	return note
}
