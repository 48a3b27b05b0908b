package transport_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/transport"
)

// rpcErrorDoc is a JSON-RPC error response as a client decodes it.
type rpcErrorDoc struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code int64 `json:"code"`
	} `json:"error"`
}

// TestHTTPContract checks the status codes and headers of the HTTP contract
// with raw requests.
func TestHTTPContract(t *testing.T) {
	stateless := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{MaxBodyBytes: 1024})
	stateful := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Stateful: true, MaxBodyBytes: 1024})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", 2048) + `"}}`
	deep := func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`
	}

	tests := []struct {
		name       string
		server     string
		method     string
		path       string
		body       string
		header     map[string]string
		wantStatus int
		wantAllow  string
		wantRPC    int64 // JSON-RPC error code in the body; 0 means none checked
		wantEmpty  bool  // the body must be empty
	}{
		{name: "notification gets 202 and no body", server: stateless.URL, method: "POST", path: "/mcp",
			body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, wantStatus: 202, wantEmpty: true},
		{name: "malformed JSON gets a parse error", server: stateless.URL, method: "POST", path: "/mcp",
			body: `{"jsonrpc":"2.0","id":1,"method":`, wantStatus: 400, wantRPC: -32700},
		{name: "empty body gets a parse error", server: stateless.URL, method: "POST", path: "/mcp",
			body: ``, wantStatus: 400, wantRPC: -32700},
		{name: "JSON that is not JSON-RPC is an invalid request", server: stateless.URL, method: "POST", path: "/mcp",
			body: `42`, wantStatus: 400, wantRPC: -32600},
		{name: "object without jsonrpc tag is an invalid request", server: stateless.URL, method: "POST", path: "/mcp",
			body: `{"id":1,"method":"tools/list"}`, wantStatus: 400, wantRPC: -32600},
		{name: "an id and nothing else is an invalid request", server: stateless.URL, method: "POST", path: "/mcp",
			body: `{"jsonrpc":"2.0","id":16}`, wantStatus: 400, wantRPC: -32600},
		{name: "a request with a null id is an invalid request", server: stateless.URL, method: "POST", path: "/mcp",
			body: `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, wantStatus: 400, wantRPC: -32600},
		{name: "a response gets 202 and no body", server: stateless.URL, method: "POST", path: "/mcp",
			body: `{"jsonrpc":"2.0","id":18,"result":{}}`, wantStatus: 202, wantEmpty: true},
		{name: "an id with a lone surrogate is an invalid request", server: stateless.URL, method: "POST", path: "/mcp",
			body: `{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, wantStatus: 400, wantRPC: -32600},
		// Batches (protocol 2025-03-26): each element is checked as a single
		// message would be, and one bad element refuses the batch, as go-sdk
		// does with the elements it refuses itself.
		{name: "a batch is served", server: stateless.URL, method: "POST", path: "/mcp", header: map[string]string{"MCP-Protocol-Version": "2025-03-26"},
			body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":"1","method":"ping"}]`, wantStatus: 200},
		{name: "an empty batch is an invalid request", server: stateless.URL, method: "POST", path: "/mcp", header: map[string]string{"MCP-Protocol-Version": "2025-03-26"},
			body: `[]`, wantStatus: 400, wantRPC: -32600},
		{name: "a batch with an id beyond 2^53 is an invalid request", server: stateless.URL, method: "POST", path: "/mcp", header: map[string]string{"MCP-Protocol-Version": "2025-03-26"},
			body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}]`, wantStatus: 400, wantRPC: -32600},
		{name: "a batch with a null id is an invalid request", server: stateless.URL, method: "POST", path: "/mcp", header: map[string]string{"MCP-Protocol-Version": "2025-03-26"},
			body: `[{"jsonrpc":"2.0","id":null,"method":"ping"}]`, wantStatus: 400, wantRPC: -32600},
		{name: "a batch with an id and nothing else is an invalid request", server: stateless.URL, method: "POST", path: "/mcp", header: map[string]string{"MCP-Protocol-Version": "2025-03-26"},
			body: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":16}]`, wantStatus: 400, wantRPC: -32600},
		{name: "a batch with two calls of one id is an invalid request", server: stateless.URL, method: "POST", path: "/mcp", header: map[string]string{"MCP-Protocol-Version": "2025-03-26"},
			body: `[{"jsonrpc":"2.0","id":24,"method":"ping"},{"jsonrpc":"2.0","id":24,"method":"ping"}]`, wantStatus: 400, wantRPC: -32600},
		{name: "JSON nested deeper than 64 is an invalid request", server: stateless.URL, method: "POST", path: "/mcp",
			body: deep(62), wantStatus: 400, wantRPC: -32600},
		{name: "JSON nested 64 deep is served", server: stateless.URL, method: "POST", path: "/mcp",
			body: deep(61), wantStatus: 200},
		{name: "deep JSON on /messages is an invalid request", server: stateless.URL, method: "POST", path: "/messages?sessionId=x",
			body: deep(200), wantStatus: 400, wantRPC: -32600},
		{name: "stateless GET gets 405", server: stateless.URL, method: "GET", path: "/mcp",
			wantStatus: 405, wantAllow: "POST"},
		{name: "stateless DELETE gets 405", server: stateless.URL, method: "DELETE", path: "/mcp",
			wantStatus: 405, wantAllow: "POST"},
		{name: "stateful PUT gets 405", server: stateful.URL, method: "PUT", path: "/mcp",
			wantStatus: 405, wantAllow: "GET, POST, DELETE"},
		{name: "stateful POST to unknown session gets 404", server: stateful.URL, method: "POST", path: "/mcp",
			body: `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, header: map[string]string{"Mcp-Session-Id": "nope"}, wantStatus: 404},
		{name: "stateful GET of unknown session gets 404", server: stateful.URL, method: "GET", path: "/mcp",
			header: map[string]string{"Mcp-Session-Id": "nope"}, wantStatus: 404},
		{name: "stateful DELETE of unknown session gets 404", server: stateful.URL, method: "DELETE", path: "/mcp",
			header: map[string]string{"Mcp-Session-Id": "nope"}, wantStatus: 404},
		{name: "body over the limit gets 413", server: stateless.URL, method: "POST", path: "/mcp",
			body: big, wantStatus: 413},
		{name: "body over the limit on /messages gets 413", server: stateless.URL, method: "POST", path: "/messages?sessionId=x",
			body: big, wantStatus: 413},
		{name: "wrong content type gets 415", server: stateless.URL, method: "POST", path: "/mcp",
			body: `{}`, header: map[string]string{"Content-Type": "text/plain"}, wantStatus: 415},
		{name: "POST /sse gets 405", server: stateless.URL, method: "POST", path: "/sse",
			body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, wantStatus: 405, wantAllow: "GET"},
		{name: "GET /messages gets 405", server: stateless.URL, method: "GET", path: "/messages",
			wantStatus: 405, wantAllow: "POST"},
		{name: "unknown SSE session gets 404", server: stateless.URL, method: "POST", path: "/messages?sessionId=nope",
			body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, wantStatus: 404},
		{name: "missing SSE session id gets 400", server: stateless.URL, method: "POST", path: "/messages",
			body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, wantStatus: 400},
		{name: "malformed JSON on /messages gets a parse error", server: stateless.URL, method: "POST", path: "/messages?sessionId=x",
			body: `not json`, wantStatus: 400, wantRPC: -32700},
		{name: "initialize is served", server: stateless.URL, method: "POST", path: "/mcp",
			body: initializeBody, wantStatus: 200},
		{name: "health is served", server: stateless.URL, method: "GET", path: "/health", wantStatus: 200},
		{name: "POST /health gets 405", server: stateless.URL, method: "POST", path: "/health", wantStatus: 405, wantAllow: "GET, HEAD"},
		{name: "metadata is not served without auth", server: stateless.URL, method: "GET", path: "/.well-known/oauth-protected-resource", wantStatus: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, rpc(t, tt.method, tt.server+tt.path, tt.body, tt.header))
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d; want %d (body %q)", resp.StatusCode, tt.wantStatus, body)
			}
			if got := resp.Header.Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q; want %q", got, tt.wantAllow)
			}
			if tt.wantEmpty && body != "" {
				t.Errorf("body = %q; want empty", body)
			}
			if tt.wantRPC != 0 {
				var got rpcErrorDoc
				if err := json.Unmarshal([]byte(body), &got); err != nil {
					t.Fatalf("body %q is not a JSON-RPC error: %v", body, err)
				}
				want := rpcErrorDoc{JSONRPC: "2.0", ID: json.RawMessage("null")}
				want.Error.Code = tt.wantRPC
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("JSON-RPC error mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestLegacySSEEndpoint checks that GET /sse announces the /messages route
// with a sessionId parameter, and that a POST there is accepted with 202
// and answered on the stream as an "event: message".
func TestLegacySSEEndpoint(t *testing.T) {
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{})
	req := rpc(t, "GET", ts.URL+"/sse", "", map[string]string{"Accept": "text/event-stream"})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /sse: %v", err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q; want text/event-stream", ct)
	}
	events := sseEvents(bufio.NewReader(resp.Body))
	first := <-events
	if first.name != "endpoint" || !strings.HasPrefix(first.data, "/messages?sessionId=") {
		t.Fatalf("first event = %+v; want an endpoint event naming /messages?sessionId=...", first)
	}

	post, body := do(t, rpc(t, "POST", ts.URL+first.data, initializeBody, nil))
	if post.StatusCode != http.StatusAccepted {
		t.Fatalf("POST %s = %d %q; want 202", first.data, post.StatusCode, body)
	}
	msg := <-events
	var got struct {
		ID     int `json:"id"`
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(msg.data), &got); msg.name != "message" || err != nil {
		t.Fatalf("second event = %+v (%v); want a message event with the initialize result", msg, err)
	}
	if got.ID != 1 || got.Result.ProtocolVersion != "2025-06-18" {
		t.Errorf("initialize result = %+v; want id 1, protocolVersion 2025-06-18", got)
	}
}

// sseEvent is one parsed server-sent event, or a comment (name ":").
type sseEvent struct {
	name, data string
}

// sseEvents parses r into events and comments until it ends.
func sseEvents(r *bufio.Reader) <-chan sseEvent {
	ch := make(chan sseEvent, 64)
	go func() {
		defer close(ch)
		var ev sseEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "":
				if ev != (sseEvent{}) {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				ch <- sseEvent{name: ":", data: strings.TrimSpace(line[1:])}
			case strings.HasPrefix(line, "event:"):
				ev.name = strings.TrimSpace(line[len("event:"):])
			case strings.HasPrefix(line, "data:"):
				ev.data = strings.TrimSpace(line[len("data:"):])
			}
		}
	}()
	return ch
}

// TestUnknownNotificationIgnored checks that a notification of a method the
// server does not know is ignored, as JSON-RPC has it (no answer, no
// error), alone or in a batch whose other messages are served: go-sdk
// refuses the whole POST, in plain text.
func TestUnknownNotificationIgnored(t *testing.T) {
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{})
	v := map[string]string{"MCP-Protocol-Version": "2025-03-26"}
	const unknown = `{"jsonrpc":"2.0","method":"notifications/acme/whatever","params":{}}`
	tests := []struct {
		name, body string
		wantStatus int
		wantIn     string // in the body; "" means an empty body
	}{
		{"alone", unknown, 202, ""},
		{"in a batch", `[{"jsonrpc":"2.0","id":7,"method":"ping"},` + unknown + `]`, 200, `"id":7,"result":{}`},
		{"in a batch of notifications", `[` + unknown + `,{"jsonrpc":"2.0","method":"notifications/initialized"}]`, 202, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, rpc(t, "POST", ts.URL+"/mcp", tt.body, v))
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d; want %d (body %q)", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantIn == "" && body != "" || !strings.Contains(body, tt.wantIn) {
				t.Errorf("body = %q; want %q in it", body, tt.wantIn)
			}
		})
	}
}

// TestInitializeBadParams checks that initialize params that are not the
// object the method takes get -32602 (Invalid params) under the call's id:
// go-sdk answers them with error code 0.
func TestInitializeBadParams(t *testing.T) {
	stateless := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{})
	stateful := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Stateful: true})
	for _, ts := range []string{stateless.URL, stateful.URL} {
		for _, params := range []string{`[]`, `null`, `{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}`} {
			resp, body := do(t, rpc(t, "POST", ts+"/mcp", `{"jsonrpc":"2.0","id":"i","method":"initialize","params":`+params+`}`, nil))
			var got rpcErrorDoc
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("params %s: status %d, body %q is not a JSON-RPC error: %v", params, resp.StatusCode, body, err)
			}
			want := rpcErrorDoc{JSONRPC: "2.0", ID: json.RawMessage(`"i"`)}
			want.Error.Code = -32602
			if resp.StatusCode != http.StatusBadRequest || !cmp.Equal(want, got) {
				t.Errorf("params %s: status %d, error %+v; want 400, %+v", params, resp.StatusCode, got, want)
			}
		}
	}
}

// TestOversizedBodyRefusedBeforeContinue: a POST whose Content-Length is
// over the limit is refused with 413 at once, so that a client waiting on
// Expect: 100-continue (curl does for bodies over 1 MiB) never uploads it;
// reading it would first send "100 Continue".
func TestOversizedBodyRefusedBeforeContinue(t *testing.T) {
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{MaxBodyBytes: 1024})
	for _, path := range []string{"/mcp", "/messages?sessionId=x"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 4096\r\nExpect: 100-continue\r\n\r\n",
			path, strings.TrimPrefix(ts.URL, "http://"))
		status, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			t.Fatalf("%s: reading the status line: %v", path, err)
		}
		if !strings.Contains(status, " 413 ") {
			t.Errorf("%s: status line %q; want 413 before any body is sent", path, strings.TrimSpace(status))
		}
	}
}
