package bridge_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
)

// connect registers the bridge on a go-sdk server and connects a
// go-sdk client to it in memory.
func connect(t *testing.T, b *bridge.Catalog) *mcp.ClientSession {
	t.Helper()
	server := mcpx.New(bridge.NewRuntime(b), mcpx.Options{Version: "test"}).MCP()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server.Connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, nil)
	cs, err := client.Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatalf("client.Connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}
