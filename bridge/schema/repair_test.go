package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// repairTestRoot converts the component schemas into a tool root (as
// buildTool does), repairs it and returns it as JSON with the repairs.
func repairTestRoot(t *testing.T, dir Direction, schemas string, names ...string) (map[string]any, []Repair, *jsonschema.Schema) {
	t.Helper()
	doc := schemaTestLoad(t, schemaTestDoc("3.0.3", schemas))
	c := NewConverter(dir)
	props := map[string]*jsonschema.Schema{}
	for _, n := range names {
		props[n] = c.Convert(schemaTestRef(t, doc, n))
	}
	root := &jsonschema.Schema{Type: "object", Properties: props, Defs: c.Defs()}
	reps := append(c.Repairs(), RepairSchema(root, "input")...)
	if _, err := root.Resolve(&jsonschema.ResolveOptions{}); err != nil {
		t.Fatalf("Resolve after repair: %v", err)
	}
	return repairTestJSON(t, root), reps, root
}

func TestRepairSchema(t *testing.T) {
	tests := []struct {
		name, schemas string
		names         []string
		want          string   // the root, JSON
		repairs       []string // "where | substring of what"
	}{{
		name: "enum values coerced to the type, or dropped",
		schemas: `    N: {type: integer, enum: ["1", 2, "x", "03"]}
    S: {type: string, enum: [1, 2.5, true, open]}
    B: {type: boolean, enum: ["true", "no"]}
    E: {type: integer, enum: [a, b]}
    C: {type: string, enum: [a], nullable: true}
    O: {type: object, enum: [DISABLE, ENABLE]}
    M: {type: integer, enum: [a, 1]}
`,
		names: []string{"N", "S", "B", "E", "C", "O", "M"},
		want: `{"type":"object","properties":{
		  "N":{"type":"integer","enum":[1,2]},
		  "S":{"type":"string","enum":["1","2.5","true","open"]},
		  "B":{"type":"boolean","enum":[true]},
		  "E":{"type":"string","enum":["a","b"]},
		  "C":{"type":["string","null"],"enum":["a",null]},
		  "O":{"type":"string","enum":["DISABLE","ENABLE"]},
		  "M":{"type":"integer","enum":[1]}}}`,
		repairs: []string{
			`input#/properties/B/enum | coerced "true" → true; dropped "no"`,
			`input#/properties/E/type | type integer, but every enum value is a string: type set to string`,
			`input#/properties/M/enum | dropped "a"`,
			`input#/properties/O/type | type object, but every enum value is a string: type set to string`,
			`input#/properties/N/enum | coerced "1" → 1; dropped "x", "03"`,
			`input#/properties/S/enum | coerced 1 → "1", 2.5 → "2.5", true → "true"`,
		},
	}, {
		name: "allOf of closed objects: each declares the others' properties",
		schemas: `    Both:
      allOf:
        - {type: object, additionalProperties: false, properties: {a: {type: string}}}
        - {type: object, additionalProperties: false, properties: {b: {type: integer}}}
`,
		names: []string{"Both"},
		want: `{"type":"object","properties":{"Both":{"allOf":[
		  {"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"},"b":{}}},
		  {"type":"object","additionalProperties":false,"properties":{"a":{},"b":{"type":"integer"}}}]}}}`,
		repairs: []string{
			`input#/properties/Both/allOf/0 | siblings declare "b"`,
			`input#/properties/Both/allOf/1 | siblings declare "a"`,
		},
	}, {
		name: "a closed $defs branch is copied, the shared body stays closed",
		schemas: `    Base: {type: object, additionalProperties: false, properties: {id: {type: integer}}}
    Ext:
      allOf:
        - $ref: '#/components/schemas/Base'
        - {type: object, properties: {extra: {type: string}, parent: {$ref: '#/components/schemas/Base'}}}
`,
		names: []string{"Ext"},
		want: `{"type":"object","properties":{
		  "Ext":{"allOf":[
		    {"type":"object","additionalProperties":false,"properties":{"id":{"type":"integer"},"extra":{},"parent":{}}},
		    {"type":"object","properties":{"extra":{"type":"string"},"parent":{"$ref":"#/$defs/Base"}}}]}},
		  "$defs":{"Base":{"type":"object","additionalProperties":false,"properties":{"id":{"type":"integer"}}}}}`,
		repairs: []string{`input#/properties/Ext/allOf/0 | siblings declare "extra", "parent"`},
	}, {
		name: "closed parent next to an allOf that declares more",
		schemas: `    P:
      type: object
      additionalProperties: false
      properties: {own: {type: string}}
      allOf:
        - {type: object, properties: {inherited: {type: string}}}
`,
		names: []string{"P"},
		want: `{"type":"object","properties":{"P":{"type":"object","additionalProperties":false,
		  "properties":{"own":{"type":"string"},"inherited":{}},
		  "allOf":[{"type":"object","properties":{"inherited":{"type":"string"}}}]}}}`,
		repairs: []string{`input#/properties/P | allOf declares "inherited"`},
	}, {
		// An open object keeps a required name it does not declare, and
		// declares it accepting anything, so that the model sees it
		// described.
		name: "required entries an object does not declare",
		schemas: `    R:
      type: object
      additionalProperties: false
      required: [a, ghost, x-1]
      properties: {a: {type: string}}
      patternProperties: {'^x-': {type: string}}
    Open: {type: object, required: [ghost], properties: {a: {type: string}}}
`,
		names: []string{"R", "Open"},
		want: `{"type":"object","properties":{
		  "R":{"type":"object","additionalProperties":false,"required":["a","x-1"],"properties":{"a":{"type":"string"}},"patternProperties":{"^x-":{"type":"string"}}},
		  "Open":{"type":"object","required":["ghost"],"properties":{"a":{"type":"string"},
		    "ghost":{"description":"Required by the API, whose spec does not describe it: any value is accepted."}}}}}`,
		repairs: []string{
			`input#/properties/R/required | required "ghost", which the closed object does not declare: dropped`,
			`input#/properties/Open/required | required "ghost", which the object does not declare: declared, accepting any value`,
		},
	}, {
		name: "defaults and examples that break their own schema",
		schemas: `    D: {type: integer, minimum: 1, default: 0, example: 5}
    X: {type: string, enum: [a, b], default: c, example: z}
    Ok: {type: string, default: fine, example: fine}
    Obj:
      type: object
      required: [id]
      properties: {id: {type: integer}}
      example: {name: no id}
`,
		names: []string{"D", "X", "Ok", "Obj"},
		want: `{"type":"object","properties":{
		  "D":{"type":"integer","minimum":1,"examples":[5]},
		  "X":{"type":"string","enum":["a","b"]},
		  "Ok":{"type":"string","default":"fine","examples":["fine"]},
		  "Obj":{"type":"object","required":["id"],"properties":{"id":{"type":"integer"}}}}}`,
		repairs: []string{
			`input#/properties/D/default | default 0 violates its schema ((root): below minimum)`,
			`input#/properties/Obj/examples/0 | missing required property "id"`,
			`input#/properties/X/default | not one of the enum values`,
			`input#/properties/X/examples/0 | not one of the enum values`,
		},
	}, {
		name: "patterns rewritten for JavaScript or dropped",
		schemas: `    Slug: {type: string, pattern: '^[a-z0-9\-\_]+$'}
    Ci: {type: string, pattern: '(?i)^[a-f]+$'}
`,
		names: []string{"Slug", "Ci"},
		want: `{"type":"object","properties":{
		  "Slug":{"type":"string","pattern":"^[a-z0-9\\-_]+$"},
		  "Ci":{"type":"string","description":"Pattern not enforced: (?i)^[a-f]+$"}}}`,
		repairs: []string{
			`input pattern in #/components/schemas/Slug | rewritten as "^[a-z0-9\\-_]+$"`,
			`input pattern in #/components/schemas/Ci | dropped: inline flags`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reps, _ := repairTestRoot(t, Request, tt.schemas, tt.names...)
			if diff := cmp.Diff(schemaTestJSON(t, tt.want), got); diff != "" {
				t.Errorf("repaired schema mismatch (-want +got):\n%s", diff)
			}
			var gotReps []string
			for _, r := range reps {
				gotReps = append(gotReps, r.Where+" | "+r.What)
			}
			if len(gotReps) != len(tt.repairs) {
				t.Fatalf("repairs:\n%s\nwant %d like:\n%s", strings.Join(gotReps, "\n"), len(tt.repairs), strings.Join(tt.repairs, "\n"))
			}
			for _, w := range tt.repairs {
				where, what, _ := strings.Cut(w, " | ")
				found := false
				for _, r := range reps {
					found = found || r.Where == where && strings.Contains(r.What, what)
				}
				if !found {
					t.Errorf("no repair at %s containing %q; got:\n%s", where, what, strings.Join(gotReps, "\n"))
				}
			}
		})
	}
}

