package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// refusingAPI is an upstream that accepts only the access tokens its token
// endpoint issued since the last revoke (or none at all when refuseAll).
type refusingAPI struct {
	tokens, api *httptest.Server
	issued      atomic.Int32
	refuseAll   atomic.Bool
	refusals    atomic.Int32

	mu     sync.Mutex
	valid  map[string]bool
	bodies []string // the bodies of accepted POSTs
}

func newRefusingAPI(t *testing.T, secret string) *refusingAPI {
	t.Helper()
	ra := &refusingAPI{valid: map[string]bool{}}
	ra.tokens = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, sec, ok := r.BasicAuth(); !ok || sec != secret {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client"}`)
			return
		}
		tok := fmt.Sprintf("ACCESS-TOKEN-%d-%s", ra.issued.Add(1), strings.Repeat("k", 16))
		ra.mu.Lock()
		ra.valid[tok] = true
		ra.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, tok)
	}))
	t.Cleanup(ra.tokens.Close)
	ra.api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ra.mu.Lock()
		ok := !ra.refuseAll.Load() && ra.valid[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
		if ok && r.Method == http.MethodPost {
			ra.bodies = append(ra.bodies, string(body))
		}
		ra.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			ra.refusals.Add(1)
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_token"}`)
			return
		}
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		io.WriteString(w, `{"id":"1"}`)
	}))
	t.Cleanup(ra.api.Close)
	return ra
}

// revoke makes every token issued so far invalid, as an authorization
// server does when a token is revoked or its signing keys rotate.
func (ra *refusingAPI) revoke() {
	ra.mu.Lock()
	clear(ra.valid)
	ra.mu.Unlock()
}

// TestOAuth2RefusedTokenReplaced: an upstream that stops accepting the
// access token before it expires (revoked, keys rotated) answers 401; the
// bridge used to keep sending that token until its expiry (an hour here),
// failing every call. It now drops it, fetches one new token for all the
// calls refused at once (no stampede), and sends each refused request
// again with it, a POST with its body included. An upstream that refuses
// every token does not make the bridge fetch one per call.
func TestOAuth2RefusedTokenReplaced(t *testing.T) {
	const secret = "client-secret-5f4dcc3b5aa765d61d8327deb882cf99"
	ra := newRefusingAPI(t, secret)
	cs, _ := startBridge(t, "serve", "--config", oauthConfig(t, ra.tokens.URL, secret),
		"--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml", "--upstream", ra.api.URL+"/api",
		"--no-cache", "--retries", "0")
	call := func(name string, args map[string]any) (bool, string) {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Errorf("CallTool(%s): %v", name, err)
			return false, ""
		}
		return !res.IsError, resultText(t, res)
	}
	if ok, text := call("getItem", map[string]any{"itemId": "1"}); !ok {
		t.Fatalf("first call failed: %s", text)
	}

	ra.revoke()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			name, args := "getItem", map[string]any{"itemId": "1"}
			if i%2 == 1 {
				name, args = "createItem", map[string]any{"body": map[string]any{"name": fmt.Sprintf("n%d", i)}}
			}
			if ok, text := call(name, args); !ok {
				t.Errorf("%s after the token was revoked: %s", name, text)
			}
		})
	}
	wg.Wait()
	if n := ra.issued.Load(); n != 2 {
		t.Errorf("the token endpoint issued %d tokens; want 2 (the first, and one new one for the 16 refused calls)", n)
	}
	ra.mu.Lock()
	if len(ra.bodies) != 8 {
		t.Errorf("the upstream accepted %d POSTs; want 8", len(ra.bodies))
	}
	for _, b := range ra.bodies {
		if !strings.Contains(b, `"name":"n`) {
			t.Errorf("a POST sent again lost its body: %q", b)
		}
	}
	ra.mu.Unlock()

	// An upstream refusing every token gets its 401 back, and costs the
	// token endpoint nothing more within oauthRefusedEvery.
	ra.refuseAll.Store(true)
	before := ra.refusals.Load()
	for range 10 {
		if ok, text := call("getItem", map[string]any{"itemId": "1"}); ok || !strings.Contains(text, "401") {
			t.Errorf("with every token refused: ok=%t %s; want the upstream's 401", ok, text)
		}
	}
	if n := ra.issued.Load(); n != 2 {
		t.Errorf("the token endpoint issued %d tokens; want still 2 (a refusing upstream must not cost a token per call)", n)
	}
	if n := ra.refusals.Load() - before; n != 10 {
		t.Errorf("the upstream saw %d requests for 10 calls; want 10 (none sent again without a new token)", n)
	}
}

