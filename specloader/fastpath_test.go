package specloader_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// TestJSONFastPathMatchesKin holds the JSON fast path to what kin-openapi's
// own loader builds from the same bytes: the same model once marshaled, and
// the same schemas reachable through resolved $refs.
func TestJSONFastPathMatchesKin(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.3.*.json"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("testdata", "tricky.json"))
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			if corpus[name].Repaired {
				t.Skip("kin-openapi refuses it as published; the loader repairs it (TestLoadCorpus)")
			}
			if fi, err := os.Stat(file); err == nil && fi.Size() > 1<<20 && (raceEnabled || testing.Short()) {
				t.Skip("kin-openapi's own loader takes seconds on a spec this large under -race; compared in plain go test")
			}
			abs, err := filepath.Abs(file)
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(abs)
			if err != nil {
				t.Fatal(err)
			}
			loc := &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}

			kl := openapi3.NewLoader()
			kl.IsExternalRefsAllowed = true
			want, err := kl.LoadFromDataWithPath(data, loc)
			if err != nil {
				t.Fatalf("kin-openapi: %v", err)
			}
			res, err := specloader.LoadData(t.Context(), data, loc, specloader.Options{})
			if err != nil {
				t.Fatalf("LoadData: %v", err)
			}

			if diff := cmp.Diff(marshal(t, want), marshal(t, res.Doc)); diff != "" {
				t.Errorf("model mismatch (-kin +fast):\n%.4000s", diff)
			}
			if w, g := countSchemas(t, want), countSchemas(t, res.Doc); w != g {
				t.Errorf("schemas reachable: kin %d, fast path %d", w, g)
			}
			// A $ref resolved to the wrong schema marshals the same (as
			// {"$ref": ...}); the walk, which follows resolved $refs once
			// each, sees what each one points at.
			if diff := cmp.Diff(walkSequence(t, want), walkSequence(t, res.Doc)); diff != "" {
				t.Errorf("resolved $refs differ (-kin +fast):\n%.4000s", diff)
			}
		})
	}
}

// marshal returns doc as a generic JSON value, for a readable diff.
func marshal(t *testing.T, doc *openapi3.T) any {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// countSchemas counts the distinct schemas WalkSchemas reaches, which follows
// resolved $refs only.
func countSchemas(t *testing.T, doc *openapi3.T) int {
	t.Helper()
	n := 0
	if err := doc.WalkSchemas(func(string, *openapi3.SchemaRef) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// walkSequence lists the schemas WalkSchemas visits, in order, each as its
// pointer, its $ref and an outline of the schema it resolved to (type,
// title, property names): the same list for two models means every $ref
// led to the same schema.
func walkSequence(t *testing.T, doc *openapi3.T) []string {
	t.Helper()
	var out []string
	err := doc.WalkSchemas(func(ptr string, sr *openapi3.SchemaRef) error {
		line := ptr + " " + sr.Ref
		if v := sr.Value; v != nil {
			line += fmt.Sprintf(" %v %q %q", v.Type, v.Title, slices.Sorted(maps.Keys(v.Properties)))
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestJSONDuplicateKeysLastWins(t *testing.T) {
	data := []byte(`{"openapi": "3.0.0", "openapi": "3.0.3",
		"info": {"title": "first", "version": "1"}, "info": {"title": "second", "version": "1"},
		"paths": {},
		"components": {"schemas": {"S": {"type": "string", "type": "integer"}}}}`)
	res, err := specloader.LoadData(t.Context(), data, nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{res.Version, res.Doc.Info.Title, res.Doc.Components.Schemas["S"].Value.Type.Slice()[0]}
	want := []string{"3.0.3", "second", "integer"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("duplicate keys (-want +got):\n%s", diff)
	}
}
