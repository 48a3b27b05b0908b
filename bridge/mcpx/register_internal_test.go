package mcpx

import (
	"encoding/json"
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
