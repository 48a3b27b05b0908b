package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tokenIssuer is an httptest token endpoint of the client credentials
// grant that issues a new access token per request (the first is
// OAUTH-TOKEN-XYZ789), each valid for expiresIn seconds.
type tokenIssuer struct {
	srv       *httptest.Server
	expiresIn int

	mu     sync.Mutex
	issued []string
}

func newTokenIssuer(t *testing.T, secret string, expiresIn int) *tokenIssuer {
	t.Helper()
	ti := &tokenIssuer{expiresIn: expiresIn}
	ti.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, sec, ok := r.BasicAuth(); !ok || sec != secret {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client"}`)
			return
		}
		ti.mu.Lock()
		tok := "OAUTH-TOKEN-XYZ789"
		if n := len(ti.issued); n > 0 {
			tok = fmt.Sprintf("OAUTH-TOKEN-%d-ROTATED", n+1)
		}
		ti.issued = append(ti.issued, tok)
		ti.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":%d}`, tok, ti.expiresIn)
	}))
	t.Cleanup(ti.srv.Close)
	return ti
}

func (ti *tokenIssuer) tokens() []string {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return append([]string(nil), ti.issued...)
}

// oauthConfig writes a config file with the grant toward ti.
func oauthConfig(t *testing.T, tokenURL, secret string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	conf := fmt.Sprintf("upstream-auth:\n  oauth2:\n    tokenURL: %s/token\n    clientID: bridge\n    clientSecret: %s\n", tokenURL, secret)
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOAuth2TokenRedacted is the review's F3: an upstream that echoes the
// access token the bridge obtained, in any media type and encoding, in an
// error answer too, must not show it to the client or the log; tokens
// rotate, and the rotated-out ones an upstream still echoes stay masked.
func TestOAuth2TokenRedacted(t *testing.T) {
	const secret = "client-secret-0b9c2625dc21ef05f6ad4ddf47c5f203"
	issuer := newTokenIssuer(t, secret, 1) // expires at once: a new token every call
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cur := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		all := strings.Join(issuer.tokens(), " ") // the current token and every earlier one
		switch kind := strings.TrimPrefix(r.URL.Path, "/api/items/"); kind {
		case "text":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "your token is %s ok; before: %s", cur, all)
		case "json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"1","note":"your token is %s ok","all":%q,"b64":%q,"basic":%q,"link":%q}`, cur, all,
				base64.StdEncoding.EncodeToString([]byte(cur)), "Basic "+base64.StdEncoding.EncodeToString([]byte("bridge:"+cur)),
				"https://x.example/cb?t="+url.QueryEscape(cur+"/x"))
		case "xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<r><n>your token is %s ok</n><all>%s</all></r>`, cur, all)
		case "error":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"message":"token %s lacks a scope","seen":%q}`, cur, all)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer api.Close()

	var stderr bytes.Buffer
	var mu sync.Mutex
	// Registered before startBridge's own cleanup, so it runs after the
	// process has exited and written its last line.
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, tok := range append(issuer.tokens(), secret) {
			if strings.Contains(stderr.String(), tok) {
				t.Errorf("the log holds %q:\n%s", tok, stderr.String())
			}
		}
	})
	cs, _ := startBridgeStderr(t, lockedWriter{&mu, &stderr}, "serve", "--config", oauthConfig(t, issuer.srv.URL, secret),
		"--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml", "--upstream", api.URL+"/api",
		"--no-cache", "--log-level", "debug", "--retries", "0")
	for round := range 2 {
		for _, kind := range []string{"text", "json", "xml", "error"} {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"itemId": kind}})
			if err != nil {
				t.Fatalf("CallTool(getItem %s): %v", kind, err)
			}
			got := resultText(t, res)
			if want := kind == "error"; res.IsError != want {
				t.Errorf("round %d, %s: IsError = %t, want %t: %s", round, kind, res.IsError, want, got)
			}
			if !strings.Contains(got, "[REDACTED]") {
				t.Errorf("round %d, %s: nothing masked: %s", round, kind, got)
			}
			for _, tok := range issuer.tokens() {
				if strings.Contains(got, tok) {
					t.Errorf("round %d, %s: the client received the access token %q: %s", round, kind, tok, got)
				}
			}
		}
	}
	if n := len(issuer.tokens()); n < 8 {
		t.Errorf("the token endpoint issued %d tokens; want one per call (8): the test did not rotate them", n)
	}
}

// resultText is everything a result carries, its content blocks and its
// structured content, as text.
func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	var sb strings.Builder
	for _, c := range res.Content {
		b, err := c.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		sb.Write(b)
	}
	if res.StructuredContent != nil {
		fmt.Fprintf(&sb, "%v", res.StructuredContent)
	}
	return sb.String()
}
