package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// draft7Reading is s as a draft-07 validator reads it, the dialect of the
// TypeScript SDK client's Ajv: prefixItems, minContains and maxContains
// are no keywords there (ignored), items applies to every item, and
// contains asks for at least one.
func draft7Reading(t *testing.T, s *jsonschema.Schema) *jsonschema.Resolved {
	t.Helper()
	raw, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "prefixItems")
			delete(x, "minContains")
			delete(x, "maxContains")
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	strip(v)
	raw, _ = json.Marshal(v)
	var d7 jsonschema.Schema
	if err := json.Unmarshal(raw, &d7); err != nil {
		t.Fatal(err)
	}
	r, err := d7.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestOutputTuplesReadAsDraft7: an answer that an output schema with
// prefixItems admits is admitted by a draft-07 reader too, in both
// declaring modes. The TypeScript SDK's client reads items as applying to
// every item, so items: false refused every tuple and an items schema the
// tuple's first members, and it failed the call.
func TestOutputTuplesReadAsDraft7(t *testing.T) {
	doc := schemaTestLoad(t, `openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /x:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  pair:
                    type: array
                    prefixItems: [{type: string}, {type: integer}]
                    items: false
                  rest:
                    type: array
                    prefixItems: [{type: string}]
                    items: {type: boolean}
                  nested: {$ref: '#/components/schemas/Row'}
components:
  schemas:
    Row:
      type: array
      maxItems: 5
      prefixItems: [{type: integer}]
      items: {type: string}
`)
	op := doc.Paths.Value("/x").Get
	answers := []string{
		`{"pair": ["a", 1]}`, `{"pair": ["a"]}`, `{"pair": []}`,
		`{"rest": ["a", true, false]}`, `{"rest": ["a"]}`,
		`{"nested": [1, "a", "b"]}`, `{"nested": [1]}`,
	}
	for _, mode := range []string{OutputTolerant, OutputStrict} {
		s, _ := BuildOutput(op, mode, nil)
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		d7 := draft7Reading(t, s)
		for _, a := range answers {
			var v map[string]any
			if err := json.Unmarshal([]byte(a), &v); err != nil {
				t.Fatal(err)
			}
			if r.Validate(v) != nil {
				t.Errorf("%s: %s does not conform", mode, a)
				continue
			}
			if err := d7.Validate(v); err != nil {
				t.Errorf("%s: %s conforms, a draft-07 reader refuses it: %v", mode, a, err)
			}
		}
		// The tuple stays closed where it was: a third pair member fails.
		if mode == OutputStrict && r.Validate(map[string]any{"pair": []any{"a", 1.0, 2.0}}) == nil {
			t.Errorf("strict: a pair of three conforms")
		}
	}
}

// TestOutputContainsReadAsDraft7: contains with minContains: 0 asks for
// nothing in 2020-12, and for one matching item in draft-07 (the
// TypeScript SDK client's reading), which failed the call of an answer
// without one.
func TestOutputContainsReadAsDraft7(t *testing.T) {
	doc := schemaTestLoad(t, `openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /x:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  c: {type: array, contains: {type: string}, minContains: 0, maxContains: 1}
                  d: {type: array, contains: {type: string}, maxContains: 1}
`)
	s, _ := BuildOutput(doc.Paths.Value("/x").Get, OutputStrict, nil)
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	d7 := draft7Reading(t, s)
	for _, a := range []string{`{"c": [1]}`, `{"c": []}`, `{"d": ["a", 1]}`} {
		var v map[string]any
		if err := json.Unmarshal([]byte(a), &v); err != nil {
			t.Fatal(err)
		}
		if r.Validate(v) != nil {
			t.Errorf("%s does not conform", a)
		} else if err := d7.Validate(v); err != nil {
			t.Errorf("%s conforms, a draft-07 reader refuses it: %v", a, err)
		}
	}
}

// TestOutputInheritedNames: a property named like a member of JavaScript's
// Object.prototype accepts anything in an output schema. Ajv, the
// TypeScript SDK client's validator, reads data.constructor and the like
// through the prototype: an answer without the member (which the schema
// allows) has an inherited function there, which no type admits, and the
// client failed the call.
func TestOutputInheritedNames(t *testing.T) {
	op := tolerantTestOp(t, `    Answer:
      type: object
      required: [season]
      properties:
        season: {type: string}
        constructor: {$ref: '#/components/schemas/Team'}
        toString: {type: string, description: Shown as text.}
        valueOf: {type: number}
    Team:
      type: object
      properties:
        hasOwnProperty: {type: boolean}
        name: {type: string}
`)
	for _, mode := range []string{OutputTolerant, OutputStrict} {
		s, _ := BuildOutput(op, mode, nil)
		got := tolerantTestJSON(t, s)
		props := got["properties"].(map[string]any)
		for _, name := range []string{"constructor", "toString", "valueOf"} {
			p, _ := props[name].(map[string]any)
			if p == nil || p["type"] != nil || p["$ref"] != nil || p["properties"] != nil {
				t.Errorf("%s: properties.%s = %v, want a schema that admits anything", mode, name, props[name])
			}
		}
		if d, _ := props["toString"].(map[string]any)["description"].(string); !strings.HasPrefix(d, "Shown as text.") {
			t.Errorf("%s: toString's description %q is lost", mode, d)
		}
		if props["season"].(map[string]any)["type"] == nil {
			t.Errorf("%s: season lost its type: %v", mode, props["season"])
		}
	}
}

// TestOutputFormatsAjvAsserts: a strict output schema keeps no format that
// ajv-formats asserts and the bridge's checker does not (iso-date-time,
// iso-time, json-pointer-uri-fragment): the TypeScript SDK's client would
// refuse an answer the bridge had declared conforming.
func TestOutputFormatsAjvAsserts(t *testing.T) {
	op := tolerantTestOp(t, `    Answer:
      type: object
      properties:
        a: {type: string, format: iso-date-time}
        b: {type: string, format: iso-time}
        c: {type: string, format: json-pointer-uri-fragment}
        d: {type: string, format: date-time}
        e: {type: string, format: password}
`)
	s, _ := BuildOutput(op, OutputStrict, nil)
	props := tolerantTestJSON(t, s)["properties"].(map[string]any)
	for name, want := range map[string]any{"a": nil, "b": nil, "c": nil, "d": "date-time", "e": "password"} {
		if got := props[name].(map[string]any)["format"]; got != want {
			t.Errorf("properties.%s.format = %v, want %v", name, got, want)
		}
	}
}
