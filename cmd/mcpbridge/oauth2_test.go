package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// TestUpstreamOAuth2 checks the client credentials grant: the bridge
// fetches a token once with the client's id and secret, sends it upstream
// as a bearer token on every call, and neither the secret nor the token
// reaches the client.
func TestUpstreamOAuth2(t *testing.T) {
	const secret, token = "client-secret-7c4a8d09ca3762af61e59520943dc264", "access-token-4e07408562bedb8b60ce05c1decfe3ad"
	var grants atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, sec, ok := r.BasicAuth()
		if err := r.ParseForm(); err != nil || r.Form.Get("grant_type") != "client_credentials" {
			http.Error(w, "bad grant", http.StatusBadRequest)
			return
		}
		if !ok {
			id, sec = r.Form.Get("client_id"), r.Form.Get("client_secret")
		}
		if r.Form.Get("audience") != "https://api.example.com/" || r.Form.Get("resource") != "https://api.example.com/v1" {
			// Auth0 refuses a grant without the audience it wants.
			http.Error(w, `{"error":"access_denied","error_description":"no audience"}`, http.StatusForbidden)
			return
		}
		if id != "bridge" || sec != secret {
			http.Error(w, "bad client", http.StatusUnauthorized)
			return
		}
		grants.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, token)
	}))
	defer tokens.Close()
	var sawToken atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+token {
			sawToken.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"echo":%q}`, r.Header.Get("Authorization")) // a careless upstream
	}))
	defer api.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("upstream-auth:\n  oauth2:\n    tokenURL: %s/token\n    clientID: bridge\n    clientSecret: %s\n    scopes: [read]\n    audience: https://api.example.com/\n    resource: https://api.example.com/v1\n", tokens.URL, secret)), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		var out, errb bytes.Buffer
		err := run(t.Context(), []string{"call", "getItem", "--args", `{"itemId":"1"}`, "--config", cfg,
			"--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml", "--upstream", api.URL + "/api", "--no-cache", "--log-level", "debug"}, nil, &out, &errb)
		if err != nil {
			t.Fatalf("call: %v\n%s", err, errb.String())
		}
		for _, s := range []string{secret, token} {
			if strings.Contains(out.String(), s) || strings.Contains(errb.String(), s) {
				t.Errorf("a credential reached the client or the log:\n%s\n%s", out.String(), errb.String())
			}
		}
	}
	if sawToken.Load() != 2 {
		t.Errorf("upstream saw the token %d times; want 2", sawToken.Load())
	}
	if grants.Load() != 2 { // one process per call: one grant each
		t.Errorf("token endpoint hit %d times; want 2 (one per process)", grants.Load())
	}
}

// TestUpstreamOAuth2ResourceChecked: a resource parameter RFC 8707 does
// not allow (relative, or with a fragment) stops the start, named.
func TestUpstreamOAuth2ResourceChecked(t *testing.T) {
	for _, res := range []string{"api/v1", "https://api.example.com/v1#frag"} {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(cfg, []byte("upstream-auth:\n  oauth2:\n    tokenURL: https://auth.example.com/token\n    clientID: bridge\n    clientSecret: s3cret-value\n    resource: \""+res+"\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		err := run(t.Context(), []string{"call", "getItem", "--args", `{"itemId":"1"}`, "--config", cfg,
			"--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml", "--upstream", "http://127.0.0.1:9/api", "--no-cache"}, nil, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), "upstream-auth.oauth2.resource") || !strings.Contains(err.Error(), "RFC 8707") {
			t.Errorf("resource %q: err = %v; want it refused", res, err)
		}
	}
}
