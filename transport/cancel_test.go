package transport_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/transport"
	"github.com/mcpbridge/mcpbridge/transport/reqctx"
)

// newBoundServer returns a go-sdk server whose tool "hold" binds its
// context to the request's (transport/reqctx), as the bridge's handler
// does, and then waits like "slow".
func newBoundServer(g *gate) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "transport-test", Version: "v0.0.1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "hold", Description: "waits for the test or its cancellation"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, slowOut, error) {
			ctx, release := reqctx.Bind(ctx)
			defer release()
			g.started <- struct{}{}
			select {
			case <-g.release:
				return nil, slowOut{Done: true}, nil
			case <-ctx.Done():
				g.cancelled <- struct{}{}
				return nil, slowOut{}, ctx.Err()
			}
		})
	return s
}

const holdCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hold","arguments":{}}}`

func cancelBody(id string) string {
	return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"test"}}`
}

// postAsync sends a stateless POST and returns a channel that delivers its
// body (or the error) once the response ends.
func postAsync(t *testing.T, url, body, key string) <-chan string {
	t.Helper()
	req := rpc(t, "POST", url+"/mcp", body, map[string]string{
		"MCP-Protocol-Version": v20250618,
		"Authorization":        "Bearer " + key,
	})
	done := make(chan string, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			done <- "error: " + err.Error()
			return
		}
		done <- string(data)
	}()
	return done
}

// sendCancel posts notifications/cancelled for id with key and wants 202.
func sendCancel(t *testing.T, url, id, key string) {
	t.Helper()
	resp, body := do(t, rpc(t, "POST", url+"/mcp", cancelBody(id), map[string]string{
		"MCP-Protocol-Version": v20250618,
		"Authorization":        "Bearer " + key,
	}))
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/cancelled(%s) = %d %q; want 202", id, resp.StatusCode, body)
	}
}

func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// TestStatelessCancelNotification: in stateless HTTP, where the call and
// its notifications/cancelled come on different POSTs (different go-sdk
// sessions), the notification cancels the call's context, the call's POST
// ends at once without a result for the call, and the table is left
// usable. A notification from another caller, for an id not in flight, or
// for the same id as a string, cancels nothing.
func TestStatelessCancelNotification(t *testing.T) {
	g := newGate()
	ts := startHTTP(t, newBoundServer(g), transport.HTTPOptions{APIKeys: []string{keyA, keyB}})

	for round := range 2 { // the second round: nothing of the first is left behind
		call := postAsync(t, ts.URL, holdCall, keyA)
		wait(t, g.started, "the call to start")

		sendCancel(t, ts.URL, "7", keyB)   // another caller's
		sendCancel(t, ts.URL, "8", keyA)   // not in flight
		sendCancel(t, ts.URL, `"7"`, keyA) // a string id is another id
		select {
		case <-g.cancelled:
			t.Fatalf("round %d: a notification that is not the caller's for id 7 cancelled the call", round)
		case body := <-call:
			t.Fatalf("round %d: the call ended before its cancellation: %q", round, body)
		case <-time.After(200 * time.Millisecond):
		}

		start := time.Now()
		sendCancel(t, ts.URL, "7", keyA)
		wait(t, g.cancelled, "the tool to see its context cancelled")
		body := wait(t, call, "the cancelled call's POST to end")
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("round %d: the cancelled call's POST took %v to end", round, took)
		}
		if strings.Contains(body, `"id":7`) || strings.HasPrefix(body, "error:") {
			t.Errorf("round %d: the cancelled call's POST carried %q; want it ended without a response", round, body)
		}
	}

	// A call that is not cancelled is answered as before.
	call := postAsync(t, ts.URL, holdCall, keyA)
	wait(t, g.started, "the call to start")
	close(g.release)
	if body := wait(t, call, "the call's answer"); !strings.Contains(body, `"id":7`) || !strings.Contains(body, `"done":true`) {
		t.Errorf("uncancelled call answered %q", body)
	}
}

// TestSSECancelledCallNotAnswered: on the legacy SSE transport, a call the
// client cancels with notifications/cancelled gets no response on the
// stream (the TypeScript SDK reports an answer to a forgotten id as an
// error), while the calls after it are answered.
func TestSSECancelledCallNotAnswered(t *testing.T) {
	g := newGate()
	ts := startHTTP(t, newMCPServer(g), transport.HTTPOptions{})
	events, endpoint := openSSE(t, ts.URL)
	post := func(body string) {
		t.Helper()
		r, _ := do(t, rpc(t, http.MethodPost, ts.URL+endpoint, body, nil))
		if r.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: %s", body, r.Status)
		}
	}
	// next returns the next event that answers a call.
	next := func() string {
		t.Helper()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatal("the stream ended")
				}
				if strings.Contains(e, `"id"`) {
					return e
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no answer")
			}
		}
	}
	post(initializeBody)
	next()
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	<-g.started
	post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	<-g.cancelled
	time.Sleep(100 * time.Millisecond) // the cancelled call's answer, were it sent, is out
	post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	if e := next(); !strings.Contains(e, `"id":3`) {
		t.Fatalf("first answer after the cancellation: %s; want the ping's (id 3)", e)
	}
}

// TestStatefulDeleteCancelsCalls: a DELETE of a stateful session ends the
// calls it has in flight (and so their upstream requests) at once; go-sdk
// would otherwise hold the DELETE until each call finished on its own.
func TestStatefulDeleteCancelsCalls(t *testing.T) {
	g := newGate()
	ts := startHTTP(t, newBoundServer(g), transport.HTTPOptions{Stateful: true})
	c := mcp.NewClient(&mcp.Implementation{Name: "delete-test", Version: "v0"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	go func() { _, _ = cs.CallTool(context.WithoutCancel(t.Context()), &mcp.CallToolParams{Name: "hold"}) }()
	wait(t, g.started, "the call to start")

	deleted := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(rpc(t, "DELETE", ts.URL+"/mcp", "", map[string]string{"Mcp-Session-Id": cs.ID()}))
		if err != nil {
			deleted <- 0
			return
		}
		resp.Body.Close()
		deleted <- resp.StatusCode
	}()
	select {
	case <-g.cancelled:
	case <-time.After(3 * time.Second):
		close(g.release) // let the DELETE end
		t.Fatal("the call was not cancelled by the session's DELETE")
	}
	if got := wait(t, deleted, "the DELETE"); got != http.StatusNoContent {
		t.Errorf("DELETE = %d; want 204", got)
	}
}

// TestSSEDuplicateCallID: on the legacy SSE transport, a call posted under
// the id of a call not yet answered is refused (400, -32600 under that id),
// as over stdio and stateful HTTP; go-sdk would accept it (202) and then
// drop it unanswered, leaving the client waiting. The first call is still
// answered.
func TestSSEDuplicateCallID(t *testing.T) {
	g := newGate()
	ts := startHTTP(t, newMCPServer(g), transport.HTTPOptions{})
	events, endpoint := openSSE(t, ts.URL)
	post := func(body string) (int, string) {
		t.Helper()
		r, b := do(t, rpc(t, http.MethodPost, ts.URL+endpoint, body, nil))
		return r.StatusCode, b
	}
	post(initializeBody)
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
	if status, body := post(call); status != http.StatusAccepted {
		t.Fatalf("first call: %d %q; want 202", status, body)
	}
	wait(t, g.started, "the first call to start")
	status, body := post(call)
	if want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32600,`; status != http.StatusBadRequest || !strings.HasPrefix(body, want) {
		t.Errorf("second call under id 2: %d %q; want 400 starting %s", status, body, want)
	}
	close(g.release)
	for e := range events {
		if strings.Contains(e, `"id":2`) {
			if !strings.Contains(e, `"done":true`) {
				t.Errorf("answer to id 2 = %s; want the first call's result", e)
			}
			return
		}
	}
	t.Fatal("the stream ended without the first call's answer")
}

