package schema

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

func reduceTestSchema(t *testing.T, s string) *jsonschema.Schema {
	t.Helper()
	var out jsonschema.Schema
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func reduceTestValue(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestReduce(t *testing.T) {
	const strict = `{"type":"object","required":["id"],"additionalProperties":false,
	  "properties":{
	    "id":{"type":"integer"},
	    "name":{"type":"string","maxLength":5},
	    "state":{"type":"string","enum":["on","off"]},
	    "owner":{"$ref":"#/$defs/Owner"},
	    "tags":{"type":"array","items":{"type":"string"}},
	    "pet":{"oneOf":[
	      {"type":"object","required":["kind"],"additionalProperties":false,"properties":{"kind":{"const":"dog"},"bark":{"type":"boolean"},"name":{"type":"string"}}},
	      {"type":"object","required":["kind"],"additionalProperties":false,"properties":{"kind":{"const":"cat"},"meow":{"type":"boolean"},"name":{"type":"string"}}}]}},
	  "$defs":{"Owner":{"type":"object","properties":{"login":{"type":"string"},"id":{"type":"integer"}}}}}`
	const tolerant = `{"type":"object","properties":{"n":{"type":["integer","null"]},"list":{"type":["array","null"],
	  "items":{"type":["object","null"],"properties":{"v":{"type":["string","null"]}}}}}}`
	tests := []struct {
		name, schema, in, want string
		removed                []string
		ok                     bool
		first                  string
	}{
		{name: "conforming: unchanged", schema: strict, in: `{"id":1,"name":"ab"}`, want: `{"id":1,"name":"ab"}`, ok: true},
		{name: "big integers keep their digits", schema: strict, in: `{"id":12345678901234567890}`, want: `{"id":12345678901234567890}`, ok: true},
		{
			name: "wrong scalar, enum, extra property: removed", schema: strict,
			in:      `{"id":7,"name":12,"state":"maybe","extra":true,"tags":["a",3,"b"],"owner":{"login":5,"id":2}}`,
			want:    `{"id":7,"owner":{"id":2},"tags":["a","b"]}`,
			removed: []string{"/extra", "/name", "/owner/login", "/state", "/tags/1"}, ok: true,
			first: "/extra: no value is allowed here",
		},
		{
			name: "oneOf: the branch meant is repaired", schema: strict,
			in: `{"id":1,"pet":{"kind":"cat","meow":"loud","name":"Tom"}}`, want: `{"id":1,"pet":{"kind":"cat","name":"Tom"}}`,
			removed: []string{"/pet/meow"}, ok: true,
		},
		{name: "required member of the wrong type: no reduction", schema: strict, in: `{"id":"x"}`, ok: false, first: "/id: type string, want integer"},
		{name: "top level not an object", schema: tolerant, in: `[1,2]`, ok: false, first: "(root): type array, want object"},
		{
			name: "tolerant: deep items", schema: tolerant,
			in: `{"n":1.5,"list":[{"v":"a"},{"v":1},null,7]}`, want: `{"list":[{"v":"a"},{},null]}`,
			removed: []string{"/list/1/v", "/list/3", "/n"}, ok: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := reduceTestSchema(t, tt.schema)
			out, red, ok := Reduce(reduceTestValue(t, tt.in), root)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tt.ok, red)
			}
			if tt.first != "" && red.First != tt.first {
				t.Errorf("First = %q, want %q", red.First, tt.first)
			}
			if !ok {
				return
			}
			b, _ := json.Marshal(out)
			if string(b) != string(mustCompact(t, tt.want)) {
				t.Errorf("Reduce = %s, want %s", b, tt.want)
			}
			got := red.Removed
			if len(got) == 0 {
				got = nil
			}
			sortStrings(got)
			if diff := cmp.Diff(tt.removed, got); diff != "" {
				t.Errorf("Removed mismatch (-want +got):\n%s", diff)
			}
			res, err := root.Resolve(&jsonschema.ResolveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			if err := res.Validate(m); err != nil {
				t.Errorf("the reduced value does not validate: %v", err)
			}
		})
	}
}

func mustCompact(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
