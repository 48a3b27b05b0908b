package mcpx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// TestAddStubbed pins what registerInitial relies on: go-sdk accepts the
// quick stub (a go-sdk that starts refusing it fails here, and the start
// falls back to the plain stub, which costs GitHub's restart ~14% of its
// CPU), and a refused stub adds nothing and reports it.
func TestAddStubbed(t *testing.T) {
	s := &Server{srv: mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil), log: zap.NewNop()}
	quick := &jsonschema.Schema{Type: "object", Defs: map[string]*jsonschema.Schema{}, Definitions: map[string]*jsonschema.Schema{}}
	real := json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}}}`)
	def := &mcp.Tool{Name: "ok", InputSchema: real, OutputSchema: real}
	if !s.addStubbed(def, quick) {
		t.Fatal("go-sdk refused the quick stub")
	}
	refused := &mcp.Tool{Name: "refused", InputSchema: real}
	if s.addStubbed(refused, &jsonschema.Schema{Type: "string"}) {
		t.Fatal("a stub AddTool must refuse (type string) was reported added")
	}
	def.InputSchema, def.OutputSchema = real, real
	tools, err := ListTools(t.Context(), s.srv, "2025-06-18")
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name != "ok" {
		t.Fatalf("listed %d tools (%v); want only the one added", len(tools), tools)
	}
	if got, _ := tools[0].InputSchema.(map[string]any)["properties"].(map[string]any); got["id"] == nil {
		t.Errorf("listed input schema %v; want the real one, restored after AddTool", tools[0].InputSchema)
	}
}

// TestListCacheFills: the first list of a class is encoded the usual way
// and the second from the cache, which then holds the class's array.
func TestListCacheFills(t *testing.T) {
	var lc listCache
	a, b := &mcp.Tool{Name: "a", InputSchema: json.RawMessage(`{"type":"object"}`)}, &mcp.Tool{Name: "b", Title: "B <&>", InputSchema: json.RawMessage(`{"type":"object"}`)}
	defs := []*mcp.Tool{a, b}
	if _, ok := lc.tools(classNew, defs, true); ok {
		t.Fatal("the first list of a class came from the cache")
	}
	got, ok := lc.tools(classNew, defs, true)
	if !ok || lc.enc[classNew] == nil {
		t.Fatal("the second list of a class was not cached")
	}
	want, err := json.Marshal(fitList(classNew, &mcp.ListToolsResult{Tools: defs}).Tools)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.ReplaceAll(got, []byte("<&>"), []byte(`\u003c\u0026\u003e`)), want) {
		t.Errorf("cached array %s; want %s (HTML-escaped by json.Marshal)", got, want)
	}
	head := []byte(`{"nextCursor":"x",`)
	r1, r2 := lc.result(1, head, got), lc.result(1, head, got)
	if string(r1) != `{"nextCursor":"x","tools":`+string(got)+`}` || &r1[0] != &r2[0] {
		t.Errorf("result %s: want the head, the array, reused for the same head", r1)
	}
	if r3 := lc.result(1, []byte(`{"nextCursor":"y",`), got); bytes.Contains(r3, []byte(`"x"`)) {
		t.Errorf("result for another head reused the last one: %s", r3)
	}
	if _, ok := lc.tools(classOld, defs, true); ok || lc.enc[classOld] != nil {
		t.Error("the other class was served from the first class's array")
	}
	// A list too big to keep is left to the usual encoding, every time.
	huge := &mcp.Tool{Name: "huge", InputSchema: json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", maxCachedList) + `"}`)}
	if _, ok := lc.tools(classNew, []*mcp.Tool{huge}, false); ok {
		t.Error("a list over maxCachedList was encoded for the cache")
	}
	// Other definitions (a reload): the cache starts over.
	if _, ok := lc.tools(classNew, []*mcp.Tool{a}, true); ok {
		t.Error("a list of other definitions came from the cache")
	}
}
