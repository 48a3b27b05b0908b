package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// TestSharedOutputsMatchUnshared: building each distinct output schema once
// and sharing it changes nothing a client or an operator sees: the same
// tool definitions, byte for byte, and the same repairs, for every spec of
// the corpus, in the default and the strict output modes; and a tool that
// shapes its fields still gets its own pruned schema.
func TestSharedOutputsMatchUnshared(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "specs", "*.*"))
	for _, file := range files {
		if filepath.Ext(file) == ".tsv" {
			continue
		}
		if fi, err := os.Stat(file); err == nil && fi.Size() > 4<<20 && (raceEnabled || testing.Short()) {
			continue // GitHub's: seconds under -race, compared in plain go test
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		res, err := specloader.LoadData(t.Context(), data, nil, specloader.Options{})
		if err != nil {
			continue // the corpus test covers what does not load
		}
		ops, err := whitelist.All().Select(res.Doc)
		if err != nil {
			continue
		}
		for _, mode := range []string{"", "strict"} {
			build := func(share bool) ([]byte, []Repair) {
				defer func(on bool) { shareOutputs = on }(shareOutputs)
				shareOutputs = share
				c, err := New(ops, Options{BaseURL: "http://127.0.0.1:9", Version: "test", OutputSchema: mode})
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				defs, err := json.Marshal(c.Defs())
				if err != nil {
					t.Fatal(err)
				}
				return defs, c.Repairs()
			}
			shared, sharedReps := build(true)
			alone, aloneReps := build(false)
			if string(shared) != string(alone) {
				t.Errorf("%s (mode %q): tool definitions differ when outputs are shared", filepath.Base(file), mode)
			}
			if diff := cmp.Diff(aloneReps, sharedReps); diff != "" {
				t.Errorf("%s (mode %q): repairs differ (-alone +shared):\n%.2000s", filepath.Base(file), mode, diff)
			}
		}
	}
}

// TestSharedOutputShapedApart: two operations answer with the same
// component schema; the one whose whitelist entry keeps some fields gets
// its own pruned output schema, the other the whole one, shared with a
// third.
func TestSharedOutputShapedApart(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: shared, version: "1"}
paths:
  /a: {get: {operationId: getA, responses: {"200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Repo"}}}}}}}
  /b: {get: {operationId: getB, responses: {"200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Repo"}}}}}}}
  /c: {get: {operationId: getC, responses: {"200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Repo"}}}}}}}
components:
  schemas:
    Repo: {type: object, properties: {name: {type: string}, description: {type: string}}}
`
	res, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := whitelist.Parse(strings.NewReader("tools:\n  - operationId: getA\n  - operationId: getB\n    fields: [name]\n  - operationId: getC\n"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := policy.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(ops, Options{BaseURL: "http://127.0.0.1:9", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range c.Defs() {
		raw, _ := json.Marshal(d.OutputSchema)
		out[d.Name] = string(raw)
	}
	if !strings.Contains(out["getA"], `"description"`) || out["getA"] != out["getC"] {
		t.Errorf("getA and getC should share the whole schema:\n%s\n%s", out["getA"], out["getC"])
	}
	if strings.Contains(out["getB"], `"description"`) || !strings.Contains(out["getB"], `"name"`) {
		t.Errorf("getB's schema should keep only name: %s", out["getB"])
	}
}
