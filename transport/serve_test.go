package transport_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/transport"
)

// served is a ServeHTTP running in the background on a loopback port.
type served struct {
	url    string
	cancel context.CancelFunc
	done   chan error
	wait   func(msg string) <-chan struct{} // closed once msg is logged
}

func serve(t *testing.T, s *mcp.Server, opts transport.HTTPOptions) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	log, _, wait := watchLog()
	ctx, cancel := context.WithCancel(t.Context())
	addr := make(chan net.Addr, 1)
	opts.Listener = ln
	opts.OnListen = func(a net.Addr) { addr <- a }
	sv := &served{cancel: cancel, done: make(chan error, 1), wait: wait}
	go func() { sv.done <- transport.ServeHTTP(ctx, s, opts, log) }()
	select {
	case a := <-addr:
		sv.url = "http://" + a.String()
	case err := <-sv.done:
		t.Fatalf("ServeHTTP returned before listening: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		<-sv.done
	})
	return sv
}

var shutdownModes = []struct {
	name      string
	stateful  bool
	transport func(url string) mcp.Transport
}{
	{"stateless", false, func(url string) mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}
	}},
	{"stateful", true, func(url string) mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}
	}},
	{"sse", false, func(url string) mcp.Transport {
		return &mcp.SSEClientTransport{Endpoint: url + "/sse"}
	}},
}

// TestGracefulShutdown starts a slow call, cancels ServeHTTP's context, and
// only then lets the call finish: the client gets its result and ServeHTTP
// returns nil. Open GET streams (stateful standalone stream, legacy SSE
// stream) must not hold shutdown: ShutdownTimeout is long, so a stream left
// open would hang the test.
func TestGracefulShutdown(t *testing.T) {
	for _, m := range shutdownModes {
		t.Run(m.name, func(t *testing.T) {
			g := newGate()
			sv := serve(t, newMCPServer(g), transport.HTTPOptions{Stateful: m.stateful, ShutdownTimeout: time.Hour})
			cs := connect(t, m.transport(sv.url), "")

			type result struct {
				res *mcp.CallToolResult
				err error
			}
			results := make(chan result, 1)
			go func() {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
				results <- result{res, err}
			}()
			<-g.started
			sv.cancel()
			<-sv.wait("http shutdown started")
			close(g.release)

			r := <-results
			if r.err != nil {
				t.Fatalf("in-flight call failed during shutdown: %v", r.err)
			}
			if diff := cmp.Diff(map[string]any{"done": true}, r.res.StructuredContent); diff != "" {
				t.Errorf("slow result mismatch (-want +got):\n%s", diff)
			}
			if err := <-sv.done; err != nil {
				t.Errorf("ServeHTTP = %v; want nil", err)
			}
			sv.done <- nil // for the cleanup
		})
	}
}

// TestShutdownWithIdleStreams checks that idle clients holding streams open
// (the stateful standalone GET stream, the legacy SSE stream) do not delay
// shutdown: ShutdownTimeout is an hour, so a stream left open would hang.
func TestShutdownWithIdleStreams(t *testing.T) {
	for _, m := range shutdownModes {
		t.Run(m.name, func(t *testing.T) {
			sv := serve(t, newMCPServer(newGate()), transport.HTTPOptions{Stateful: m.stateful, ShutdownTimeout: time.Hour})
			cs := connect(t, m.transport(sv.url), "")
			if _, err := cs.ListTools(t.Context(), nil); err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			sv.cancel()
			if err := <-sv.done; err != nil {
				t.Errorf("ServeHTTP = %v; want nil", err)
			}
			sv.done <- nil
		})
	}
}

// TestShutdownAfterCancelledSSECall checks that a legacy SSE call the
// client cancelled does not hold its stream open during shutdown: the drain
// waits for every call's reply, and the reply to a cancelled call, which
// go-sdk makes and the session leaves unsent, must count as one (were it
// not, this test would hang).
func TestShutdownAfterCancelledSSECall(t *testing.T) {
	g := newGate()
	sv := serve(t, newMCPServer(g), transport.HTTPOptions{ShutdownTimeout: time.Hour})
	cs := connect(t, &mcp.SSEClientTransport{Endpoint: sv.url + "/sse"}, "")
	ctx, cancel := context.WithCancel(t.Context())
	errs := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		errs <- err
	}()
	<-g.started
	cancel()
	<-g.cancelled
	if err := <-errs; err == nil {
		t.Error("cancelled call succeeded; want an error")
	}
	sv.cancel()
	if err := <-sv.done; err != nil {
		t.Errorf("ServeHTTP = %v; want nil", err)
	}
	sv.done <- nil
}

