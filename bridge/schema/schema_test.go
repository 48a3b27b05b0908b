package schema

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// schemaTestDoc wraps component schemas (YAML, indented for the
// components.schemas block) in a minimal document of the given version.
func schemaTestDoc(version, schemas string) string {
	return "openapi: " + version + "\ninfo: {title: t, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n" + schemas
}

func schemaTestLoad(t testing.TB, data string) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(data))
	if err != nil {
		t.Fatalf("loading spec: %v\n%s", err, data)
	}
	return doc
}

// schemaTestRef refers to a component schema as an operation would.
func schemaTestRef(t testing.TB, doc *openapi3.T, name string) *openapi3.SchemaRef {
	t.Helper()
	r := doc.Components.Schemas[name]
	if r == nil {
		t.Fatalf("no component schema %q", name)
	}
	return &openapi3.SchemaRef{Ref: "#/components/schemas/" + name, Value: r.Value}
}

// schemaTestRoot builds the object root a tool would, checks that it
// resolves and returns it as decoded JSON.
func schemaTestRoot(t testing.TB, c *Converter, props map[string]*jsonschema.Schema) map[string]any {
	t.Helper()
	root := &jsonschema.Schema{Type: "object", Properties: props, Defs: c.Defs()}
	if _, err := root.Resolve(&jsonschema.ResolveOptions{}); err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	data, err := json.Marshal(root)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	return got
}

func schemaTestJSON(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad expected JSON: %v\n%s", err, s)
	}
	return m
}

