package specloader

import (
	"path/filepath"
	"testing"
)

// TestPrunedMissIsAnError: when a pruned model lacks a component a $ref
// needs, resolving fails instead of kin-openapi quietly reading the whole
// spec again through its slow YAML path, and the load falls back to the
// whole document.
func TestPrunedMissIsAnError(t *testing.T) {
	data := []byte(`{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
		"paths": {"/a": {"get": {"responses": {"200": {"description": "ok",
			"content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}}}},
		"components": {"schemas": {"A": {"type": "string"}, "B": {"type": "string"}}}}`)
	loc := fileURL(filepath.Join(t.TempDir(), "spec.json")) // never read: the bytes are cached
	keep := func(string, string, string, []string) bool { return true }

	s, err := newSession(t.Context(), loc, Options{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	s.setRoot(loc, data)
	p, err := probe(data)
	if err != nil {
		t.Fatal(err)
	}
	plan := planPrune(p.json, keep)
	if plan == nil || len(plan.sections["schemas"]) != 1 {
		t.Fatalf("plan keeps %v, want schema A only", plan)
	}

	missing := *plan
	missing.sections = map[string][]member{"schemas": nil}
	if _, err := s.decodePruned(p.json, &missing, loc); err == nil {
		t.Error("a plan missing a component resolved")
	}
	if s.pruning {
		t.Error("the session still refuses to read the spec")
	}
	if _, err := s.readRef(nil, loc); err != nil {
		t.Errorf("after the pruned attempt, reading the spec: %v", err)
	}

	doc, pruned, err := s.decode(p, data, loc)
	if err != nil || !pruned {
		t.Fatalf("decode: pruned %v, error %v", pruned, err)
	}
	if _, ok := doc.Components.Schemas["B"]; ok {
		t.Error("schema B was kept")
	}
	if got := doc.Paths.Value("/a").Get.Responses.Status(200).Value.Content.Get("application/json").Schema.Value; got == nil {
		t.Error("the $ref to A is unresolved")
	}
}
