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
		for _, e := range cb.eps {
			b.Run(srv.name+"/"+e.Size, func(b *testing.B) {
				b.SetBytes(int64(len(e.body)))
				cpu0 := processCPU()
				for b.Loop() {
					r, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: e.Tool, Arguments: e.Args})
					if err != nil || r.IsError {
						b.Fatalf("%s: %v %+v", e.Tool, err, r)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
		cs.Close()
		client.CloseIdleConnections()
		ts.Close()
	}
}
