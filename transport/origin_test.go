package transport_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/transport"
)

// TestOrigin checks the Origin allowlist on every MCP route, the loopback
// default, CORS headers and preflight, and the DNS-rebinding Host check.
func TestOrigin(t *testing.T) {
	defaults := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{})
	listed := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{
		AllowedOrigins: []string{"https://App.Example.com:443"},
		APIKeys:        []string{keyA},
	})
	auth := map[string]string{"Authorization": "Bearer " + keyA}
	with := func(h map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name       string
		method     string
		url        string
		header     map[string]string
		wantStatus int
		wantACAO   string // Access-Control-Allow-Origin
	}{
		{"no Origin", "POST", defaults.URL + "/mcp", nil, 200, ""},
		{"foreign origin on /mcp", "POST", defaults.URL + "/mcp", with(nil, "Origin", "https://evil.example"), 403, ""},
		{"foreign origin on /sse", "GET", defaults.URL + "/sse", with(nil, "Origin", "https://evil.example"), 403, ""},
		{"foreign origin on /messages", "POST", defaults.URL + "/messages?sessionId=x", with(nil, "Origin", "https://evil.example"), 403, ""},
		{"opaque origin", "POST", defaults.URL + "/mcp", with(nil, "Origin", "null"), 403, ""},
		{"localhost origin by default", "POST", defaults.URL + "/mcp", with(nil, "Origin", "http://localhost:6274"), 200, "http://localhost:6274"},
		{"own host by default", "POST", defaults.URL + "/mcp", with(nil, "Origin", defaults.URL), 200, defaults.URL},
		{"foreign origin on /health", "GET", defaults.URL + "/health", with(nil, "Origin", "https://evil.example"), 403, ""},
		{"foreign origin on /ready", "GET", defaults.URL + "/ready", with(nil, "Origin", "https://evil.example"), 403, ""},
		{"localhost origin on /health", "GET", defaults.URL + "/health", with(nil, "Origin", "http://localhost:6274"), 200, "http://localhost:6274"},
		{"listed origin on /health needs no credential", "GET", listed.URL + "/health", with(nil, "Origin", "https://app.example.com"), 200, "https://app.example.com"},
		{"listed origin", "POST", listed.URL + "/mcp", with(auth, "Origin", "https://app.example.com"), 200, "https://app.example.com"},
		{"listed origin without credential", "POST", listed.URL + "/mcp", with(nil, "Origin", "https://app.example.com"), 401, "https://app.example.com"},
		{"localhost not listed", "POST", listed.URL + "/mcp", with(auth, "Origin", "http://localhost:6274"), 403, ""},
		{"own host not listed", "POST", listed.URL + "/mcp", with(auth, "Origin", listed.URL), 403, ""},
		{"preflight needs no credential", "OPTIONS", listed.URL + "/mcp", with(nil,
			"Origin", "https://app.example.com", "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization, content-type, mcp-protocol-version"), 204, "https://app.example.com"},
		{"rebinding Host on /mcp", "POST", defaults.URL + "/mcp", with(nil, "Host", "evil.example"), 403, ""},
		{"rebinding Host on /sse", "GET", defaults.URL + "/sse", with(nil, "Host", "evil.example"), 403, ""},
		{"rebinding Host on /health", "GET", defaults.URL + "/health", with(nil, "Host", "evil.example"), 403, ""},
		{"rebinding Host on /ready", "GET", defaults.URL + "/ready", with(nil, "Host", "evil.example"), 403, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := initializeBody
			if tt.method == "GET" {
				body = ""
			}
			req := rpc(t, tt.method, tt.url, body, tt.header)
			if h := tt.header["Host"]; h != "" {
				req.Host = h
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", tt.method, tt.url, err)
			}
			resp.Body.Close() // an allowed GET /sse is a stream: do not read it
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d; want %d", resp.StatusCode, tt.wantStatus)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tt.wantACAO {
				t.Errorf("Access-Control-Allow-Origin = %q; want %q", got, tt.wantACAO)
			}
			if tt.method == "OPTIONS" {
				if got := resp.Header.Get("Access-Control-Allow-Headers"); !strings.Contains(got, "authorization") {
					t.Errorf("Access-Control-Allow-Headers = %q; want the requested headers", got)
				}
			}
		})
	}
}

// TestOriginOwnHostNeedsAuth checks DNS rebinding on a listener that is not
// loopback (a container's, published on the host's loopback only): a page
// of evil.example whose name now resolves to the bridge sends Host and
// Origin both evil.example. Without inbound auth nothing else stops it, so
// the request's own host is no allowed origin then; with auth the page has
// no credential, and a same-origin browser client keeps working.
func TestOriginOwnHostNeedsAuth(t *testing.T) {
	const page = "http://evil.example:8080"
	for _, tt := range []struct {
		name   string
		opts   transport.HTTPOptions
		header map[string]string
		want   int
	}{
		{"no auth", transport.HTTPOptions{Listen: "0.0.0.0:8080", NoAuth: true}, nil, http.StatusForbidden},
		{"API key", transport.HTTPOptions{Listen: "0.0.0.0:8080", APIKeys: []string{keyA}},
			map[string]string{"Authorization": "Bearer " + keyA}, http.StatusOK},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := transport.NewHTTPHandler(newMCPServer(newGate()), tt.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest("POST", page+"/mcp", strings.NewReader(initializeBody))
			req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey,
				&net.TCPAddr{IP: net.ParseIP("192.0.2.2"), Port: 8080}))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Origin", page)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Errorf("status = %d; want %d (body %q)", rec.Code, tt.want, rec.Body.String())
			}
		})
	}
}

// TestCORSExposesRetryAfter: a route's 429 (the REST facade's, over a
// quota) says when to retry in Retry-After, which is no CORS-safelisted
// header: a browser client of an allowed origin reads it only if exposed.
func TestCORSExposesRetryAfter(t *testing.T) {
	h, err := transport.NewHTTPHandler(newMCPServer(newGate()), transport.HTTPOptions{
		AllowedOrigins: []string{"https://app.example.com"},
		APIKeys:        []string{keyA},
		Routes: map[string]http.Handler{"/api/": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusTooManyRequests)
		})},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "http://127.0.0.1/api/tools/x", strings.NewReader(`{}`))
	req.Header.Set("Origin", "https://app.example.com")
	req.Header.Set("Authorization", "Bearer "+keyA)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if exposed := rec.Header().Get("Access-Control-Expose-Headers"); rec.Code != http.StatusTooManyRequests || !strings.Contains(exposed, "Retry-After") {
		t.Errorf("status %d, Access-Control-Expose-Headers %q; want 429 exposing Retry-After", rec.Code, exposed)
	}
}

// TestOriginRepeated: a request with two Origin headers is refused whatever
// the first says (an empty first one read as "no Origin" let a foreign
// second one through, as did an allowed first one), on the MCP routes and on
// /health alike.
func TestOriginRepeated(t *testing.T) {
	srv := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{})
	for _, first := range []string{"", "http://localhost:6274"} {
		for _, path := range []string{"/mcp", "/health"} {
			method, body := "POST", initializeBody
			if path == "/health" {
				method, body = "GET", ""
			}
			req := rpc(t, method, srv.URL+path, body, nil)
			req.Header["Origin"] = []string{first, "https://evil.example"}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s with Origin %q then https://evil.example: %d; want 403", path, first, resp.StatusCode)
			}
		}
	}
}
