package transport_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

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

// TestKeepAliveRoute checks that an event stream served by a route beside
// /mcp (the REST facade's streamed call) gets keepalive comments while it
// waits: a slow upstream call behind a proxy with an idle timeout was cut.
func TestKeepAliveRoute(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	routes := map[string]http.Handler{"/api/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "event: progress\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		select { // a slow call
		case <-release:
		case <-r.Context().Done():
		}
	})}
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{KeepAlive: 5 * time.Millisecond, Routes: routes})
	events := openStream(t, rpc(t, "POST", ts.URL+"/api/tools/slow", "{}", map[string]string{"Accept": "text/event-stream"}))
	if ev := <-events; ev.name != "progress" {
		t.Fatalf("first event = %+v; want progress", ev)
	}
	waitComment(t, events)
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

// TestStalledReaderReleased checks that a client that stops reading its
// answer does not hold it, and the handler, for ever: each write of the
// response must make progress within ReadTimeout, or the connection is
// closed. Without it, 60 connections asking for a 4 MB answer and never
// reading held 700 MB of the server's memory until the clients left.
func TestStalledReaderReleased(t *testing.T) {
	t.Run("/mcp", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` +
			strings.Repeat("x", 512<<10) + `"}}}`
		testStalledReader(t, "/mcp", body, nil)
	})
	// The routes added beside /mcp (the REST facade) too.
	t.Run("route", func(t *testing.T) {
		testStalledReader(t, "/api/big", "{}", map[string]http.Handler{
			"/api/": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				_, _ = w.Write(make([]byte, 1<<20))
			}),
		})
	})
}

// testStalledReader posts body to path and does not read the answer (of
// 1 MB or more); the server must close the connection.
func testStalledReader(t *testing.T, path, body string, routes map[string]http.Handler) {
	const stall = time.Second
	h, err := transport.NewHTTPHandler(newMCPServer(newGate()), transport.HTTPOptions{ReadTimeout: stall, Routes: routes}, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	// Small socket buffers on the server's side, so that an answer of
	// 1 MB fills them.
	ts := httptest.NewUnstartedServer(h)
	ts.Listener = smallSendBuffers{ts.Listener}
	ts.Start()
	t.Cleanup(ts.Close)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() }) // before the server's Close, which waits for handlers
	req := "POST " + path + " HTTP/1.1\r\nHost: " + ts.Listener.Addr().String() +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"Mcp-Protocol-Version: 2025-06-18\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * stall) // not reading: the answer (1 MB) fills the socket buffers
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, conn)
	if ne := (net.Error)(nil); errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("after %d bytes the connection is still open: the server held the answer for a client that stopped reading", n)
	}
	if n >= 1<<20 {
		t.Errorf("read %d bytes: the whole answer; want it cut when the reader stalled", n)
	}
}

// smallSendBuffers gives every accepted connection a 16 KiB send buffer.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}
