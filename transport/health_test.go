package transport_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/transport"
)

// TestHealthAndReady checks the /health document and that /ready follows
// Status().Ready, without credentials even when auth is on; the upstream URL
// is shown only to an authenticated caller.
func TestHealthAndReady(t *testing.T) {
	var ready atomic.Bool
	status := func() transport.Status {
		return transport.Status{
			Version: "v1.2.3", Transport: "http", UpstreamBaseURL: "https://api.example.com/v1",
			Tools: 7, Degraded: !ready.Load(), Ready: ready.Load(),
		}
	}
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Status: status, APIKeys: []string{keyA}})

	get := func(path string, header map[string]string) (int, map[string]any) {
		t.Helper()
		resp, body := do(t, rpc(t, "GET", ts.URL+path, "", header))
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("GET %s Content-Type = %q; want application/json", path, ct)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatalf("GET %s: decoding %q: %v", path, body, err)
		}
		return resp.StatusCode, doc
	}

	want := map[string]any{
		"status": "ok", "version": "v1.2.3", "transport": "http",
		"tools": 7.0, "listed": 0.0, "operations": 0.0, "degraded": true, "ready": false,
	}
	for _, c := range []struct {
		name     string
		header   map[string]string
		upstream bool
	}{
		{"no credential", nil, false},
		{"wrong key", map[string]string{"Authorization": "Bearer wrong"}, false},
		{"valid key", map[string]string{"Authorization": "Bearer " + keyA}, true},
	} {
		code, doc := get("/health", c.header)
		if code != http.StatusOK {
			t.Errorf("GET /health, %s = %d; want 200", c.name, code)
		}
		w := maps.Clone(want)
		if c.upstream {
			w["upstream_base_url"] = "https://api.example.com/v1"
		}
		if diff := cmp.Diff(w, doc); diff != "" {
			t.Errorf("/health, %s mismatch (-want +got):\n%s", c.name, diff)
		}
	}

	for _, step := range []struct {
		ready bool
		code  int
	}{{false, http.StatusServiceUnavailable}, {true, http.StatusOK}} {
		ready.Store(step.ready)
		code, doc := get("/ready", nil)
		if code != step.code {
			t.Errorf("GET /ready with Ready=%v = %d; want %d", step.ready, code, step.code)
		}
		if diff := cmp.Diff(map[string]any{"ready": step.ready}, doc); diff != "" {
			t.Errorf("/ready mismatch (-want +got):\n%s", diff)
		}
	}
}

// TestHealthWithoutAuthShowsUpstream checks that with auth off (a loopback
// listener) the upstream URL is shown to anyone who passes the Host and
// Origin checks.
func TestHealthWithoutAuthShowsUpstream(t *testing.T) {
	status := func() transport.Status { return transport.Status{UpstreamBaseURL: "http://10.0.0.5/api", Ready: true} }
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Status: status})
	resp, body := do(t, rpc(t, "GET", ts.URL+"/health", "", nil))
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /health = %d %q (%v); want 200 and JSON", resp.StatusCode, body, err)
	}
	if got := doc["upstream_base_url"]; got != "http://10.0.0.5/api" {
		t.Errorf("upstream_base_url = %v; want http://10.0.0.5/api", got)
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
