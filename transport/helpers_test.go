package transport_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpbridge/mcpbridge/transport"
)

// Protocol revisions served by go-sdk v1.8.
const (
	v20241105 = "2024-11-05"
	v20250326 = "2025-03-26"
	v20250618 = "2025-06-18"
	v20251125 = "2025-11-25"
	v20260728 = "2026-07-28"
)

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Text string `json:"text"`
}

type slowOut struct {
	Done bool `json:"done"`
}

// whoamiOut reports what a tool handler can see of the inbound request.
type whoamiOut struct {
	SawAuthorization bool     `json:"sawAuthorization"`
	SawAPIKey        bool     `json:"sawApiKey"`
	SawCookie        bool     `json:"sawCookie"`
	SawHeader        bool     `json:"sawHeader,omitempty"` // RequestExtra.Header is set
	User             string   `json:"user"`
	Subject          string   `json:"subject,omitempty"` // TokenInfo.Extra["sub"]
	Scopes           []string `json:"scopes,omitempty"`
}

// gate coordinates the "slow" tool with a test: the tool signals started,
// then waits for release or for its context to end (signalled on cancelled).
type gate struct {
	started   chan struct{}
	release   chan struct{}
	cancelled chan struct{}
}

func newGate() *gate {
	return &gate{
		started:   make(chan struct{}, 16),
		release:   make(chan struct{}),
		cancelled: make(chan struct{}, 16),
	}
}

// newMCPServer returns a go-sdk server with the tools echo, slow and whoami.
func newMCPServer(g *gate) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "transport-test", Version: "v0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return nil, echoOut(in), nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "waits for the test"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, slowOut, error) {
			g.started <- struct{}{}
			select {
			case <-g.release:
				return nil, slowOut{Done: true}, nil
			case <-ctx.Done():
				g.cancelled <- struct{}{}
				return nil, slowOut{}, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "reports the request's credentials as seen by a tool"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, whoamiOut, error) {
			var out whoamiOut
			if req.Extra != nil {
				out.SawAuthorization = req.Extra.Header.Get("Authorization") != ""
				out.SawAPIKey = req.Extra.Header.Get("X-API-Key") != ""
				out.SawCookie = req.Extra.Header.Get("Cookie") != ""
				out.SawHeader = req.Extra.Header != nil
				if req.Extra.TokenInfo != nil {
					out.User = req.Extra.TokenInfo.UserID
					out.Subject, _ = req.Extra.TokenInfo.Extra["sub"].(string)
					out.Scopes = req.Extra.TokenInfo.Scopes
				}
			}
			return nil, out, nil
		})
	return s
}

// startHTTP serves s through NewHTTPHandler on an httptest server.
func startHTTP(t *testing.T, s *mcp.Server, opts transport.HTTPOptions) *httptest.Server {
	t.Helper()
	h, err := transport.NewHTTPHandler(s, opts, zap.NewNop())
	if err != nil {
		t.Fatalf("NewHTTPHandler: %v", err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// connect opens a client session pinned to version ("" is the client's
// default) and closes it at the end of the test.
func connect(t *testing.T, tr mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "transport-test-client", Version: "v0.0.1"}, nil)
	cs, err := c.Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("Connect(%s): %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// callJSON calls a tool and decodes its structured result into out.
func callJSON(t *testing.T, cs *mcp.ClientSession, name string, args, out any) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	if res.IsError {
		t.Fatalf("CallTool(%s) returned a tool error: %v", name, res.Content)
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("CallTool(%s): marshal structured content: %v", name, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		t.Fatalf("CallTool(%s): decode %s: %v", name, data, err)
	}
}

// headerTransport adds fixed headers to every request (client credentials).
type headerTransport struct {
	header http.Header
	base   http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.header {
		r.Header[k] = v
	}
	return h.base.RoundTrip(r)
}

func clientWithHeader(key, value string) *http.Client {
	return clientWithHeaders(key, value)
}

// clientWithHeaders is clientWithHeader with several: key, value, ...
func clientWithHeaders(kv ...string) *http.Client {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return &http.Client{Transport: headerTransport{header: h, base: http.DefaultTransport}}
}

// rpc builds a raw request to an MCP endpoint with the headers the
// streamable transport requires.
func rpc(t *testing.T, method, url, body string, header map[string]string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, r)
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req
}

// do sends req and returns the response with its body read.
func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", req.Method, req.URL, err)
	}
	return resp, string(body)
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// watchLog returns a logger that records entries and a function returning a
// channel closed once an entry with msg has been logged.
func watchLog() (*zap.Logger, *observer.ObservedLogs, func(msg string) <-chan struct{}) {
	var mu sync.Mutex
	waiters := map[string]chan struct{}{}
	seen := map[string]bool{}
	wait := func(msg string) <-chan struct{} {
		mu.Lock()
		defer mu.Unlock()
		ch, ok := waiters[msg]
		if !ok {
			ch = make(chan struct{})
			waiters[msg] = ch
			if seen[msg] {
				close(ch)
			}
		}
		return ch
	}
	core, logs := observer.New(zapcore.DebugLevel)
	hooked := zapcore.RegisterHooks(core, func(e zapcore.Entry) error {
		mu.Lock()
		defer mu.Unlock()
		if seen[e.Message] {
			return nil
		}
		seen[e.Message] = true
		if ch, ok := waiters[e.Message]; ok {
			close(ch)
		}
		return nil
	})
	return zap.New(hooked), logs, wait
}
