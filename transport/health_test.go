package transport_test

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/transport"
)

// TestHealthAndReady checks the /health document and that /ready follows
// Status().Ready, without credentials even when auth is on.
func TestHealthAndReady(t *testing.T) {
	var ready atomic.Bool
	status := func() transport.Status {
		return transport.Status{
			Version: "v1.2.3", Transport: "http", UpstreamBaseURL: "https://api.example.com/v1",
			Tools: 7, Degraded: !ready.Load(), Ready: ready.Load(),
		}
	}
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Status: status, APIKeys: []string{keyA}})

	get := func(path string) (int, map[string]any) {
		t.Helper()
		resp, body := do(t, rpc(t, "GET", ts.URL+path, "", nil))
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s Content-Type = %q; want application/json", path, ct)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatalf("GET %s: decoding %q: %v", path, body, err)
		}
		return resp.StatusCode, doc
	}

	code, doc := get("/health")
	want := map[string]any{
		"status": "ok", "version": "v1.2.3", "transport": "http", "upstream_base_url": "https://api.example.com/v1",
		"tools": 7.0, "degraded": true, "ready": false,
	}
	if code != http.StatusOK {
		t.Errorf("GET /health = %d; want 200", code)
	}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("/health mismatch (-want +got):\n%s", diff)
	}

	for _, step := range []struct {
		ready bool
		code  int
	}{{false, http.StatusServiceUnavailable}, {true, http.StatusOK}} {
		ready.Store(step.ready)
		code, doc := get("/ready")
		if code != step.code {
			t.Errorf("GET /ready with Ready=%v = %d; want %d", step.ready, code, step.code)
		}
		if diff := cmp.Diff(map[string]any{"ready": step.ready}, doc); diff != "" {
			t.Errorf("/ready mismatch (-want +got):\n%s", diff)
		}
	}
}

// TestHealthWithoutStatus checks the minimal documents of a nil Status.
func TestHealthWithoutStatus(t *testing.T) {
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{})
	for path, want := range map[string]string{"/health": `{"status":"ok"}` + "\n", "/ready": `{"ready":true}` + "\n"} {
		resp, body := do(t, rpc(t, "GET", ts.URL+path, "", nil))
		if resp.StatusCode != http.StatusOK || body != want {
			t.Errorf("GET %s = %d %q; want 200 %q", path, resp.StatusCode, body, want)
		}
	}
}
