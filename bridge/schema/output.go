package schema

import (
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpbridge/mcpbridge/bridge/media"
)

// Output modes, for [BuildOutput].
const (
	// OutputTolerant declares output schemas made [Tolerant]: drifting
	// answers still conform.
	OutputTolerant = "tolerant"
	// OutputStrict declares output schemas as the spec writes them
	// (repaired, patterns translated).
	OutputStrict = "strict"
	// OutputOff declares no output schemas.
	OutputOff = "off"
)

// ValidOutputMode reports whether mode is one of the output modes or ""
// (tolerant).
func ValidOutputMode(mode string) bool {
	switch mode {
	case "", OutputTolerant, OutputStrict, OutputOff:
		return true
	}
	return false
}

// BuildOutput returns the output schema a tool for o declares in mode (""
// means tolerant), nil for none, and the repairs it made: [Output], then
// [RepairSchema], then in tolerant mode [Tolerant] with redactable naming
// the members whose values the sanitizer masks whole, in strict mode
// [AdmitMask] with it.
func BuildOutput(o *openapi3.Operation, mode string, redactable func(string) bool) (*jsonschema.Schema, []Repair) {
	s, reps, _ := buildOutput(o, mode, redactable)
	return s, reps
}

// BuildOutputWith is BuildOutput for a caller done with the schema when
// use returns (use gets nil when there is none): its schemas are then
// reused by later conversions ([Converter.Release]), so use must not keep
// it or any part of it.
func BuildOutputWith(o *openapi3.Operation, mode string, redactable func(string) bool, use func(*jsonschema.Schema)) []Repair {
	s, reps, conv := buildOutput(o, mode, redactable)
	use(s)
	if conv != nil {
		conv.Release()
	}
	return reps
}

func buildOutput(o *openapi3.Operation, mode string, redactable func(string) bool) (*jsonschema.Schema, []Repair, *Converter) {
	if mode == OutputOff {
		return nil, nil, nil
	}
	s, conv := output(o)
	if s == nil {
		return nil, nil, conv
	}
	reps := slices.Clone(conv.Repairs())
	reps = append(reps, RepairSchema(s, "output")...)
	if mode != OutputStrict {
		Tolerant(s, redactable)
	} else {
		AdmitMask(s, redactable)
	}
	return s, reps, conv
}

// Output converts the first 2xx JSON response schema into a root output
// schema when it describes an object; otherwise there is none (the result
// is still returned as text). Codes are taken in order 200, 201, ... then
// "2XX"; 204 and 205, which have no body, are passed over.
func Output(o *openapi3.Operation) *jsonschema.Schema {
	s, _ := output(o)
	return s
}

// OutputSource is the response schema [BuildOutput] converts: that of
// the JSON content of the first 2xx response with a body, or nil. The
// output schema depends on nothing else of o.
func OutputSource(o *openapi3.Operation) *openapi3.SchemaRef { return outputSource(o) }

// outputSource is the response schema [Output] converts: that of the
// JSON content of the first 2xx response with a body, or nil.
func outputSource(o *openapi3.Operation) *openapi3.SchemaRef {
	if o.Responses == nil {
		return nil
	}
	codes := make([]string, 0, 4)
	for code := range o.Responses.Map() {
		if len(code) == 3 && code[0] == '2' {
			codes = append(codes, code)
		}
	}
	sort.Strings(codes) // "200" < "201" < ... < "2XX"
	for _, code := range codes {
		r := o.Responses.Value(code)
		if r == nil || r.Value == nil || code == "204" || code == "205" {
			continue
		}
		if mt := jsonContent(r.Value.Content); mt != nil {
			return mt.Schema
		}
		return nil
	}
	return nil
}

