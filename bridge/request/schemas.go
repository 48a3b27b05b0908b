package request

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpbridge/mcpbridge/bridge/media"
	"github.com/mcpbridge/mcpbridge/bridge/schema"
)

// structured reports whether s declares only object or array values.
func structured(s *jsonschema.Schema) bool {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		return false
	}
	for _, t := range types {
		if t != "object" && t != "array" && t != "null" {
			return false
		}
	}
	return true
}

// BodySchema is the input-schema property for the request body in the
// chosen media type. Binary payloads are base64 strings (or a file object);
// multipart file parts accept a base64 string or a file object (content,
// encoding, filename, contentType).
func BodySchema(conv *schema.Converter, rb *openapi3.RequestBody, bs *Body) *jsonschema.Schema {
	if bs.binary() {
		return &jsonschema.Schema{
			Description: "The request body (" + bs.ContentType + "): a base64 string, or a file object.",
			AnyOf:       []*jsonschema.Schema{{Type: "string", ContentEncoding: "base64"}, fileObjectSchemaFor(bs.Accepts)},
		}
	}
	mt := rb.Content[bs.ContentType]
	var s *jsonschema.Schema
	if mt != nil && mt.Schema != nil {
		s = conv.Convert(mt.Schema)
	} else {
		s = &jsonschema.Schema{}
	}
	if (bs.Kind == KindForm || bs.Kind == KindMultipart) && s.Type == "" && len(s.Types) == 0 {
		// Form fields come from an object's properties, and encode rejects
		// anything else: say so when the spec leaves the type out (a 3.1
		// schema with only properties, or none at all).
		cp := *s
		cp.Type = "object"
		s = &cp
	}
	if bs.Kind == KindText && bs.XML == nil && structured(s) {
		// Text with an object or array schema: encode sends such a value
		// as JSON text, and a string as it is (the text itself, as for a
		// script a spec declares "type: object, format: file").
		return &jsonschema.Schema{
			Description: "The request body (" + bs.ContentType + "): the text itself, or a value sent as JSON text.",
			AnyOf:       []*jsonschema.Schema{{Type: "string"}, s},
		}
	}
	files := bs.fileProps()
	if len(files) == 0 || len(s.Properties) == 0 {
		return s
	}
	cp := *s
	cp.Properties = make(map[string]*jsonschema.Schema, len(s.Properties))
	for name, p := range s.Properties {
		cp.Properties[name] = p
	}
	for _, name := range files {
		p, ok := cp.Properties[name]
		if !ok {
			continue
		}
		file := &jsonschema.Schema{
			AnyOf: []*jsonschema.Schema{{Type: "string", ContentEncoding: "base64"}, fileObjectSchema()},
		}
		if p != nil && p.Type == "array" {
			arr := *p
			arr.Items = file
			cp.Properties[name] = &arr
			continue
		}
		if p != nil {
			file.Description = p.Description
		}
		cp.Properties[name] = file
	}
	return &cp
}

// PathParamSchema narrows a path parameter's input schema to the values a
// path can carry, so that the schema does not accept what Build must
// refuse: null (a path parameter is always sent), an empty array or object
// (they serialize to nothing) and, in style simple, the empty string (label
// and matrix write their prefix even then). A schema without a type gets
// the keywords of each. With AllowSlashes the description says how '/' is
// taken. s itself is not modified.
func PathParamSchema(s *jsonschema.Schema, spec ParamSpec) *jsonschema.Schema {
	cp := *s
	types := cp.Types
	if cp.Type != "" {
		types = []string{cp.Type}
	}
	if len(types) > 1 && slices.Contains(types, "null") {
		types = slices.DeleteFunc(slices.Clone(types), func(t string) bool { return t == "null" })
		cp.Type, cp.Types = "", types
		if len(types) == 1 {
			cp.Type, cp.Types = types[0], nil
		}
	}
	may := func(t string) bool { return len(types) == 0 || slices.Contains(types, t) }
	one := func(n *int) *int {
		if n != nil && *n >= 1 {
			return n
		}
		v := 1
		return &v
	}
	if may("array") {
		cp.MinItems = one(cp.MinItems)
	}
	if may("object") {
		cp.MinProperties = one(cp.MinProperties)
	}
	if may("string") && spec.Style == "simple" && !media.IsJSON(spec.ContentType) {
		cp.MinLength = one(cp.MinLength)
	}
	// An enum keeps only values the narrowed schema admits, so that the
	// listed schema and its error messages do not contradict themselves.
	if len(cp.Enum) > 0 {
		enum := slices.DeleteFunc(slices.Clone(cp.Enum), func(v any) bool {
			return (v == nil && !may("null")) || (v == "" && cp.MinLength != nil && *cp.MinLength >= 1)
		})
		if len(enum) > 0 {
			cp.Enum = enum
		}
	}
	if spec.AllowSlashes {
		const note = `A path: '/' separates segments, which must not be empty, "." or "..".`
		cp.Description = strings.TrimSpace(cp.Description + "\n\n" + note)
	}
	return &cp
}

// fileObjectSchemaFor is fileObjectSchema for a binary body: when the body
// accepts only concrete media types, the file's contentType must be one of
// them, as encode requires.
func fileObjectSchemaFor(accepts []string) *jsonschema.Schema {
	s := fileObjectSchema()
	var enum []any
	for _, a := range accepts {
		if strings.Contains(a, "*") {
			return s
		}
		enum = append(enum, a)
	}
	if ct := s.Properties["contentType"]; ct != nil && len(enum) > 0 {
		cp := *ct
		cp.Pattern = ""
		cp.Enum = enum
		s.Properties["contentType"] = &cp
	}
	return s
}

// fileObjectSchema is the file-object alternative of a file argument, the
// schema form of fileSchema.
func fileObjectSchema() *jsonschema.Schema {
	raw, err := json.Marshal(fileSchema())
	if err != nil {
		return &jsonschema.Schema{Type: "object"}
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return &jsonschema.Schema{Type: "object"}
	}
	return &s
}