// TestShutdownDeadline checks that a call still running when the shutdown
// deadline passes is cancelled where go-sdk allows it, and that ServeHTTP
// returns nil. go-sdk cancels a call when its connection's reader ends: on
// stateless HTTP with 2026-07-28 (the call's context follows its request's)
// and on legacy SSE (the transport closes the connection when the stream
// ends). A stateful session outlives its HTTP requests, so its calls run on.
func TestShutdownDeadline(t *testing.T) {
	for _, m := range shutdownModes {
		t.Run(m.name, func(t *testing.T) {
			g := newGate()
			sv := serve(t, newMCPServer(g), transport.HTTPOptions{Stateful: m.stateful, ShutdownTimeout: time.Millisecond})
			cs := connect(t, m.transport(sv.url), "")
			errs := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
				errs <- err
			}()
			<-g.started
			sv.cancel()
			if !m.stateful {
				<-g.cancelled
			}
			if err := <-sv.done; err != nil {
				t.Errorf("ServeHTTP = %v; want nil", err)
			}
			sv.done <- nil
			if err := <-errs; err == nil {
				t.Error("call cut by the shutdown deadline succeeded; want an error")
			}
			close(g.release) // lets a call that was not cancelled end
		})
	}
}

// TestShutdownWithUnusedConnection checks that a connection that never
// carried a request does not hold shutdown: net/http counts one as active
// for 5 s, and clients often leave one behind (an extra dial).
func TestShutdownWithUnusedConnection(t *testing.T) {
	sv := serve(t, newMCPServer(newGate()), transport.HTTPOptions{ShutdownTimeout: time.Hour})
	unused := dial(t, sv.url)
	// Connections are accepted in order, so once a request on a later one
	// is answered the unused one is known to the server.
	if resp, body := do(t, rpc(t, "GET", sv.url+"/health", "", nil)); resp.StatusCode != 200 {
		t.Fatalf("GET /health = %d %q", resp.StatusCode, body)
	}
	start := time.Now()
	sv.cancel()
	if err := <-sv.done; err != nil {
		t.Errorf("ServeHTTP = %v; want nil", err)
	}
	sv.done <- nil
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("shutdown took %s with an unused connection open; want it not to wait for it", took)
	}
	if n, err := io.Copy(io.Discard, unused); n != 0 || err != nil {
		t.Errorf("unused connection: read %d bytes, err %v; want it closed", n, err)
	}
}

// TestServeHTTPErrors checks the errors ServeHTTP returns before serving.
func TestServeHTTPErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	s := newMCPServer(newGate())
	if err := transport.ServeHTTP(t.Context(), s, transport.HTTPOptions{Listen: busy.Addr().String()}, zap.NewNop()); err == nil {
		t.Error("ServeHTTP on a busy address = nil; want an error")
	}
	if err := transport.ServeHTTP(t.Context(), s, transport.HTTPOptions{MaxBodyBytes: -1}, nil); err == nil {
		t.Error("ServeHTTP with invalid options = nil; want an error")
	}
}

// TestShutdownDelayDrains checks the draining phase: once shutdown starts,
// /ready answers 503 {"ready":false,"draining":true} while a new client can
// still connect and call for ShutdownDelay, and only then does the
// listener close. Without the delay the listener closes at once and /ready
// is never seen draining.
func TestShutdownDelayDrains(t *testing.T) {
	const delay = 2 * time.Second
	sv := serve(t, newMCPServer(newGate()), transport.HTTPOptions{ShutdownDelay: delay, ShutdownTimeout: time.Hour})
	ready := func() (int, string) {
		t.Helper()
		resp, err := http.Get(sv.url + "/ready")
		if err != nil {
			t.Fatalf("GET /ready: %v", err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := ready(); code != 200 || body != `{"ready":true}`+"\n" {
		t.Fatalf("before shutdown: /ready = %d %q", code, body)
	}
	start := time.Now()
	sv.cancel()
	select {
	case <-sv.wait("draining: /ready answers 503, still serving"):
	case err := <-sv.done:
		sv.done <- err
		t.Fatalf("ServeHTTP returned (%v) without a draining phase", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no draining phase logged within 10s")
	}
	if code, body := ready(); code != 503 || body != `{"ready":false,"draining":true}`+"\n" {
		t.Errorf("draining: /ready = %d %q; want 503 draining", code, body)
	}
	// A client arriving during the drain is still served.
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: sv.url + "/mcp", MaxRetries: -1}, "")
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Errorf("ListTools while draining: %v", err)
	}
	if err := <-sv.done; err != nil {
		t.Errorf("ServeHTTP = %v; want nil", err)
	}
	sv.done <- nil
	if d := time.Since(start); d < delay {
		t.Errorf("ServeHTTP returned after %s; want at least the %s delay", d, delay)
	}
}
