package transport_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/transport"
)

// TestStatefulCallWithoutSession: a stateful server answers a call posted
// without Mcp-Session-Id (other than initialize and ping) with 400 and a
// JSON-RPC -32600 under the call's id saying to initialize first, as the
// streamable HTTP transport says a server requiring sessions should; go-sdk
// answered 200 with error code 0. A request declaring 2026-07-28 still
// hears from go-sdk which revisions the server speaks, and the session
// path is unchanged.
func TestStatefulCallWithoutSession(t *testing.T) {
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Stateful: true})
	post := func(body string, header map[string]string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if !strings.Contains(resp.Header.Get("Content-Type"), "text/event-stream") {
			_ = json.Unmarshal(data, &m)
			return resp.StatusCode, m
		}
		for _, line := range strings.Split(string(data), "\n") { // the answer among the events
			var ev map[string]any
			if rest, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(rest), &ev) == nil && ev["id"] != nil {
				m = ev
			}
		}
		return resp.StatusCode, m
	}
	call := `{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`
	for _, version := range []string{"", v20250618, v20251125} {
		status, m := post(call, map[string]string{"MCP-Protocol-Version": version})
		e, _ := m["error"].(map[string]any)
		if status != http.StatusBadRequest || m["id"] != "c1" || e["code"] != float64(-32600) || !strings.Contains(e["message"].(string), "Mcp-Session-Id") {
			t.Errorf("version %q: call without a session = %d %v; want 400, -32600 under id c1 naming Mcp-Session-Id", version, status, m)
		}
	}
	if status, m := post(call, map[string]string{"MCP-Protocol-Version": v20260728}); status != http.StatusBadRequest || m["error"].(map[string]any)["code"] != float64(-32022) {
		t.Errorf("2026-07-28 call without a session = %d %v; want go-sdk's 400 -32022 (unsupported revision)", status, m)
	}
	if status, m := post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`, nil); status != http.StatusOK || m["result"] == nil {
		t.Errorf("ping without a session = %d %v; want 200 with a result", status, m)
	}

	// The session path: initialize, then the same call with its id.
	req, _ := http.NewRequestWithContext(t.Context(), "POST", ts.URL+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body) // the answer: the session is initialized
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize answered no Mcp-Session-Id")
	}
	h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": v20251125}
	if status, _ := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, h); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized = %d; want 202", status)
	}
	if status, m := post(call, h); status != http.StatusOK || m["result"] == nil {
		t.Errorf("call in the session = %d %v; want 200 with a result", status, m)
	}
}
