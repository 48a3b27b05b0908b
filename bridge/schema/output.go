package schema

import (
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpbridge/mcpbridge/bridge/media"
)

// outputSchema converts the first 2xx JSON response schema into a root
// output schema when it describes an object; otherwise there is none (the
// result is still returned as text). Codes are taken in order 200, 201, ...
// then "2XX".
func Output(o *openapi3.Operation) *jsonschema.Schema {
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
		if r == nil || r.Value == nil {
			continue
		}
		mt := jsonContent(r.Value.Content)
		if mt == nil || mt.Schema == nil {
			if code == "204" {
				continue
			}
			return nil
		}
		conv := NewConverter(Response)
		s := conv.Convert(mt.Schema)
		defs := conv.Defs()
		if !IsObject(s, defs) {
			return nil
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
		return &root
	}
	return nil
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
