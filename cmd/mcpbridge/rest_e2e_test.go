package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestRESTAndMetricsEndToEnd drives the real binary over HTTP with --rest:
// the facade is behind the inbound auth (401 without the key), answers
// calls through the same chain, and /metrics counts them by outcome.
func TestRESTAndMetricsEndToEnd(t *testing.T) {
	rec := newRecorder(t)
	base := startHTTPBridge(t, "serve",
		"--spec", "testdata/e2e.yaml",
		"--whitelist", "testdata/e2e-whitelist.yaml",
		"--upstream", rec.srv.URL+"/api",
		"--api-key", "client-key-1",
		"--rest",
	)
	authed := &http.Client{Transport: bearer{"client-key-1", http.DefaultTransport}}
	do := func(c *http.Client, method, path, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	if status, _ := do(http.DefaultClient, "GET", "/api/tools", ""); status != http.StatusUnauthorized {
		t.Errorf("GET /api/tools without a key: %d; want 401", status)
	}
	if status, _ := do(http.DefaultClient, "POST", "/api/tools/getItem", `{"itemId":"1"}`); status != http.StatusUnauthorized {
		t.Errorf("POST without a key: %d; want 401", status)
	}
	status, body := do(authed, "GET", "/api/tools", "")
	var tools []struct{ Name string }
	if err := json.Unmarshal([]byte(body), &tools); status != 200 || err != nil || len(tools) != 9 {
		t.Fatalf("GET /api/tools: %d %s", status, body)
	}
	status, body = do(authed, "POST", "/api/tools/getItem", `{"itemId":"42"}`)
	if status != 200 || !strings.Contains(body, `{\"id\":\"42\"}`) {
		t.Errorf("POST /api/tools/getItem: %d %s", status, body)
	}
	if status, _ := do(authed, "POST", "/api/tools/getItem", `{"itemId":42}`); status != 200 {
		t.Errorf("bad arguments: %d; want 200 with isError", status)
	}
	if status, _ := do(authed, "POST", "/api/tools/nope", `{}`); status != 404 {
		t.Errorf("unknown tool: %d; want 404", status)
	}
	status, body = do(http.DefaultClient, "GET", "/metrics", "")
	if status != 200 {
		t.Fatalf("/metrics: %d", status)
	}
	for _, want := range []string{
		`mcpbridge_tool_calls_total{outcome="ok",tool="getItem"} 1`,
		`mcpbridge_tool_calls_total{outcome="bad_arguments",tool="getItem"} 1`,
		`mcpbridge_tools 8`,
		`mcpbridge_build_info{version="dev"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