// TestRepairSchemaMakesSatisfiable: after repair, the values the spec
// meant are accepted.
func TestRepairSchemaMakesSatisfiable(t *testing.T) {
	_, _, root := repairTestRoot(t, Request, `    Both:
      allOf:
        - {type: object, additionalProperties: false, required: [a], properties: {a: {type: string}}}
        - {type: object, additionalProperties: false, required: [b], properties: {b: {type: integer}}}
`, "Both")
	res, err := root.Resolve(&jsonschema.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	_ = json.Unmarshal([]byte(`{"Both": {"a": "x", "b": 1}}`), &v)
	if err := res.Validate(v); err != nil {
		t.Errorf("repaired allOf rejects a value with both members: %v", err)
	}
	_ = json.Unmarshal([]byte(`{"Both": {"a": "x", "b": 1, "c": true}}`), &v)
	if err := res.Validate(v); err == nil {
		t.Errorf("repaired allOf accepts an undeclared member: it should stay closed")
	}
}

func repairTestJSON(t *testing.T, s *jsonschema.Schema) map[string]any {
	t.Helper()
	raw, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRepairSchemaHugeEnum: the enum repair drops duplicates in one pass; it
// compared each value with every kept one, so an enum of 100,000 values (a
// spec's country or SKU list) took minutes at startup.
func TestRepairSchemaHugeEnum(t *testing.T) {
	const n = 200_000
	enum := make([]any, 0, n+2)
	for i := range n {
		enum = append(enum, fmt.Sprintf("v%d", i))
	}
	enum = append(enum, 7.0, "v7") // 7 is coerced to "7"; "v7" is a duplicate
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"q": {Type: "string", Enum: enum},
	}}
	done := make(chan []Repair, 1)
	go func() { done <- RepairSchema(s, "input") }()
	select {
	case reps := <-done:
		got := s.Properties["q"].Enum
		if len(got) != n+1 || got[n] != "7" {
			t.Fatalf("enum after repair: %d values, last %v; want %d, last \"7\" (repairs %v)", len(got), got[len(got)-1], n+1, reps)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RepairSchema of an enum of 200,000 values did not finish in 10s")
	}
}

// TestDynamicRefNoted: a 3.1 $dynamicRef is not followed (the tool schema
// accepts anything there), and a repair note says so, so that `tools
// --stats` and the start's warnings show the widening instead of 0 repairs.
func TestDynamicRefNoted(t *testing.T) {
	doc := schemaTestLoad(t, schemaTestDoc("3.1.0", `    Tree:
      $dynamicAnchor: node
      type: object
      properties:
        children:
          type: array
          items: {$dynamicRef: "#node"}
`))
	c := NewConverter(Request)
	c.Convert(schemaTestRef(t, doc, "Tree"))
	found := false
	for _, r := range c.Repairs() {
		if strings.Contains(r.What, `$dynamicRef "#node" not followed`) {
			found = true
		}
	}
	if !found {
		t.Errorf("repairs %v; want one naming the $dynamicRef not followed", c.Repairs())
	}
}

// TestHiddenNotRequired: a property the direction hides (readOnly in a
// request) is no longer demanded by a list beside it: the required list of
// an inline allOf member, the schema's own required list when an allOf
// member declares the property, dependentRequired and then. Before, such
// a schema demanded an argument the tool does not describe, and beside
// unevaluatedProperties: false accepted no value at all. A writeOnly one
// in a response likewise.
func TestHiddenNotRequired(t *testing.T) {
	doc := schemaTestLoad(t, schemaTestDoc("3.1.0", `    Id: {type: integer, readOnly: true}
    Secret: {type: string, writeOnly: true}
    Base:
      type: object
      properties:
        id: {$ref: '#/components/schemas/Id'}
        name: {type: string}
        password: {$ref: '#/components/schemas/Secret'}
    MemberRequires:
      allOf:
        - $ref: '#/components/schemas/Base'
        - {required: [id, name, password]}
    ParentRequires:
      allOf:
        - $ref: '#/components/schemas/Base'
      required: [id, password]
      unevaluatedProperties: false
    Conditional:
      type: object
      properties:
        id: {$ref: '#/components/schemas/Id'}
        name: {type: string}
      required: [id, name]
      dependentRequired: {name: [id]}
      if: {required: [name]}
      then: {required: [id]}
`))
	conv := func(dir Direction, name string) string {
		c := NewConverter(dir)
		b, err := json.Marshal(c.Convert(schemaTestRef(t, doc, name)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tt := range []struct {
		dir    Direction
		name   string
		want   string // a fragment the schema must hold
		forbid []string
	}{
		{Request, "MemberRequires", `{"required":["name","password"]}`, []string{`"id"`}},
		{Request, "ParentRequires", `"required":["password"]`, []string{`"id"`}},
		{Request, "Conditional", `"required":["name"]`, []string{`"id"`, `dependentRequired`}},
		{Response, "MemberRequires", `{"required":["id","name"]}`, []string{`"password"`}},
		{Response, "ParentRequires", `"required":["id"]`, []string{`"password"`}},
	} {
		got := conv(tt.dir, tt.name)
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s (%v): %s\nwant it to hold %s", tt.name, tt.dir, got, tt.want)
		}
		for _, f := range tt.forbid {
			if strings.Contains(got, f) {
				t.Errorf("%s (%v): %s\nholds %s", tt.name, tt.dir, got, f)
			}
		}
	}
}