// TestStatelessCancelInBatch: a notifications/cancelled inside a batch
// (protocol 2025-03-26) cancels the caller's call in flight on another POST,
// as one sent alone does, and the rest of the batch is answered.
func TestStatelessCancelInBatch(t *testing.T) {
	g := newGate()
	ts := startHTTP(t, newBoundServer(g), transport.HTTPOptions{APIKeys: []string{keyA}})
	call := postAsync(t, ts.URL, holdCall, keyA)
	wait(t, g.started, "the call to start")
	resp, body := do(t, rpc(t, "POST", ts.URL+"/mcp", `[`+cancelBody("7")+`,{"jsonrpc":"2.0","id":1,"method":"ping"}]`, map[string]string{
		"MCP-Protocol-Version": "2025-03-26",
		"Authorization":        "Bearer " + keyA,
	}))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"id":1`) {
		t.Errorf("batch = %d %q; want 200 with the ping's answer", resp.StatusCode, body)
	}
	select {
	case <-g.cancelled:
	case <-time.After(3 * time.Second):
		close(g.release)
		t.Fatal("the notification in the batch did not cancel the call")
	}
	if body := wait(t, call, "the cancelled call's POST to end"); strings.Contains(body, `"id":7`) {
		t.Errorf("the cancelled call's POST carried %q; want it ended without a response", body)
	}
}

// openSSE opens a legacy SSE stream at base+"/sse" for the test's
// lifetime: the data lines of its events, and the message endpoint (the
// first event).
func openSSE(t *testing.T, base string) (<-chan string, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(rpc(t, http.MethodGet, base+"/sse", "", map[string]string{"Accept": "text/event-stream"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	events := make(chan string, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()
	return events, <-events
}
