package transport_test

import (
	"context"
	"io"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/transport"
)

// TestProtocolRevisions lists and calls tools with go-sdk's own clients,
// pinned to each protocol revision (ClientSessionOptions.ProtocolVersion),
// over every HTTP transport mode. want is the revision the session
// negotiates: go-sdk speaks 2026-07-28 only on stateless streamable HTTP; a
// 2026-07-28 client falls back to 2025-11-25 elsewhere.
func TestProtocolRevisions(t *testing.T) {
	type mode struct {
		name      string
		stateful  bool
		transport func(url string) mcp.Transport
	}
	streamable := func(url string) mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}
	}
	modes := []mode{
		{name: "stateless", transport: streamable},
		{name: "stateful", stateful: true, transport: streamable},
		{name: "sse", transport: func(url string) mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: url + "/sse"}
		}},
	}
	tests := []struct {
		version string
		want    map[string]string // mode → negotiated revision
	}{
		{v20241105, map[string]string{"stateless": v20241105, "stateful": v20241105, "sse": v20241105}},
		{v20250326, map[string]string{"stateless": v20250326, "stateful": v20250326, "sse": v20250326}},
		{v20250618, map[string]string{"stateless": v20250618, "stateful": v20250618, "sse": v20250618}},
		{v20251125, map[string]string{"stateless": v20251125, "stateful": v20251125, "sse": v20251125}},
		{v20260728, map[string]string{"stateless": v20260728, "stateful": v20251125, "sse": v20251125}},
	}
	for _, m := range modes {
		ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Stateful: m.stateful})
		for _, tt := range tests {
			t.Run(m.name+"/"+tt.version, func(t *testing.T) {
				cs := connect(t, m.transport(ts.URL), tt.version)
				if got, want := cs.InitializeResult().ProtocolVersion, tt.want[m.name]; got != want {
					t.Errorf("negotiated protocol version = %s; want %s", got, want)
				}

				res, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatalf("ListTools: %v", err)
				}
				var names []string
				for _, tool := range res.Tools {
					names = append(names, tool.Name)
				}
				slices.Sort(names)
				if diff := cmp.Diff([]string{"echo", "slow", "whoami"}, names); diff != "" {
					t.Errorf("ListTools mismatch (-want +got):\n%s", diff)
				}

				var out echoOut
				callJSON(t, cs, "echo", map[string]any{"text": "hello " + tt.version}, &out)
				if diff := cmp.Diff(echoOut{Text: "hello " + tt.version}, out); diff != "" {
					t.Errorf("echo mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestServeStdio runs a session over pipes and checks both clean stops: the
// client closing its end, and the context being cancelled.
func TestServeStdio(t *testing.T) {
	for _, stop := range []string{"client closes", "context cancelled"} {
		t.Run(stop, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			serverIn, clientOut := io.Pipe()
			clientIn, serverOut := io.Pipe()
			served := make(chan error, 1)
			go func() { served <- transport.ServeStdio(ctx, newMCPServer(newGate()), serverIn, serverOut) }()

			c := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "v0"}, nil)
			cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			var out echoOut
			callJSON(t, cs, "echo", map[string]any{"text": "over stdio"}, &out)
			if out.Text != "over stdio" {
				t.Errorf("echo = %q; want %q", out.Text, "over stdio")
			}

			if stop == "client closes" {
				_ = cs.Close()
			} else {
				cancel()
			}
			if err := <-served; err != nil {
				t.Errorf("ServeStdio = %v; want nil", err)
			}
			_ = cs.Close()
		})
	}
}
