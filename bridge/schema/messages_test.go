package schema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpbridge/mcpbridge/bridge/schema"
)

// argsSchema is a tool input schema using every keyword an argument error
// can come from.
const argsSchema = `{
  "type": "object",
  "required": ["limit"],
  "additionalProperties": {"not": {}},
  "properties": {
    "limit": {"type": "integer", "minimum": 1},
    "page": {"type": "integer", "minimum": 1, "maximum": 100},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "step": {"type": "integer", "multipleOf": 5},
    "name": {"type": "string", "minLength": 3, "maxLength": 8},
    "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
    "pin": {"type": "string", "minLength": 4, "maxLength": 4},
    "status": {"type": "string", "enum": ["available", "pending", "sold"]},
    "kind": {"const": "pet"},
    "verbose": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3, "uniqueItems": true},
    "when": {"type": "string", "format": "date-time"},
    "maybe": {"type": ["integer", "null"]},
    "either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]},
    "owner": {"$ref": "#/$defs/Owner"},
    "filter": {"type": "object", "minProperties": 1, "maxProperties": 2},
    "other": {"not": {"type": "string"}},
    "one": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
    "short": {"type": "string", "allOf": [{"maxLength": 2}]},
    "body": {
      "type": "object",
      "required": ["title"],
      "additionalProperties": {"not": {}},
      "minProperties": 1,
      "properties": {
        "title": {"type": "string", "minLength": 1},
        "labels": {"type": "array", "items": {"$ref": "#/$defs/Label"}}
      }
    }
  },
  "$defs": {
    "Owner": {"type": "object", "properties": {"id": {"type": "integer", "minimum": 0}}, "dependentRequired": {"id": ["org"]}},
    "Label": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}
  }
}`

func resolvedArgsSchema(t *testing.T) (*jsonschema.Schema, *jsonschema.Resolved) {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(argsSchema), &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &s, r
}

