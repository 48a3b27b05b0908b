package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// tolerantTestOp is an operation answering 200 with the component Answer.
func tolerantTestOp(t *testing.T, schemas string) *openapi3.Operation {
	t.Helper()
	doc := schemaTestLoad(t, `openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /x:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Answer'}
components:
  schemas:
`+schemas)
	return doc.Paths.Value("/x").Get
}

func tolerantTestJSON(t *testing.T, s *jsonschema.Schema) map[string]any {
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

func TestTolerant(t *testing.T) {
	op := tolerantTestOp(t, `    Answer:
      type: object
      required: [id, status]
      additionalProperties: false
      properties:
        id: {type: integer, minimum: 1}
        status: {type: string, enum: [open, closed], description: State.}
        code: {type: string, pattern: '^[A-Z]{3}$', minLength: 3, maxLength: 3}
        when: {type: string, format: date-time}
        api_key: {type: integer}
        tags:
          type: array
          minItems: 1
          uniqueItems: true
          items: {type: string}
        owner: {$ref: '#/components/schemas/Owner'}
        pet:
          oneOf:
            - {type: object, properties: {bark: {type: boolean}}, required: [bark]}
            - {type: object, properties: {meow: {type: boolean}}, required: [meow]}
        not_this:
          not: {type: string}
    Owner:
      type: object
      nullable: true
      required: [name]
      properties:
        name: {type: string}
`)
	s, reps := BuildOutput(op, OutputTolerant, func(name string) bool { return strings.HasSuffix(name, "_key") })
	if len(reps) != 0 {
		t.Errorf("repairs = %v, want none", reps)
	}
	got := tolerantTestJSON(t, s)
	want := schemaTestJSON(t, `{
	  "type": "object",
	  "properties": {
	    "api_key": {"type": ["integer", "null", "string"]},
	    "code": {"type": ["string", "null"], "description": "Pattern: ^[A-Z]{3}$ Minimum length 3. Maximum length 3."},
	    "id": {"type": ["integer", "null"], "description": "Minimum 1."},
	    "not_this": {},
	    "owner": {"type": ["object", "null"], "properties": {"name": {"type": ["string", "null"]}}},
	    "pet": {"anyOf": [
	      {"type": ["object", "null"], "properties": {"bark": {"type": ["boolean", "null"]}}},
	      {"type": ["object", "null"], "properties": {"meow": {"type": ["boolean", "null"]}}}
	    ]},
	    "status": {"type": ["string", "null"], "description": "State.\n\nOne of: \"open\", \"closed\"."},
	    "tags": {"type": ["array", "null"], "items": {"type": ["string", "null"]}, "description": "Minimum items 1."},
	    "when": {"type": ["string", "null"], "description": "Format: date-time."}
	  }
	}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tolerant schema mismatch (-want +got):\n%s", diff)
	}

	// What a drifted answer looks like, and that it validates.
	res, err := s.Resolve(&jsonschema.ResolveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, answer := range []string{
		`{}`,
		`{"id": null, "status": "pending", "code": "toolong", "when": "yesterday", "api_key": "[REDACTED]",
		  "tags": [], "owner": null, "pet": {"bark": true, "meow": true}, "not_this": "x", "extra": 1}`,
		`{"owner": {"name": null, "more": [1]}, "pet": null, "tags": [null, "a", "a"]}`,
	} {
		var v map[string]any
		if err := json.Unmarshal([]byte(answer), &v); err != nil {
			t.Fatal(err)
		}
		if err := res.Validate(v); err != nil {
			t.Errorf("tolerant schema rejects %s: %v", answer, err)
		}
	}
}

func TestBuildOutputModes(t *testing.T) {
	op := tolerantTestOp(t, `    Answer:
      type: object
      required: [id]
      properties:
        id: {type: integer}
`)
	if s, _ := BuildOutput(op, OutputOff, nil); s != nil {
		t.Errorf("off: got a schema")
	}
	s, _ := BuildOutput(op, OutputStrict, nil)
	if got := tolerantTestJSON(t, s); !cmp.Equal(got, schemaTestJSON(t, `{"type":"object","required":["id"],"properties":{"id":{"type":"integer"}}}`)) {
		t.Errorf("strict: %v", got)
	}
	for _, m := range []string{"", OutputTolerant, OutputStrict, OutputOff} {
		if !ValidOutputMode(m) {
			t.Errorf("ValidOutputMode(%q) = false", m)
		}
	}
	if ValidOutputMode("lenient") {
		t.Error(`ValidOutputMode("lenient") = true`)
	}
}

// TestOutputBodiless: 204 and 205 never give an output schema, even when
// a spec puts content there, and an operation answering only those has
// none.
func TestOutputBodiless(t *testing.T) {
	doc := schemaTestLoad(t, `openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /a:
    delete:
      responses:
        '204': {description: gone, content: {application/json: {schema: {type: object}}}}
  /b:
    post:
      responses:
        '205': {description: reset}
        '204': {description: gone}
  /c:
    put:
      responses:
        '204': {description: gone}
        '202': {description: accepted, content: {application/json: {schema: {type: object, properties: {job: {type: string}}}}}}
`)
	for _, p := range []string{"/a", "/b"} {
		for _, op := range doc.Paths.Value(p).Operations() {
			if s, _ := BuildOutput(op, OutputTolerant, nil); s != nil {
				t.Errorf("%s: an output schema for a bodiless answer", p)
			}
		}
	}
	if s, _ := BuildOutput(doc.Paths.Value("/c").Put, OutputTolerant, nil); s == nil || s.Properties["job"] == nil {
		t.Errorf("/c: want the 202 schema, got %v", s)
	}
}