// OutputExceeds reports that the output schema [BuildOutput] would make
// for o, in any mode, certainly encodes to more than limit bytes, without
// converting it: it adds up what every mode keeps of each distinct schema
// reachable from the response (property names, titles, descriptions), a
// lower bound of the encoded size, and stops once past limit. False means
// "not known to exceed": build it and measure. GitHub's spec converts
// about 700 response schemas over the default 4 KiB limit only to drop
// them: half of building its tools.
func OutputExceeds(o *openapi3.Operation, limit int) bool {
	src := outputSource(o)
	if src == nil || limit < 0 {
		return false
	}
	n := 0
	seen := map[*openapi3.Schema]bool{}
	var walk func(*openapi3.SchemaRef) bool
	walk = func(ref *openapi3.SchemaRef) bool {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return n > limit
		}
		s := ref.Value
		seen[s] = true
		if s.Always != nil {
			return n > limit
		}
		// Each distinct schema is one object at least once, inline or in
		// $defs: {}, and "type":"…" with a single known type (tolerant
		// mode writes a longer list with "null").
		n += 2
		if s.Type != nil && len(*s.Type) == 1 {
			if t := (*s.Type)[0]; t == "file" {
				n += 9 + len("string")
			} else if knownType(t) {
				n += 9 + len(t)
			}
		}
		// "title":"…" and "description":"…": 10 and 16 bytes besides the
		// text, which escaping only lengthens.
		if s.Title != "" {
			n += 10 + len(s.Title)
		}
		if s.Description != "" {
			n += 16 + len(s.Description)
		}
		for name, p := range s.Properties {
			if p != nil && p.Value != nil && p.Value.WriteOnly {
				continue // a response hides it
			}
			n += len(name) + 3 // "name":
			if n > limit || walk(p) {
				return true
			}
		}
		// The subschemas every mode keeps ([Tolerant] removes not,
		// if/then/else, contains, propertyNames, dependentSchemas).
		for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
			for _, r := range list {
				if walk(r) {
					return true
				}
			}
		}
		if walk(s.Items) || walk(s.AdditionalProperties.Schema) {
			return true
		}
		return n > limit
	}
	return walk(src)
}

func output(o *openapi3.Operation) (*jsonschema.Schema, *Converter) {
	if src := outputSource(o); src != nil {
		conv := NewConverter(Response)
		s := conv.Convert(src)
		defs := conv.Defs()
		if !IsObject(s, defs) {
			return nil, conv
		}
		root := *s
		root.Type = "object"
		root.Types = nil
		if len(defs) > 0 {
			merged := make(map[string]*jsonschema.Schema, len(defs)+len(root.Defs))
			for k, v := range root.Defs {
				merged[k] = v
			}
			for k, v := range defs {
				merged[k] = v
			}
			root.Defs = merged
		}
		return &root, conv
	}
	return nil, nil
}

// isObjectSchema reports whether s (following one $defs reference) only
// admits JSON objects.
func IsObject(s *jsonschema.Schema, defs map[string]*jsonschema.Schema) bool {
	return objectOnly(s, defs, 8)
}

// objectOnly reports whether s admits only JSON objects: type object, a
// $defs reference to such a schema, an allOf with such a member, or a
// oneOf/anyOf whose members all are. depth bounds reference chains.
func objectOnly(s *jsonschema.Schema, defs map[string]*jsonschema.Schema, depth int) bool {
	if s == nil || depth == 0 {
		return false
	}
	switch {
	case s.Type == "object":
		return true
	case s.Type != "" || len(s.Types) > 0:
		return false
	case strings.HasPrefix(s.Ref, "#/$defs/"):
		if objectOnly(defs[strings.TrimPrefix(s.Ref, "#/$defs/")], defs, depth-1) {
			return true
		}
	}
	for _, m := range s.AllOf {
		if objectOnly(m, defs, depth-1) {
			return true
		}
	}
	for _, alts := range [][]*jsonschema.Schema{s.OneOf, s.AnyOf} {
		if len(alts) == 0 {
			continue
		}
		all := true
		for _, m := range alts {
			all = all && objectOnly(m, defs, depth-1)
		}
		if all {
			return true
		}
	}
	return false
}

// jsonMediaType picks application/json, then any +json or */json type.
func jsonContent(content openapi3.Content) *openapi3.MediaType {
	if mt := content["application/json"]; mt != nil {
		return mt
	}
	for _, name := range sortedKeys(content) {
		if media.IsJSON(name) {
			return content[name]
		}
	}
	return nil
}

// WithDescription returns a shallow copy of s carrying a parameter's own
// description and deprecation, without mutating a schema that may be shared.
func WithDescription(s *jsonschema.Schema, desc string, deprecated bool) *jsonschema.Schema {
	desc = strings.TrimSpace(desc)
	if desc == "" && !deprecated {
		return s
	}
	cp := *s
	if desc != "" {
		cp.Description = desc
	}
	cp.Deprecated = cp.Deprecated || deprecated
	return &cp
}
