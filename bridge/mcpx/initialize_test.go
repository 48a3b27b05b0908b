package mcpx_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
)

// TestDuplicateInitializeIsInvalidRequest: a second initialize on a
// session is refused as an invalid request (-32600); go-sdk answers it
// with error code 0.
func TestDuplicateInitializeIsInvalidRequest(t *testing.T) {
	up := newUpstream(t)
	srv := mcpx.New(bridge.NewRuntime(catalog(t, spec(op{"alpha", "Alpha"}), up, nil)), mcpx.Options{Version: "test"}).MCP()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	conn, err := ct.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	initialize := func(n int) *jsonrpc.Response {
		t.Helper()
		id, _ := jsonrpc.MakeID(float64(n))
		req := &jsonrpc.Request{ID: id, Method: "initialize",
			Params: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`)}
		if err := conn.Write(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		msg, err := conn.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			t.Fatalf("read %T; want a response", msg)
		}
		return resp
	}
	if resp := initialize(1); resp.Error != nil {
		t.Fatalf("first initialize: %v", resp.Error)
	}
	resp := initialize(2)
	var werr *jsonrpc.Error
	if !errors.As(resp.Error, &werr) || werr.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("second initialize: error %#v; want code %d", resp.Error, jsonrpc.CodeInvalidRequest)
	}
}
