package main

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/transport"
)

// BenchmarkHTTPCall is BenchmarkCall over streamable HTTP on loopback:
// the floor behind go-sdk's stateless handler, the bridge behind
// mcpbridge's HTTP transport (auth off on loopback, the default chain),
// each called by a go-sdk client as mcpbench does. The server's share is
// what a CPU profile of this benchmark shows beside the client's.
//
//	go test ./cmd/mcpbench -run '^$' -bench HTTPCall -cpuprofile cpu.out
func BenchmarkHTTPCall(b *testing.B) {
	cb := newCallBench(b)
	floorHandlerFor := func(s *mcp.Server) http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	}
	bridgeHandler := func(s *mcp.Server) http.Handler {
		h, err := transport.NewHTTPHandler(s, transport.HTTPOptions{Listen: "127.0.0.1:0"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	for _, srv := range []struct {
		name string
		h    http.Handler
	}{
		{"floor", floorHandlerFor(newFloorServer(cb.upURL, cb.eps, false))},
		{"floor+sc", floorHandlerFor(newFloorServer(cb.upURL, cb.eps, true))},
		{"bridge+chain", bridgeHandler(mcpx.New(cb.chain, mcpx.Options{Version: "bench"}).MCP())},
	} {
		ts := httptest.NewServer(srv.h)
		client := pooledClient()
		cs, err := newClient().Connect(b.Context(), &mcp.StreamableClientTransport{
			Endpoint: ts.URL + "/mcp", HTTPClient: client, DisableStandaloneSSE: true,
		}, nil)
		if err != nil {
			b.Fatal(err)
		}
		benchCalls(b, srv.name, cs, cb.eps)
		cs.Close()
		client.CloseIdleConnections()
		ts.Close()
	}
}