// TestOAuth2TokenSentAsBearer: the README promises the grant's token is
// sent as "Bearer"; x/oauth2 wrote the endpoint's token_type as the scheme
// instead ("N_A tok", which the upstream refuses). An access token that no
// header may carry (a CR LF in it) failed every call for the token's
// lifetime as a retried "transport error"; it is now refused at the fetch,
// the call saying why.
func TestOAuth2TokenSentAsBearer(t *testing.T) {
	const secret = "client-secret-9e107d9d372bb6826bd81d3542a419d6"
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/na/token":
			io.WriteString(w, `{"access_token":"ACCESS-TOKEN-NA-0123456789","token_type":"N_A","expires_in":3600}`)
		case "/crlf/token":
			io.WriteString(w, `{"access_token":"ACCESS-TOKEN-CRLF-0123456789\r\nX-Injected: yes","token_type":"Bearer","expires_in":3600}`)
		}
	}))
	defer tokens.Close()
	var mu sync.Mutex
	var seen []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Injected"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"1"}`)
	}))
	defer api.Close()
	call := func(kind string) (string, error) {
		var out, errb bytes.Buffer
		err := run(t.Context(), []string{"call", "getItem", "--args", `{"itemId":"1"}`, "--config", oauthConfig(t, tokens.URL+"/"+kind, secret),
			"--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml", "--upstream", api.URL + "/api", "--no-cache"}, nil, &out, &errb)
		return out.String(), err
	}
	if out, err := call("na"); err != nil {
		t.Fatalf("call with token_type N_A: %v\n%s", err, out)
	}
	mu.Lock()
	if want := []string{"Bearer ACCESS-TOKEN-NA-0123456789|"}; !slices.Equal(seen, want) {
		t.Errorf("the upstream saw %q; want %q", seen, want)
	}
	seen = nil
	mu.Unlock()
	out, err := call("crlf")
	if err == nil || !strings.Contains(out, "control character") {
		t.Errorf("call with an access token holding CR LF: err=%v; want an error result saying why:\n%s", err, out)
	}
	mu.Lock()
	if len(seen) != 0 {
		t.Errorf("the upstream was sent %q", seen)
	}
	mu.Unlock()
}

// TestOAuth2PlainHTTPWarned: sending credentials over plain http to a host
// that is not this machine is logged as a warning (README, Security
// model), but not when they were an OAuth2 grant: neither the client
// secret posted to a plain-http token endpoint nor the access tokens sent
// to a plain-http upstream were.
func TestOAuth2PlainHTTPWarned(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	conf := "upstream-auth:\n  oauth2:\n    tokenURL: http://auth.example.com/token\n    clientID: bridge\n    clientSecret: client-secret-1a79a4d60de6718e8e5b326e338ae533\n"
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"tools", "--config", cfg, "--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml",
		"--upstream", "http://api.example.com/api", "--no-cache"}, nil, &out, &errb); err != nil {
		t.Fatalf("tools: %v\n%s", err, errb.String())
	}
	for _, want := range []string{
		`the OAuth2 client secret will travel unencrypted: the token URL is plain http on a non-loopback host; use https	{"host": "auth.example.com"}`,
		`upstream credentials will travel unencrypted: the upstream URL is plain http on a non-loopback host; use https	{"host": "api.example.com"}`,
	} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("no warning %q in the log:\n%s", want, errb.String())
		}
	}
}
