package schema

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// normalizeTrue rewrites the library's boolean true subschemas as {}, the
// form marshalSchema writes.
func normalizeTrue(v any, schemaPos bool) any {
	switch x := v.(type) {
	case bool:
		if schemaPos && x {
			return map[string]any{}
		}
	case map[string]any:
		for k, e := range x {
			switch k {
			case "enum", "examples", "const", "default", "required", "dependentRequired", "$vocabulary", "type", "dependencies", "deprecated", "readOnly", "writeOnly", "uniqueItems":
				continue
			case "properties", "$defs", "definitions", "patternProperties", "dependentSchemas":
				if m, ok := e.(map[string]any); ok {
					for n, s := range m {
						if b, ok := s.(bool); ok && !b {
							m[n] = map[string]any{"not": map[string]any{}} // as the writer puts a false member
							continue
						}
						m[n] = normalizeTrue(s, true)
					}
				}
			default:
				x[k] = normalizeTrue(e, true)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeTrue(e, schemaPos)
		}
	}
	return v
}

// TestMarshalSchemaMatchesLibrary holds the one-pass writer to
// jsonschema-go's MarshalJSON, value for value, for every schema the
// converter produces from the corpus.
func TestMarshalSchemaMatchesLibrary(t *testing.T) {
	specs, _ := filepath.Glob("../../testdata/specs/*")
	n := 0
	for _, path := range specs {
		if strings.HasSuffix(path, ".tsv") || ((testing.Short() || raceEnabled) && largeSpec(path)) {
			continue
		}
		// Stripe's schemas each carry most of its 1,000 components as
		// $defs: one operation in eight is compared (minutes otherwise).
		sample, seen := 1, 0
		if strings.Contains(path, "stripe") {
			sample = 8
		}
		res, err := specloader.Load(t.Context(), path, specloader.Options{})
		if err != nil {
			continue // the corpus test reports load failures
		}
		check := func(where string, ref *openapi3.SchemaRef, dir Direction) {
			if ref == nil {
				return
			}
			conv := NewConverter(dir)
			s := conv.Convert(ref)
			s.Defs = conv.Defs()
			lib, err := json.Marshal(s)
			if err != nil {
				t.Fatalf("%s %s: library: %v", path, where, err)
			}
			ours, err := Marshal(s)
			if err != nil {
				t.Fatalf("%s %s: marshalSchema: %v", path, where, err)
			}
			var a, b any
			if err := json.Unmarshal(lib, &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(ours, &b); err != nil {
				t.Fatalf("%s %s: invalid JSON from marshalSchema: %v", path, where, err)
			}
			if diff := cmp.Diff(normalizeTrue(a, true), b); diff != "" {
				t.Fatalf("%s %s mismatch (-library +ours):\n%s", path, where, diff)
			}
			n++
		}
		for p, item := range res.Doc.Paths.Map() {
			for m, op := range item.Operations() {
				if seen++; seen%sample != 0 {
					continue
				}
				where := m + " " + p
				for _, pr := range op.Parameters {
					if pr.Value != nil {
						check(where+" param", pr.Value.Schema, Request)
					}
				}
				if op.RequestBody != nil && op.RequestBody.Value != nil {
					for _, mt := range op.RequestBody.Value.Content {
						check(where+" body", mt.Schema, Request)
					}
				}
				if op.Responses != nil {
					for _, r := range op.Responses.Map() {
						if r.Value != nil {
							for _, mt := range r.Value.Content {
								check(where+" response", mt.Schema, Response)
							}
						}
					}
				}
			}
		}
	}
	if n < 1000 {
		t.Errorf("only %d schemas compared", n)
	}
	t.Logf("%d schemas compared", n)
}

func BenchmarkMarshalSchema(b *testing.B) {
	res, err := specloader.Load(b.Context(), "../../testdata/specs/github-api.3.0.json", specloader.Options{})
	if err != nil {
		b.Fatal(err)
	}
	var roots []*openapi3.SchemaRef
	for _, item := range res.Doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.Responses != nil {
				if r := op.Responses.Value("200"); r != nil && r.Value != nil {
					if mt := r.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
						roots = append(roots, mt.Schema)
					}
				}
			}
		}
	}
	conv := NewConverter(Response)
	var schemas = make([]any, 0, len(roots))
	for _, r := range roots {
		schemas = append(schemas, conv.Convert(r))
	}
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				if _, err := json.Marshal(s); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("marshalSchema", func(b *testing.B) {
		for b.Loop() {
			for _, s := range schemas {
				if _, err := Marshal(s.(*jsonschema.Schema)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestMarshalFalseMember: a false schema among properties or $defs is
// written as an object (the TypeScript SDK's client refuses a tools/list
// with a boolean there); elsewhere it stays false.
func TestMarshalFalseMember(t *testing.T) {
	no := &jsonschema.Schema{Not: &jsonschema.Schema{}}
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"gone": no, "ok": {Type: "string"}},
		AdditionalProperties: no, Defs: map[string]*jsonschema.Schema{"never": no}}
	got, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"gone":{"not":{}},"ok":{"type":"string"}},"$defs":{"never":{"not":{}}},"additionalProperties":false}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
