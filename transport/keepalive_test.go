package transport_test

import (
	"bufio"
	"net/http"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/transport"
)

// TestKeepAlive checks that idle SSE streams get keepalive comments: the
// legacy /sse stream and the stateful streamable GET stream. The test waits
// for the comment; it never sleeps.
func TestKeepAlive(t *testing.T) {
	const interval = 5 * time.Millisecond
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Stateful: true, KeepAlive: interval})

	t.Run("legacy SSE", func(t *testing.T) {
		events := openStream(t, rpc(t, "GET", ts.URL+"/sse", "", map[string]string{"Accept": "text/event-stream"}))
		if ev := <-events; ev.name != "endpoint" {
			t.Fatalf("first event = %+v; want endpoint", ev)
		}
		waitComment(t, events)
	})

	t.Run("streamable GET stream", func(t *testing.T) {
		resp, body := do(t, rpc(t, "POST", ts.URL+"/mcp", initializeBody, nil))
		sid := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || sid == "" {
			t.Fatalf("initialize = %d %q, session %q", resp.StatusCode, body, sid)
		}
		hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"}
		if resp, body := do(t, rpc(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("initialized = %d %q; want 202", resp.StatusCode, body)
		}
		hdr["Accept"] = "text/event-stream"
		events := openStream(t, rpc(t, "GET", ts.URL+"/mcp", "", hdr))
		if ev := <-events; ev.name != ":" || ev.data != "ok" {
			t.Fatalf("first line = %+v; want go-sdk's ': ok' comment", ev)
		}
		waitComment(t, events)
	})
}

// openStream issues a GET that returns an event stream and parses it.
func openStream(t *testing.T, req *http.Request) <-chan sseEvent {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", req.URL, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d; want 200", req.URL, resp.StatusCode)
	}
	return sseEvents(bufio.NewReader(resp.Body))
}

// waitComment waits for a ": keepalive" comment; anything else fails.
func waitComment(t *testing.T, events <-chan sseEvent) {
	t.Helper()
	for ev := range events {
		if ev.name == ":" && ev.data == "keepalive" {
			return
		}
		t.Fatalf("got %+v on an idle stream; want a keepalive comment", ev)
	}
	t.Fatal("stream ended before a keepalive comment")
}