func decodeArgs(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestExplain checks the message for each keyword an argument can fail,
// exactly, and that jsonschema-go (the validator calls use) rejects the
// same arguments.
func TestExplain(t *testing.T) {
	root, res := resolvedArgsSchema(t)
	tests := []struct {
		keyword, args, want string
	}{
		{"type", `{"limit": "ten"}`, `"limit" must be an integer >= 1, got "ten"`},
		{"type (fraction)", `{"limit": 1.5}`, `"limit" must be an integer >= 1, got 1.5`},
		{"type (object)", `{"limit": {"x": 1}}`, `"limit" must be an integer >= 1, got {"x":1}`},
		{"type (boolean)", `{"limit": 1, "verbose": "yes"}`, `"verbose" must be a boolean, got "yes"`},
		{"type (nullable)", `{"limit": 1, "maybe": "x"}`, `"maybe" must be an integer or null, got "x"`},
		{"required", `{}`, `"limit" is required (an integer >= 1)`},
		{"required (nested)", `{"limit": 1, "body": {"labels": []}}`, `"body.title" is required (a string of at least 1 character)`},
		{"required (in an array item)", `{"limit": 1, "body": {"title": "t", "labels": [{"name": "a"}, {}]}}`, `"body.labels[1].name" is required (a string)`},
		{"enum", `{"limit": 1, "status": "gone"}`, `"status" must be one of "available", "pending" or "sold", got "gone"`},
		{"const", `{"limit": 1, "kind": "car"}`, `"kind" must be exactly "pet", got "car"`},
		{"minimum", `{"limit": 0}`, `"limit" must be an integer >= 1, got 0`},
		{"maximum", `{"limit": 1, "page": 101}`, `"page" must be an integer between 1 and 100, got 101`},
		{"exclusiveMinimum", `{"limit": 1, "ratio": 0}`, `"ratio" must be a number > 0 and < 1, got 0`},
		{"exclusiveMaximum", `{"limit": 1, "ratio": 1}`, `"ratio" must be a number > 0 and < 1, got 1`},
		{"multipleOf", `{"limit": 1, "step": 7}`, `"step" must be an integer a multiple of 5, got 7`},
		// A 3.1 $ref with a sibling maxLength, as the converter inlines it.
		{"typeless constraint", `{"limit": 1, "short": "abcd"}`, `"short" must be a string of at most 2 characters, got "abcd" (4 characters)`},
		{"minLength", `{"limit": 1, "name": "ab"}`, `"name" must be a string of 3 to 8 characters, got "ab" (2 characters)`},
		{"maxLength", `{"limit": 1, "name": "abcdefghij"}`, `"name" must be a string of 3 to 8 characters, got "abcdefghij" (10 characters)`},
		{"exact length", `{"limit": 1, "pin": "12345"}`, `"pin" must be a string of exactly 4 characters, got "12345" (5 characters)`},
		{"pattern", `{"limit": 1, "code": "abc"}`, `"code" must be a string matching ^[A-Z]{3}$, got "abc"`},
		{"additionalProperties", `{"limit": 1, "limt": 2}`, `unknown argument "limt" (did you mean "limit"?); the tool takes "body", "code", "either", "filter", "kind", "limit", "maybe", "name", "one", "other", "owner", "page", … (20 in all)`},
		{"additionalProperties (nested)", `{"limit": 1, "body": {"title": "t", "color": "red"}}`, `"body" has no property "color"; it takes "labels", "title"`},
		{"additionalProperties (a transposition)", `{"limit": 1, "body": {"title": "t", "lables": []}}`, `"body" has no property "lables" (did you mean "labels"?); it takes "labels", "title"`},
		{"minItems", `{"limit": 1, "tags": []}`, `"tags" must be an array of strings with 1 to 3 items without duplicates, got [] (0 items)`},
		{"maxItems", `{"limit": 1, "tags": ["a", "b", "c", "d"]}`, `"tags" must be an array of strings with 1 to 3 items without duplicates, got ["a","b","c","d"] (4 items)`},
		{"uniqueItems", `{"limit": 1, "tags": ["a", "a"]}`, `"tags" must be an array of strings with 1 to 3 items without duplicates, got ["a","a"]`},
		{"items type", `{"limit": 1, "tags": ["a", 2]}`, `"tags[1]" must be a string, got 2`},
		{"minProperties", `{"limit": 1, "filter": {}}`, `"filter" must have at least 1 property, got 0`},
		{"maxProperties", `{"limit": 1, "filter": {"a": 1, "b": 2, "c": 3}}`, `"filter" must have at most 2 properties, got 3`},
		{"not", `{"limit": 1, "other": "s"}`, `"other" must not be a string, got "s"`},
		{"oneOf (several match)", `{"limit": 1, "one": 2}`, `"one" matches more than one of the alternatives its schema allows (oneOf), got 2; give a value that fits exactly one: an integer, or a number`},
		{"oneOf (none matches)", `{"limit": 1, "one": "x"}`, `"one" must be an integer, or a number, got "x"`},
		{"no arguments at all", `{"limit": 1, "filter": []}`, `"filter" must be an object with at least 1 property, got []`},
		{"anyOf", `{"limit": 1, "either": "x"}`, `"either" must be an integer, or a boolean, got "x"`},
		{"$ref", `{"limit": 1, "owner": {"id": -1, "org": "x"}}`, `"owner.id" must be an integer >= 0, got -1`},
		{"dependentRequired", `{"limit": 1, "owner": {"id": 1}}`, `"owner.org" is required too, since "owner.id" is given`},
		{"long value", `{"limit": "` + strings.Repeat("x", 100) + `"}`, `"limit" must be an integer >= 1, got "` + strings.Repeat("x", 50) + `"…`},
	}
	for _, tt := range tests {
		t.Run(tt.keyword, func(t *testing.T) {
			args := decodeArgs(t, tt.args)
			if err := res.Validate(args); err == nil {
				t.Fatalf("jsonschema-go accepts %s", tt.args)
			}
			if got := schema.Explain(args, root); got != tt.want {
				t.Errorf("Explain(%s)\n got %s\nwant %s", tt.args, got, tt.want)
			}
		})
	}
}

// TestExplainHugeUnknownName checks that a huge unknown argument name is
// not compared rune by rune with every declared one: a 3 MiB name sent to
// a tool of 40 parameters took 10 s and 400 MB (a full edit-distance
// matrix per parameter) to say it is unknown.
func TestExplainHugeUnknownName(t *testing.T) {
	root, _ := resolvedArgsSchema(t)
	args := decodeArgs(t, `{"limit": 1, "`+strings.Repeat("k", 1<<20)+`": 2}`)
	var got string
	allocs := testing.AllocsPerRun(1, func() { got = schema.Explain(args, root) })
	if !strings.HasPrefix(got, `unknown argument "kkk`) || strings.Contains(got, "did you mean") {
		t.Errorf("Explain = %.80s…; want the unknown argument, no suggestion", got)
	}
	if allocs > 10000 {
		t.Errorf("Explain made %.0f allocations for one unknown name; want a few", allocs)
	}
}

// TestExplainAccepts checks that Explain finds nothing in arguments the
// validator accepts, formats included (jsonschema-go does not assert them
// on arguments, so neither may a message).
func TestExplainAccepts(t *testing.T) {
	root, res := resolvedArgsSchema(t)
	for _, in := range []string{`{"limit": 1}`, `{"limit": 1, "when": "not a date"}`, `{"limit": 3, "maybe": null, "either": true, "tags": ["a"]}`} {
		args := decodeArgs(t, in)
		if err := res.Validate(args); err != nil {
			t.Fatalf("jsonschema-go rejects %s: %v", in, err)
		}
		if got := schema.Explain(args, root); got != "" {
			t.Errorf("Explain(%s) = %q, want nothing", in, got)
		}
	}
}

// TestCoerce checks which strings become numbers and booleans.
func TestCoerce(t *testing.T) {
	root, res := resolvedArgsSchema(t)
	tests := []struct {
		in, want string
		changed  bool
	}{
		{`{"limit": "1"}`, `{"limit":1}`, true},
		{`{"limit": "2", "ratio": "0.5", "verbose": "true"}`, `{"limit":2,"ratio":0.5,"verbose":true}`, true},
		{`{"limit": 1, "verbose": "FALSE"}`, `{"limit":1,"verbose":false}`, true},
		{`{"limit": 1, "maybe": "7"}`, `{"limit":1,"maybe":7}`, true},
		{`{"limit": "ten"}`, `{"limit":"ten"}`, false},
		{`{"limit": "1.5"}`, `{"limit":"1.5"}`, false},
		{`{"limit": 1, "ratio": "NaN"}`, `{"limit":1,"ratio":"NaN"}`, false},
		{`{"limit": 1, "name": "123"}`, `{"limit":1,"name":"123"}`, false},           // a string is wanted
		{`{"limit": 1, "either": "1"}`, `{"either":"1","limit":1}`, false},           // alternatives: left alone
		{`{"limit": 1, "owner": {"id": "4"}}`, `{"limit":1,"owner":{"id":4}}`, true}, // through $ref
		{`{"limit": 1, "verbose": "yes"}`, `{"limit":1,"verbose":"yes"}`, false},
	}
	for _, tt := range tests {
		args := decodeArgs(t, tt.in)
		changed := schema.Coerce(args, root)
		got, _ := json.Marshal(args)
		if changed != tt.changed || string(got) != tt.want {
			t.Errorf("Coerce(%s) = %s, %v; want %s, %v", tt.in, got, changed, tt.want, tt.changed)
		}
		if tt.changed && strings.Contains(tt.in, `"limit": "`) {
			if err := res.Validate(args); err != nil {
				t.Errorf("coerced %s still fails: %v", got, err)
			}
		}
	}
}

// TestDescribeAt checks the fallback description of a schema location.
func TestDescribeAt(t *testing.T) {
	root, _ := resolvedArgsSchema(t)
	for ptr, want := range map[string]string{
		"/properties/limit":                        "an integer >= 1",
		"/properties/body/properties/labels/items": "an object",
		"/$defs/Owner/properties/id":               "an integer >= 0",
		"/properties/either/anyOf/1":               "a boolean",
		"/properties/nope":                         "",
		"/properties/status":                       `one of "available", "pending" or "sold"`,
	} {
		if got := schema.DescribeAt(root, ptr); got != want {
			t.Errorf("DescribeAt(%s) = %q, want %q", ptr, got, want)
		}
	}
}