func TestSchemaConvert(t *testing.T) {
	tests := []struct {
		name    string
		version string // "3.0.3" when empty
		schemas string // components.schemas entries, indented 4 spaces
		convert []string
		dir     Direction
		want    string // properties of the root (one per converted schema) and $defs
	}{
		{
			name: "nullable type and enum",
			schemas: `
    S:
      type: string
      nullable: true
      enum: [a, b]
    N:
      type: integer
      nullable: true
`,
			convert: []string{"S", "N"},
			want: `{"S": {"type": ["string","null"], "enum": ["a","b",null]},
			         "N": {"type": ["integer","null"]}}`,
		},
		{
			name:    "3.1 type arrays kept, no type stays untyped",
			version: "3.1.0",
			schemas: `
    S:
      type: [string, "null"]
    Any:
      description: anything
`,
			convert: []string{"S", "Any"},
			want:    `{"S": {"type": ["string","null"]}, "Any": {"description": "anything"}}`,
		},
		{
			name: "3.0 boolean exclusive bounds become numeric",
			schemas: `
    X:
      type: number
      minimum: 1
      exclusiveMinimum: true
      maximum: 9
      exclusiveMaximum: false
      multipleOf: 0.5
    Y:
      type: integer
      maximum: 5
      exclusiveMaximum: true
`,
			convert: []string{"X", "Y"},
			want: `{"X": {"type": "number", "exclusiveMinimum": 1, "maximum": 9, "multipleOf": 0.5},
			         "Y": {"type": "integer", "exclusiveMaximum": 5}}`,
		},
		{
			// 19.99 is a multiple of 0.01, but not by floating-point
			// division, which jsonschema-go and Ajv use: said, not kept.
			name: "a decimal multipleOf is a note",
			schemas: `
    Money:
      type: number
      multipleOf: 0.01
    Step:
      type: integer
      multipleOf: 5
`,
			convert: []string{"Money", "Step"},
			want: `{"Money": {"type": "number", "description": "Must be a multiple of 0.01 (not checked by this bridge)."},
			         "Step": {"type": "integer", "multipleOf": 5}}`,
		},
		{
			name:    "3.1 numeric exclusive bounds kept",
			version: "3.1.0",
			schemas: `
    X:
      type: number
      exclusiveMinimum: 0
      exclusiveMaximum: 10
      minimum: -1
`,
			convert: []string{"X"},
			want:    `{"X": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 10, "minimum": -1}}`,
		},
		{
			name: "example becomes examples",
			schemas: `
    X:
      type: string
      example: hello
`,
			convert: []string{"X"},
			want:    `{"X": {"type": "string", "examples": ["hello"]}}`,
		},
		{
			name:    "3.1 examples kept",
			version: "3.1.0",
			schemas: `
    X:
      type: string
      examples: [a, b]
`,
			convert: []string{"X"},
			want:    `{"X": {"type": "string", "examples": ["a","b"]}}`,
		},
		{
			name: "plain keywords kept, extensions and flags dropped",
			schemas: `
    X:
      title: Thing
      description: A thing.
      deprecated: true
      type: object
      x-internal: true
      required: [name, name, tags]
      minProperties: 1
      maxProperties: 5
      additionalProperties: false
      properties:
        name:
          type: string
          format: hostname
          pattern: '^[a-z]+$'
          minLength: 1
          maxLength: 63
          default: abc
          x-order: 1
        tags:
          type: array
          minItems: 1
          maxItems: 3
          uniqueItems: true
          items:
            type: string
            enum: [a, b]
        meta:
          type: object
          additionalProperties:
            type: integer
            minimum: 0
            maximum: 10
        free:
          type: object
          additionalProperties: true
`,
			convert: []string{"X"},
			want: `{"X": {
				"title": "Thing", "description": "A thing.", "deprecated": true, "type": "object",
				"required": ["name","tags"], "minProperties": 1, "maxProperties": 5,
				"additionalProperties": false,
				"properties": {
					"name": {"type": "string", "format": "hostname", "pattern": "^[a-z]+$", "minLength": 1, "maxLength": 63, "default": "abc"},
					"tags": {"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": true, "items": {"type": "string", "enum": ["a","b"]}},
					"meta": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0, "maximum": 10}},
					"free": {"type": "object", "additionalProperties": true}
				}}}`,
		},
		{
			name: "arrays always have items",
			schemas: `
    A:
      type: array
    B:
      type: array
      nullable: true
`,
			convert: []string{"A", "B"},
			want:    `{"A": {"type": "array", "items": true}, "B": {"type": ["array","null"], "items": true}}`,
		},
		{
			name: "request drops readOnly properties",
			schemas: `
    U:
      type: object
      required: [id, name, password]
      properties:
        id: {type: integer, readOnly: true}
        name: {type: string}
        password: {type: string, writeOnly: true}
`,
			convert: []string{"U"},
			dir:     Request,
			want: `{"U": {"type": "object", "required": ["name","password"],
				"properties": {"name": {"type": "string"}, "password": {"type": "string"}}}}`,
		},
		{
			name: "response drops writeOnly properties",
			schemas: `
    U:
      type: object
      required: [id, name, password]
      properties:
        id: {type: integer, readOnly: true}
        name: {type: string}
        password: {type: string, writeOnly: true}
`,
			convert: []string{"U"},
			dir:     Response,
			want: `{"U": {"type": "object", "required": ["id","name"],
				"properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}`,
		},
		{
			name: "composition and discriminator mapping (the discriminator, not oneOf, picks the variant)",
			schemas: `
    Pet:
      oneOf:
        - $ref: '#/components/schemas/Cat'
        - $ref: '#/components/schemas/Dog'
      discriminator:
        propertyName: petType
        mapping:
          dog: '#/components/schemas/Dog'
          cat: '#/components/schemas/Cat'
    Cat:
      allOf:
        - $ref: '#/components/schemas/Base'
        - type: object
          properties:
            meows: {type: boolean}
    Dog:
      allOf:
        - $ref: '#/components/schemas/Base'
        - not: {type: string}
    Base:
      type: object
      required: [petType]
      properties:
        petType: {type: string}
`,
			convert: []string{"Pet"},
			want: `{"Pet": {
				"description": "Discriminator: property ` + "`petType`" + ` selects the variant (cat → Cat, dog → Dog).",
				"anyOf": [
					{"allOf": [{"$ref": "#/$defs/Base"}, {"type": "object", "properties": {"meows": {"type": "boolean"}}}]},
					{"allOf": [{"$ref": "#/$defs/Base"}, {"not": {"type": "string"}}]}
				]},
				"$defs": {"Base": {"type": "object", "required": ["petType"], "properties": {"petType": {"type": "string"}}}}}`,
		},
		{
			name: "discriminator without mapping lists variants",
			schemas: `
    Pet:
      description: A pet.
      anyOf:
        - $ref: '#/components/schemas/Cat'
        - $ref: '#/components/schemas/Dog'
      discriminator:
        propertyName: kind
    Cat: {type: object}
    Dog: {type: object}
`,
			convert: []string{"Pet"},
			want: `{"Pet": {
				"description": "A pet.\n\nDiscriminator: property ` + "`kind`" + ` selects the variant (Cat, Dog).",
				"anyOf": [{"type": "object"}, {"type": "object"}]}}`,
		},
		{
			name: "nullable composition accepts null",
			schemas: `
    O:
      description: one or null
      nullable: true
      oneOf:
        - type: string
        - type: integer
    A:
      nullable: true
      anyOf:
        - type: string
    R:
      nullable: true
      allOf:
        - $ref: '#/components/schemas/Base'
    Base: {type: object}
`,
			convert: []string{"O", "A", "R"},
			want: `{
				"O": {"description": "one or null", "anyOf": [{"oneOf": [{"type": "string"}, {"type": "integer"}]}, {"type": "null"}]},
				"A": {"anyOf": [{"type": "string"}, {"type": "null"}]},
				"R": {"anyOf": [{"allOf": [{"type": "object"}]}, {"type": "null"}]}}`,
		},
		{
			name: "pattern Go cannot compile is dropped with a note",
			schemas: `
    P:
      type: string
      description: A code.
      pattern: '^(?!abc).*$'
    Q:
      type: object
      properties:
        named:
          type: string
          pattern: '^(?<year>\d{4})$'
`,
			convert: []string{"P", "Q"},
			want: `{"P": {"type": "string", "description": "A code.\n\nPattern not enforced: ^(?!abc).*$"},
			         "Q": {"type": "object", "properties": {"named": {"type": "string", "pattern": "^(?<year>\\d{4})$"}}}}`,
		},
		{
			// A JavaScript regex literal written as the pattern: '^' after the
			// literal '/' can never match, so no value at all was accepted
			// (data2crm's date-times, peertube's OAuth client id).
			name: "pattern written as a JavaScript regex literal loses its slashes",
			schemas: `
    D:
      type: string
      pattern: '/^\d{4}-\d{2}-\d{2}$/'
    I:
      type: string
      description: A zip.
      pattern: '/^[0-9]{5}$/i'
    U:
      type: string
      pattern: '/pub/[0-9a-z]+'
`,
			convert: []string{"D", "I", "U"},
			want: `{"D": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
			         "I": {"type": "string", "description": "A zip.\n\nPattern not enforced: /^[0-9]{5}$/i"},
			         "U": {"type": "string", "pattern": "/pub/[0-9a-z]+"}}`,
		},
		{
			name:    "3.1 keywords",
			version: "3.1.0",
			schemas: `
    X:
      type: object
      $comment: dropped
      patternProperties:
        '^x-': {type: string}
        '(?=bad)': {type: string}
      propertyNames: {maxLength: 10}
      unevaluatedProperties: false
      dependentRequired:
        a: [b]
      if: {required: [a]}
      then: {required: [b]}
      else: {required: [c]}
      const: {a: 1}
    T:
      type: array
      prefixItems:
        - type: string
        - type: integer
      contains: {type: integer}
      minContains: 1
      maxContains: 2
    B:
      type: object
      properties:
        yes: true
        no: false
`,
			convert: []string{"X", "T", "B"},
			want: `{
				"X": {"type": "object", "description": "Pattern property not enforced: (?=bad)",
					"patternProperties": {"^x-": {"type": "string"}},
					"propertyNames": {"maxLength": 10}, "unevaluatedProperties": false,
					"dependentRequired": {"a": ["b"]},
					"if": {"required": ["a"]}, "then": {"required": ["b"]}, "else": {"required": ["c"]},
					"const": {"a": 1}},
				"T": {"type": "array", "items": true, "prefixItems": [{"type": "string"}, {"type": "integer"}],
					"contains": {"type": "integer"}, "minContains": 1, "maxContains": 2},
				"B": {"type": "object", "properties": {"yes": true, "no": false}}}`,
		},
		{
			name: "named schema used once is inlined, twice goes to $defs",
			schemas: `
    Order:
      type: object
      properties:
        item: {$ref: '#/components/schemas/Item'}
        billing: {$ref: '#/components/schemas/Address'}
        shipping: {$ref: '#/components/schemas/Address'}
    Item: {type: string}
    Address:
      type: object
      properties:
        city: {type: string}
`,
			convert: []string{"Order"},
			want: `{"Order": {"type": "object", "properties": {
					"item": {"type": "string"},
					"billing": {"$ref": "#/$defs/Address"},
					"shipping": {"$ref": "#/$defs/Address"}}},
				"$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}}}`,
		},
		{
			name: "reuse across convert calls inlines again",
			schemas: `
    Id: {type: string, format: uuid}
`,
			convert: []string{"Id", "Id"},
			want:    `{"Id": {"type": "string", "format": "uuid"}, "Id#1": {"type": "string", "format": "uuid"}}`,
		},
		{
			name: "recursive schema goes to $defs with a self reference",
			schemas: `
    Node:
      type: object
      properties:
        value: {type: string}
        children:
          type: array
          items: {$ref: '#/components/schemas/Node'}
`,
			convert: []string{"Node"},
			want: `{"Node": {"$ref": "#/$defs/Node"}, "$defs": {"Node": {"type": "object", "properties": {
				"value": {"type": "string"},
				"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}}}`,
		},
		{
			name: "recursive schema in a later call is referred to",
			schemas: `
    Node:
      type: object
      properties:
        next: {$ref: '#/components/schemas/Node'}
`,
			convert: []string{"Node", "Node"},
			want: `{"Node": {"$ref": "#/$defs/Node"}, "Node#1": {"$ref": "#/$defs/Node"}, "$defs": {"Node": {"type": "object", "properties": {
				"next": {"$ref": "#/$defs/Node"}}}}}`,
		},
		{
			name: "mutual recursion",
			schemas: `
    A:
      type: object
      properties:
        b: {$ref: '#/components/schemas/B'}
    B:
      type: object
      properties:
        a: {$ref: '#/components/schemas/A'}
`,
			convert: []string{"A"},
			want: `{"A": {"$ref": "#/$defs/A"}, "$defs": {"A": {"type": "object", "properties": {
				"b": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}}}}}`,
		},
		{
			name: "colliding sanitized names get a suffix",
			schemas: `
    Pet Name: {type: string}
    Pet_Name: {type: integer}
    Both:
      type: object
      properties:
        a: {$ref: '#/components/schemas/Pet Name'}
        b: {$ref: '#/components/schemas/Pet Name'}
        c: {$ref: '#/components/schemas/Pet_Name'}
        d: {$ref: '#/components/schemas/Pet_Name'}
`,
			convert: []string{"Both"},
			want: `{"Both": {"type": "object", "properties": {
					"a": {"$ref": "#/$defs/Pet_Name"}, "b": {"$ref": "#/$defs/Pet_Name"},
					"c": {"$ref": "#/$defs/Pet_Name_2"}, "d": {"$ref": "#/$defs/Pet_Name_2"}}},
				"$defs": {"Pet_Name": {"type": "string"}, "Pet_Name_2": {"type": "integer"}}}`,
		},
		{
			name:    "3.1 $ref with siblings is a distinct schema",
			version: "3.1.0",
			schemas: `
    Pet:
      type: object
      properties:
        parent:
          $ref: '#/components/schemas/Pet'
          description: The parent pet.
`,
			convert: []string{"Pet"},
			// kin applies the siblings to a copy of Pet, and the copy's parent is
			// the copy again: the copy recurses, Pet itself is used once.
			want: `{"Pet": {"type": "object", "properties": {"parent": {"$ref": "#/$defs/Pet"}}}, "$defs": {
				"Pet": {"type": "object", "description": "The parent pet.", "properties": {"parent": {"$ref": "#/$defs/Pet"}}}}}`,
		},
		{
			name: "swagger file type becomes a binary string",
			schemas: `
    F: {type: file}
`,
			convert: []string{"F"},
			want:    `{"F": {"type": "string", "format": "binary"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := schemaTestLoad(t, schemaTestDoc(schemaTestOr(tt.version, "3.0.3"), tt.schemas))
			c := NewConverter(tt.dir)
			props := make(map[string]*jsonschema.Schema)
			for _, name := range tt.convert {
				key := name
				for i := 1; props[key] != nil; i++ {
					key = name + "#" + strconv.Itoa(i)
				}
				props[key] = c.Convert(schemaTestRef(t, doc, name))
			}
			got := schemaTestRoot(t, c, props)
			want := schemaTestJSON(t, tt.want)
			wantRoot := map[string]any{"type": "object", "properties": want}
			if defs, ok := want["$defs"]; ok {
				delete(want, "$defs")
				wantRoot["$defs"] = defs
			}
			if diff := cmp.Diff(wantRoot, got); diff != "" {
				t.Errorf("convert(%v) mismatch (-want +got):\n%s", tt.convert, diff)
			}
		})
	}
}

func schemaTestOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestSchemaConvertUnnamedShared covers schema pointers reused without a
// $ref (as openapi2conv and hand-built documents produce): the second use
// moves the schema to $defs under a generated, deterministic name.
func TestSchemaConvertUnnamedShared(t *testing.T) {
	build := func() map[string]any {
		shared := &openapi3.Schema{Type: &openapi3.Types{"string"}, MinLength: 2}
		titled := &openapi3.Schema{Title: "Postal code!", Type: &openapi3.Types{"string"}}
		self := &openapi3.Schema{Type: &openapi3.Types{"object"}}
		self.Properties = openapi3.Schemas{"next": {Value: self}}
		root := &openapi3.Schema{Type: &openapi3.Types{"object"}, Properties: openapi3.Schemas{
			"first":  {Value: shared},
			"second": {Value: shared},
			"zip":    {Value: titled},
			"zip2":   {Value: titled},
			"list":   {Value: self},
		}}
		c := NewConverter(Request)
		return schemaTestRoot(t, c, map[string]*jsonschema.Schema{"x": c.Convert(&openapi3.SchemaRef{Value: root})})
	}
	want := schemaTestJSON(t, `{"type": "object", "properties": {"x": {"type": "object", "properties": {
			"first": {"$ref": "#/$defs/first"}, "second": {"$ref": "#/$defs/first"},
			"list": {"$ref": "#/$defs/list"},
			"zip": {"$ref": "#/$defs/Postal_code"}, "zip2": {"$ref": "#/$defs/Postal_code"}}}},
		"$defs": {
			"first": {"type": "string", "minLength": 2},
			"list": {"type": "object", "properties": {"next": {"$ref": "#/$defs/list"}}},
			"Postal_code": {"title": "Postal code!", "type": "string"}}}`)
	got := build()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unnamed shared mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got, build()); diff != "" {
		t.Errorf("conversion not deterministic (-first +second):\n%s", diff)
	}
}

// TestSchemaConvertResultsFinal checks that a later convert call never
// rewrites an earlier result, so that callers may copy or annotate results.
func TestSchemaConvertResultsFinal(t *testing.T) {
	doc := schemaTestLoad(t, schemaTestDoc("3.0.3", `
    Address:
      type: object
      properties:
        city: {type: string}
    Order:
      type: object
      properties:
        ship: {$ref: '#/components/schemas/Address'}
    Customer:
      type: object
      properties:
        home: {$ref: '#/components/schemas/Address'}
        work: {$ref: '#/components/schemas/Address'}
`))
	c := NewConverter(Request)
	order := c.Convert(schemaTestRef(t, doc, "Order"))
	before, err := json.Marshal(order)
	if err != nil {
		t.Fatal(err)
	}
	annotated := *order // what a caller adding a description does
	annotated.Description = "The order."
	customer := c.Convert(schemaTestRef(t, doc, "Customer"))
	after, err := json.Marshal(order)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(before), string(after)); diff != "" {
		t.Errorf("first result changed by a later convert (-before +after):\n%s", diff)
	}
	got := schemaTestRoot(t, c, map[string]*jsonschema.Schema{"order": &annotated, "customer": customer})
	want := schemaTestJSON(t, `{"type": "object", "properties": {
			"order": {"type": "object", "description": "The order.", "properties": {"ship": {"type": "object", "properties": {"city": {"type": "string"}}}}},
			"customer": {"type": "object", "properties": {"home": {"$ref": "#/$defs/Address"}, "work": {"$ref": "#/$defs/Address"}}}},
		"$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}}}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestSchemaConvertNil(t *testing.T) {
	c := NewConverter(Request)
	got := schemaTestRoot(t, c, map[string]*jsonschema.Schema{
		"nil":        c.Convert(nil),
		"unresolved": c.Convert(&openapi3.SchemaRef{Ref: "#/components/schemas/Gone"}),
	})
	want := schemaTestJSON(t, `{"type": "object", "properties": {"nil": true,
		"unresolved": {"description": "Unresolved reference #/components/schemas/Gone."}}}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	if c.Defs() != nil {
		t.Errorf("defs() = %v, want nil", c.Defs())
	}
}

func TestSchemaRefName(t *testing.T) {
	tests := map[string]string{
		"":                             "",
		"#/components/schemas/Pet":     "Pet",
		"#/components/schemas/a~1b c":  "a_b_c",
		"common.yaml#/definitions/Err": "Err",
		"../models/pet.yaml":           "pet",
		"#/components/schemas/ünï":     "n",
	}
	for ref, want := range tests {
		if got := refName(ref); got != want {
			t.Errorf("schemaRefName(%q) = %q, want %q", ref, got, want)
		}
	}
}

// schemaTestLoadSpec loads a spec of testdata/specs as specloader would
// (Swagger 2.0 converted), or skips the test when kin-openapi itself cannot
// load it. Discriminator mappings into files that are not in the corpus
// (DigitalOcean's models/*.yml) are dropped first: kin resolves them eagerly
// although only the mapping's text is used.
func schemaTestLoadSpec(t testing.TB, path string) *openapi3.T {
	t.Helper()
	data := schemaTestMustRead(t, path)
	if strings.Contains(filepath.Base(path), ".2.0.") {
		var doc2 openapi2.T
		if err := openapi2.UnmarshalFromData(data, &doc2); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		doc, err := openapi2conv.ToV3(&doc2)
		if err != nil {
			t.Fatalf("%s: converting: %v", path, err)
		}
		return doc
	}
	if strings.HasSuffix(path, ".json") {
		var raw any
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		schemaTestDropFileMappings(raw)
		var err error
		if data, err = json.Marshal(raw); err != nil {
			t.Fatal(err)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	doc, err := loader.LoadFromDataWithPath(data, &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)})
	if err != nil {
		t.Skipf("kin-openapi cannot load %s (not a converter issue): %v", path, err)
	}
	return doc
}

func schemaTestDropFileMappings(v any) {
	switch v := v.(type) {
	case map[string]any:
		if d, ok := v["discriminator"].(map[string]any); ok {
			if m, ok := d["mapping"].(map[string]any); ok {
				for k, ref := range m {
					if s, _ := ref.(string); strings.Contains(s, "/") && !strings.HasPrefix(s, "#") {
						delete(m, k)
					}
				}
			}
		}
		for _, e := range v {
			schemaTestDropFileMappings(e)
		}
	case []any:
		for _, e := range v {
			schemaTestDropFileMappings(e)
		}
	}
}

// schemaTestOpSchemas lists the schemas a tool for op would convert:
// parameters, request bodies (every media type) and 2xx responses.
func schemaTestOpSchemas(op *openapi3.Operation, item *openapi3.PathItem) (req, resp []*openapi3.SchemaRef) {
	for _, p := range slices.Concat(item.Parameters, op.Parameters) {
		if p == nil || p.Value == nil {
			continue
		}
		if p.Value.Schema != nil {
			req = append(req, p.Value.Schema)
		}
		for _, ct := range sortedKeys(p.Value.Content) {
			req = append(req, p.Value.Content[ct].Schema)
		}
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		for _, ct := range sortedKeys(op.RequestBody.Value.Content) {
			req = append(req, op.RequestBody.Value.Content[ct].Schema)
		}
	}
	if op.Responses != nil {
		for _, code := range op.Responses.Keys() {
			r := op.Responses.Value(code)
			if !strings.HasPrefix(code, "2") || r == nil || r.Value == nil {
				continue
			}
			for _, ct := range sortedKeys(r.Value.Content) {
				resp = append(resp, r.Value.Content[ct].Schema)
			}
		}
	}
	return req, resp
}

// TestSchemaCorpus converts every schema reachable from every operation of
// every spec in testdata/specs, in both directions, and checks that the
// tool-shaped root resolves and marshals.
func TestSchemaCorpus(t *testing.T) {
	paths, err := filepath.Glob("../../testdata/specs/*.*.*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no specs: %v", err)
	}
	const maxToolSchema = 4 << 20
	var total struct{ specs, ops, schemas, roots, defs, badDefaults, bytes, maxBytes int }
	notes := map[string]int{"Pattern not enforced": 0, "Pattern property not enforced": 0, "Unknown type": 0, "Unresolved reference": 0, "Discriminator:": 0}
	for _, path := range paths {
		name := filepath.Base(path)
		if name == "MANIFEST.tsv" {
			continue
		}
		if (testing.Short() || raceEnabled) && largeSpec(path) {
			continue // minutes under -race: the run without -race (CI's corpus step) covers them
		}
		// Stripe's operations each reach most of its 1,000 components, so
		// resolving and marshaling every one takes minutes even without
		// -race: one operation in eight is checked (all of them are built
		// and resolved by the bridge's own corpus test).
		sample := 1
		if strings.HasPrefix(name, "stripe") {
			sample = 8
		}
		t.Run(name, func(t *testing.T) {
			doc := schemaTestLoadSpec(t, path)
			total.specs++
			if doc.Paths == nil {
				return
			}
			for _, p := range doc.Paths.Keys() {
				item := doc.Paths.Value(p)
				for _, method := range sortedKeys(item.Operations()) {
					op := item.Operations()[method]
					total.ops++
					if total.ops%sample != 0 {
						continue
					}
					req, resp := schemaTestOpSchemas(op, item)
					all := slices.Concat(req, resp)
					for _, dir := range []Direction{Request, Response} {
						c := NewConverter(dir)
						props := make(map[string]*jsonschema.Schema, len(all))
						for i, s := range all {
							props["x"+strconv.Itoa(i)] = c.Convert(s)
						}
						total.schemas += len(all)
						root := &jsonschema.Schema{Type: "object", Properties: props, Defs: c.Defs()}
						total.roots++
						total.defs += len(root.Defs)
						if _, err := root.Resolve(&jsonschema.ResolveOptions{}); err != nil {
							t.Errorf("%s %s (dir %d): Resolve: %v", method, p, dir, err)
							continue
						}
						if _, err := root.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
							total.badDefaults++
							t.Logf("%s %s (dir %d): a default does not validate: %v", method, p, dir, err)
						}
						data, err := json.Marshal(root)
						if err != nil {
							t.Errorf("%s %s (dir %d): Marshal: %v", method, p, dir, err)
							continue
						}
						if len(data) > maxToolSchema {
							t.Errorf("%s %s (dir %d): schema is %d bytes, over %d", method, p, dir, len(data), maxToolSchema)
						}
						for note := range notes {
							notes[note] += strings.Count(string(data), note)
						}
						total.bytes += len(data)
						total.maxBytes = max(total.maxBytes, len(data))
					}
				}
			}
		})
	}
	t.Logf("corpus: %d specs, %d operations, %d schema conversions, %d tool roots, %d $defs, %d roots with an invalid default, %d bytes total, largest root %d bytes",
		total.specs, total.ops, total.schemas, total.roots, total.defs, total.badDefaults, total.bytes, total.maxBytes)
	t.Logf("notes added to descriptions (counted per root): %v", notes)
}

// TestSchemaCircularSpec checks the recursive multipart body of
// schema-circular.3.0.yaml: it terminates and MultiPart refers to itself.
func TestSchemaCircularSpec(t *testing.T) {
	doc := schemaTestLoad(t, string(schemaTestMustRead(t, "../../testdata/specs/schema-circular.3.0.yaml")))
	body := doc.Paths.Value("/circular").Put.RequestBody.Value.Content["multipart/form-data"].Schema
	c := NewConverter(Request)
	got := schemaTestRoot(t, c, map[string]*jsonschema.Schema{"body": c.Convert(body)})
	defs, _ := got["$defs"].(map[string]any)
	mp, ok := defs["MultiPart"]
	if !ok {
		t.Fatalf("no $defs/MultiPart; $defs keys: %v", sortedKeys(defs))
	}
	data, _ := json.Marshal(mp)
	if !strings.Contains(string(data), `"$ref":"#/$defs/MultiPart"`) {
		t.Errorf("$defs/MultiPart has no self reference: %s", data)
	}
}

func schemaTestMustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// largeSpec reports a corpus spec over 600 KB, checked without -race only.
func largeSpec(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() > 600<<10
}

// TestConverterRelease: schemas handed back by Release come out of later
// converters empty, so that a conversion after many released ones encodes
// exactly as one by a converter that never saw reuse; and Release empties
// the schemas it hands back (a reused node keeps nothing of its past).
func TestConverterRelease(t *testing.T) {
	doc := schemaTestLoadSpec(t, "../../testdata/specs/asana.3.0.json")
	var refs []*openapi3.SchemaRef
	for _, name := range sortedKeys(doc.Components.Schemas) {
		refs = append(refs, schemaTestRef(t, doc, name))
		if len(refs) == 120 {
			break
		}
	}
	encode := func(c *Converter, r *openapi3.SchemaRef) string {
		s := c.Convert(r)
		root := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"x": s}, Defs: c.Defs()}
		data, err := Marshal(root)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		return string(data)
	}
	want := make([]string, len(refs))
	for i, r := range refs {
		want[i] = encode(NewConverter(Response), r) // never released: fresh nodes
	}
	var kept []*jsonschema.Schema
	for round := range 2 {
		for i, r := range refs {
			c := NewConverter(Response)
			if got := encode(c, r); got != want[i] {
				t.Fatalf("round %d, %s: after reuse\n got %.300s\nwant %.300s", round, r.Ref, got, want[i])
			}
			if i%10 == 0 {
				for j := range c.used {
					kept = append(kept, &c.chunks[0][j])
				}
			}
			c.Release()
		}
	}
	for _, n := range kept {
		if !reflect.ValueOf(*n).IsZero() {
			t.Fatalf("a released schema is not empty: %+v", *n)
		}
	}
}
