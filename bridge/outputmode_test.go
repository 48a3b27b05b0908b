package bridge_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// outputModeSpec contradicts itself in the ways the bridge repairs, and
// has a pattern JavaScript rejects in Unicode mode.
const outputModeSpec = `openapi: 3.0.3
info: {title: modes, version: "1"}
paths:
  /items/{slug}:
    get:
      operationId: getItem
      parameters:
        - {name: slug, in: path, required: true, schema: {type: string, pattern: '^[a-z0-9\-\_]+$'}}
        - {name: level, in: query, schema: {type: integer, enum: ["1", "2", "x"]}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                additionalProperties: false
                required: [id, ghost]
                properties:
                  id: {type: integer}
                  state: {type: string, enum: [on, off], default: maybe}
  /items:
    delete:
      operationId: purge
      responses:
        "204": {description: gone}
`

func outputModeCatalog(t *testing.T, opts bridge.Options) *bridge.Catalog {
	t.Helper()
	res, err := specloader.LoadData(t.Context(), []byte(outputModeSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	opts.BaseURL = "https://upstream.example"
	c, err := bridge.New(ops, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOutputSchemaModes(t *testing.T) {
	schemaOf := func(c *bridge.Catalog, name string) map[string]any {
		tool, ok := c.Lookup(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		if tool.Def().OutputSchema == nil {
			return nil
		}
		raw, _ := json.Marshal(tool.Def().OutputSchema)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return m
	}
	tolerant := outputModeCatalog(t, bridge.Options{})
	if got := schemaOf(tolerant, "getItem"); got["required"] != nil || got["additionalProperties"] != nil {
		t.Errorf("tolerant output schema still required/closed: %v", got)
	}
	if got := schemaOf(tolerant, "purge"); got != nil {
		t.Errorf("an output schema for a 204-only operation: %v", got)
	}
	strict := outputModeCatalog(t, bridge.Options{OutputSchema: "strict"})
	want := map[string]any{
		"type": "object", "additionalProperties": false, "required": []any{"id"},
		"properties": map[string]any{"id": map[string]any{"type": "integer"}, "state": map[string]any{"type": "string", "enum": []any{"on", "off"}}},
	}
	if diff := cmp.Diff(want, schemaOf(strict, "getItem")); diff != "" {
		t.Errorf("strict output schema mismatch (-want +got):\n%s", diff)
	}
	off := outputModeCatalog(t, bridge.Options{OutputSchema: "off"})
	if got := schemaOf(off, "getItem"); got != nil {
		t.Errorf("off: an output schema: %v", got)
	}
	if _, err := bridge.New(nil, bridge.Options{BaseURL: "https://x.example", OutputSchema: "lenient"}); err == nil || !strings.Contains(err.Error(), "output schema mode") {
		t.Errorf("an unknown mode: err = %v", err)
	}

	// The input schema: the pattern rewritten, the enum coerced.
	tool, _ := strict.Lookup("getItem")
	in, _ := json.Marshal(tool.Def().InputSchema)
	for _, frag := range []string{`"pattern":"^[a-z0-9\\-_]+$"`, `"enum":[1,2]`} {
		if !strings.Contains(string(in), frag) {
			t.Errorf("input schema %s lacks %s", in, frag)
		}
	}
}

func TestCatalogRepairs(t *testing.T) {
	c := outputModeCatalog(t, bridge.Options{OutputSchema: "strict"})
	var got []string
	for _, r := range c.Repairs() {
		got = append(got, r.Operation+" | "+r.Where)
	}
	want := []string{
		"GET /items/{slug} | input pattern",
		"GET /items/{slug} | input#/properties/level/enum",
		"GET /items/{slug} | output#/required",
		"GET /items/{slug} | output#/properties/state/default",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Repairs mismatch (-want +got):\n%s", diff)
	}
	snap, err := c.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	c2, err := bridge.NewFromSnapshot(snap, bridge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Repairs(), c2.Repairs()); diff != "" {
		t.Errorf("Repairs lost in the snapshot (-built +restored):\n%s", diff)
	}
}
