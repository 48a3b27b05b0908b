package schema

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func TestRecursiveChoice(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		want         bool
	}{
		{"recursive through oneOf", `{"$ref":"#/$defs/N","$defs":{"N":{"oneOf":[{"type":"object","properties":{"c":{"$ref":"#/$defs/N"}}},{"type":"string"}]}}}`, true},
		{"recursive, anyOf elsewhere", `{"anyOf":[{"$ref":"#/$defs/N"},{"type":"null"}],"$defs":{"N":{"type":"object","properties":{"c":{"$ref":"#/$defs/N"}}}}}`, true},
		{"recursive without alternatives", `{"$ref":"#/$defs/N","$defs":{"N":{"type":"object","properties":{"c":{"items":{"$ref":"#/$defs/N"}}}}}}`, false},
		{"alternatives without recursion", `{"oneOf":[{"$ref":"#/$defs/A"},{"type":"string"}],"$defs":{"A":{"type":"object"}}}`, false},
		{"plain", `{"type":"object","properties":{"a":{"type":"string"}}}`, false},
	} {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(tc.schema), &s); err != nil {
			t.Fatal(err)
		}
		if got := RecursiveChoice(&s); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
