package bridge

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"
)

// bodySchema is the input-schema property for the request body in the
// chosen media type. Binary payloads are base64 strings (or a file object);
// multipart file parts accept a base64 string or a file object (content,
// encoding, filename, contentType).
func bodySchema(conv *schemaConverter, rb *openapi3.RequestBody, bs *bodySpec) *jsonschema.Schema {
	if bs.binary() {
		return &jsonschema.Schema{
			Description: "The request body (" + bs.ContentType + "): a base64 string, or a file object.",
			AnyOf:       []*jsonschema.Schema{{Type: "string", ContentEncoding: "base64"}, bodyFileObjectSchema(bs.accepts)},
		}
	}
	mt := rb.Content[bs.ContentType]
	var s *jsonschema.Schema
	if mt != nil && mt.Schema != nil {
		s = conv.convert(mt.Schema)
	} else {
		s = &jsonschema.Schema{}
	}
	if (bs.kind == bodyKindForm || bs.kind == bodyKindMultipart) && s.Type == "" && len(s.Types) == 0 {
		// Form fields come from an object's properties, and encode rejects
		// anything else: say so when the spec leaves the type out (a 3.1
		// schema with only properties, or none at all).
		cp := *s
		cp.Type = "object"
		s = &cp
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

// bodyFileObjectSchema is fileObjectSchema for a binary body: when the body
// accepts only concrete media types, the file's contentType must be one of
// them, as encode requires.
func bodyFileObjectSchema(accepts []string) *jsonschema.Schema {
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
// schema form of bodyFileSchema.
func fileObjectSchema() *jsonschema.Schema {
	raw, err := json.Marshal(bodyFileSchema())
	if err != nil {
		return &jsonschema.Schema{Type: "object"}
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return &jsonschema.Schema{Type: "object"}
	}
	return &s
}

// outputSchema converts the first 2xx JSON response schema into a root
// output schema when it describes an object; otherwise there is none (the
// result is still returned as text). Codes are taken in order 200, 201, ...
// then "2XX".
func outputSchema(o *openapi3.Operation) *jsonschema.Schema {
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
		mt := jsonMediaType(r.Value.Content)
		if mt == nil || mt.Schema == nil {
			if code == "204" {
				continue
			}
			return nil
		}
		conv := newSchemaConverter(dirResponse)
		s := conv.convert(mt.Schema)
		defs := conv.defs()
		if !isObjectSchema(s, defs) {
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
func isObjectSchema(s *jsonschema.Schema, defs map[string]*jsonschema.Schema) bool {
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
func jsonMediaType(content openapi3.Content) *openapi3.MediaType {
	if mt := content["application/json"]; mt != nil {
		return mt
	}
	for _, name := range sortedKeys(content) {
		if isJSONType(name) {
			return content[name]
		}
	}
	return nil
}

// isJSONType reports whether a media type (parameters allowed) is JSON.
func isJSONType(ct string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(strings.ToLower(ct))
	return ct == "application/json" || strings.HasSuffix(ct, "+json") || strings.HasSuffix(ct, "/json") || ct == "text/json"
}
