package transport_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/transport"
)

const (
	keyA = "test-key-alpha-0123456789"
	keyB = "test-key-bravo-9876543210"
)

// TestAPIKeys checks where keys are accepted and the 401 answers. With API
// keys alone no authorization server exists, so the challenge must not send
// clients to RFC 9728 metadata (and into an OAuth flow that cannot work).
func TestAPIKeys(t *testing.T) {
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{APIKeys: []string{keyA, keyB}, AllowAPIKeyHeader: true})
	noHeader := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{APIKeys: []string{keyA}})
	withAS := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{
		APIKeys: []string{keyA}, AuthorizationServers: []string{"https://auth.example.com"},
	})
	metadata := func(url string) string {
		return `Bearer resource_metadata="` + url + `/.well-known/oauth-protected-resource/mcp"`
	}
	tests := []struct {
		name        string
		url         string
		header      map[string]string
		wantStatus  int
		wantWWWAuth string // exact header; "" means none
	}{
		{"no credential", ts.URL, nil, 401, "Bearer"},
		{"wrong key", ts.URL, map[string]string{"Authorization": "Bearer wrong"}, 401,
			`Bearer error="invalid_token", error_description="unknown API key or invalid token"`},
		{"basic scheme", ts.URL, map[string]string{"Authorization": "Basic " + keyA}, 401, "Bearer"},
		{"first key", ts.URL, map[string]string{"Authorization": "Bearer " + keyA}, 200, ""},
		{"second key, lower-case scheme", ts.URL, map[string]string{"Authorization": "bearer " + keyB}, 200, ""},
		{"prefix of a key", ts.URL, map[string]string{"Authorization": "Bearer " + keyA[:10]}, 401,
			`Bearer error="invalid_token", error_description="unknown API key or invalid token"`},
		{"X-API-Key when allowed", ts.URL, map[string]string{"X-API-Key": keyB}, 200, ""},
		{"wrong X-API-Key", ts.URL, map[string]string{"X-API-Key": "wrong"}, 401,
			`Bearer error="invalid_token", error_description="unknown API key"`},
		{"X-API-Key when not allowed", noHeader.URL, map[string]string{"X-API-Key": keyA}, 401, "Bearer"},
		{"no credential, authorization server configured", withAS.URL, nil, 401, metadata(withAS.URL)},
		{"wrong key, authorization server configured", withAS.URL, map[string]string{"Authorization": "Bearer wrong"}, 401,
			metadata(withAS.URL) + `, error="invalid_token", error_description="unknown API key or invalid token"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, rpc(t, "POST", tt.url+"/mcp", initializeBody, tt.header))
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d; want %d (body %q)", resp.StatusCode, tt.wantStatus, body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.wantWWWAuth {
				t.Errorf("WWW-Authenticate = %q; want %q", got, tt.wantWWWAuth)
			}
		})
	}

	// Every route is guarded, not only /mcp, and the unauthenticated ones are not.
	for path, want := range map[string]int{"/sse": 401, "/messages?sessionId=x": 401, "/health": 200, "/ready": 200} {
		method := "GET"
		if strings.HasPrefix(path, "/messages") {
			method = "POST"
		}
		resp, _ := do(t, rpc(t, method, ts.URL+path, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil))
		if resp.StatusCode != want {
			t.Errorf("%s %s without credential = %d; want %d", method, path, resp.StatusCode, want)
		}
	}
}

// callerModes are the HTTP transports a tool call can arrive on, each with
// the client credentials in client's headers.
var callerModes = []struct {
	name      string
	stateful  bool
	transport func(url string, client *http.Client) mcp.Transport
}{
	{"stateless", false, func(url string, c *http.Client) mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: c, MaxRetries: -1}
	}},
	{"stateful", true, func(url string, c *http.Client) mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: c, MaxRetries: -1}
	}},
	{"sse", false, func(url string, c *http.Client) mcp.Transport {
		return &mcp.SSEClientTransport{Endpoint: url + "/sse", HTTPClient: c}
	}},
}

// TestCredentialsNeverReachTools calls a tool that reports what it sees of
// the request, on every transport: the inbound credential is gone from the
// headers, the principal is in TokenInfo.
func TestCredentialsNeverReachTools(t *testing.T) {
	for _, m := range callerModes {
		ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{
			Stateful: m.stateful, APIKeys: []string{keyA, keyB}, AllowAPIKeyHeader: true,
		})
		for _, h := range []struct{ key, value string }{{"Authorization", "Bearer " + keyB}, {"X-API-Key", keyB}} {
			// A browser's cookies for the bridge's host are the client's
			// too (the README: stripped with the other two).
			cs := connect(t, m.transport(ts.URL, clientWithHeaders(h.key, h.value, "Cookie", "session=secret")), "")
			var got whoamiOut
			callJSON(t, cs, "whoami", map[string]any{}, &got)
			if diff := cmp.Diff(whoamiOut{SawHeader: true, User: "api-key:1"}, got); diff != "" {
				t.Errorf("%s, %s: what the tool saw (-want +got):\n%s", m.name, h.key, diff)
			}
		}
	}
}

// TestUnauthenticatedCallerIsAnonymous checks what a tool sees with auth
// off: no TokenInfo (an empty user id), on every transport. The remote
// address is used for the caps but never passed off as a principal.
func TestUnauthenticatedCallerIsAnonymous(t *testing.T) {
	for _, m := range callerModes {
		ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Stateful: m.stateful})
		cs := connect(t, m.transport(ts.URL, http.DefaultClient), "")
		var got whoamiOut
		callJSON(t, cs, "whoami", map[string]any{}, &got)
		if diff := cmp.Diff(whoamiOut{SawHeader: true}, got); diff != "" {
			t.Errorf("%s: what the tool saw (-want +got):\n%s", m.name, diff)
		}
	}
}

// TestSessionBoundToPrincipal checks that a stateful session created with
// one key cannot be used with another.
func TestSessionBoundToPrincipal(t *testing.T) {
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Stateful: true, APIKeys: []string{keyA, keyB}})
	resp, body := do(t, rpc(t, "POST", ts.URL+"/mcp", initializeBody, map[string]string{"Authorization": "Bearer " + keyA}))
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize = %d %q, session %q; want 200 and a session id", resp.StatusCode, body, sid)
	}
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	for _, tt := range []struct {
		key  string
		want int
	}{{keyB, http.StatusForbidden}, {keyA, http.StatusOK}} {
		resp, body := do(t, rpc(t, "POST", ts.URL+"/mcp", list, map[string]string{
			"Authorization": "Bearer " + tt.key, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18",
		}))
		if resp.StatusCode != tt.want {
			t.Errorf("tools/list on the session with key %s = %d %q; want %d", tt.key[:14], resp.StatusCode, body, tt.want)
		}
	}
}

// TestProtectedResourceMetadata checks the RFC 9728 documents and the
// metadata URL of the challenge, derived and configured, and that neither
// exists without an authorization server.
func TestProtectedResourceMetadata(t *testing.T) {
	derived := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{
		APIKeys: []string{keyA}, AuthorizationServers: []string{"https://auth.example.com"},
	})
	configured := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{
		APIKeys: []string{keyA}, ResourceURL: "https://bridge.example.com/api/mcp",
		AuthorizationServers: []string{"https://auth.example.com"},
	})
	keysOnly := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{
		APIKeys: []string{keyA}, ResourceURL: "https://bridge.example.com/api/mcp",
	})
	type doc struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		BearerMethods        []string `json:"bearer_methods_supported"`
	}
	tests := []struct {
		name       string
		url        string
		wantStatus int
		want       doc
	}{
		{"root", derived.URL + "/.well-known/oauth-protected-resource", 200,
			doc{derived.URL + "/mcp", []string{"https://auth.example.com"}, []string{"header"}}},
		{"mcp suffix", derived.URL + "/.well-known/oauth-protected-resource/mcp", 200,
			doc{derived.URL + "/mcp", []string{"https://auth.example.com"}, []string{"header"}}},
		{"configured resource", configured.URL + "/.well-known/oauth-protected-resource", 200,
			doc{"https://bridge.example.com/api/mcp", []string{"https://auth.example.com"}, []string{"header"}}},
		{"configured resource path suffix", configured.URL + "/.well-known/oauth-protected-resource/api/mcp", 200,
			doc{"https://bridge.example.com/api/mcp", []string{"https://auth.example.com"}, []string{"header"}}},
		{"other suffix", derived.URL + "/.well-known/oauth-protected-resource/other", 404, doc{}},
		{"API keys without authorization server", keysOnly.URL + "/.well-known/oauth-protected-resource", 404, doc{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, rpc(t, "GET", tt.url, "", nil))
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d; want %d (body %q)", resp.StatusCode, tt.wantStatus, body)
			}
			if tt.wantStatus != 200 {
				return
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q; want application/json", ct)
			}
			var got doc
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("decoding %q: %v", body, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("metadata mismatch (-want +got):\n%s", diff)
			}
		})
	}

	for url, want := range map[string]string{
		configured.URL: `Bearer resource_metadata="https://bridge.example.com/.well-known/oauth-protected-resource/api/mcp"`,
		keysOnly.URL:   `Bearer`,
	} {
		resp, _ := do(t, rpc(t, "POST", url+"/mcp", initializeBody, nil))
		if got := resp.Header.Get("WWW-Authenticate"); got != want {
			t.Errorf("WWW-Authenticate = %q; want %q", got, want)
		}
	}
}

// jwksServer serves the public half of a fresh RSA key as a JWKS and signs
// tokens with it.
type jwksServer struct {
	*httptest.Server
	key *rsa.PrivateKey
}

func newJWKSServer(t *testing.T) *jwksServer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("generating RSA key: %v", err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwks, err := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": "test-key", "use": "sig", "alg": "RS256",
		"n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes()),
	}}})
	if err != nil {
		t.Fatalf("encoding JWKS: %v", err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	t.Cleanup(ts.Close)
	return &jwksServer{Server: ts, key: key}
}

func (j *jwksServer) sign(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = "test-key"
	s, err := tok.SignedString(j.key)
	if err != nil {
		t.Fatalf("signing token: %v", err)
	}
	return s
}

// TestJWT verifies tokens signed by a test JWKS server: a valid one works
// through go-sdk's client; expired, wrong-audience, wrong-issuer, unsigned
// and HMAC tokens get 401 with error="invalid_token".
func TestJWT(t *testing.T) {
	const (
		issuer   = "https://issuer.example.com"
		audience = "https://bridge.example.com/mcp"
	)
	jwks := newJWKSServer(t)
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{
		JWKSURL: jwks.URL, JWTIssuer: issuer, JWTAudience: audience, APIKeys: []string{keyA},
	})
	now := time.Now()
	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"iss": issuer, "aud": audience, "sub": "alice", "exp": now.Add(time.Hour).Unix(), "scope": "tools:call"}
		if edit != nil {
			edit(c)
		}
		return c
	}

	t.Run("valid token through the client", func(t *testing.T) {
		// Every transport hands the tool the token's subject and scopes.
		for _, m := range callerModes {
			ms := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{
				Stateful: m.stateful, JWKSURL: jwks.URL, JWTIssuer: issuer, JWTAudience: audience,
			})
			token := jwks.sign(t, claims(func(c jwt.MapClaims) { c["scope"] = "tools:call items:read" }))
			cs := connect(t, m.transport(ms.URL, clientWithHeader("Authorization", "Bearer "+token)), "")
			var got whoamiOut
			callJSON(t, cs, "whoami", map[string]any{}, &got)
			want := whoamiOut{SawHeader: true, User: "jwt:" + issuer + "|alice", Subject: "alice", Scopes: []string{"tools:call", "items:read"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: what the tool saw (-want +got):\n%s", m.name, diff)
			}
			// A subject holding '|' (Auth0's "provider|id") is passed
			// whole: cut at its last '|', "evil|alice" would be alice.
			token = jwks.sign(t, claims(func(c jwt.MapClaims) { c["sub"] = "evil|alice" }))
			cs = connect(t, m.transport(ms.URL, clientWithHeader("Authorization", "Bearer "+token)), "")
			got = whoamiOut{}
			callJSON(t, cs, "whoami", map[string]any{}, &got)
			if got.Subject != "evil|alice" || got.User != "jwt:"+issuer+"|evil|alice" {
				t.Errorf("%s: subject %q, user %q; want evil|alice whole", m.name, got.Subject, got.User)
			}
		}
	})

	hmac := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(nil))
	hmacToken, err := hmac.SignedString([]byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		token    string
		wantDesc string
	}{
		{"expired", jwks.sign(t, claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() })), "token expired"},
		{"wrong audience", jwks.sign(t, claims(func(c jwt.MapClaims) { c["aud"] = "https://other.example.com/mcp" })), "token audience does not match this resource"},
		{"no audience", jwks.sign(t, claims(func(c jwt.MapClaims) { delete(c, "aud") })), "token lacks a required claim"},
		{"wrong issuer", jwks.sign(t, claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example.com" })), "token issuer not accepted"},
		{"no expiry", jwks.sign(t, claims(func(c jwt.MapClaims) { delete(c, "exp") })), "token lacks a required claim"},
		// Without a subject every such token would be one caller: one quota,
		// one owner of each other's sessions and cancellations.
		{"no subject", jwks.sign(t, claims(func(c jwt.MapClaims) { delete(c, "sub") })), "token lacks a required claim"},
		{"empty subject", jwks.sign(t, claims(func(c jwt.MapClaims) { c["sub"] = "" })), "token lacks a required claim"},
		{"subject not a string", jwks.sign(t, claims(func(c jwt.MapClaims) { c["sub"] = 42 })), "token lacks a required claim"},
		{"HMAC", hmacToken, "token signature invalid"},
		{"tampered", jwks.sign(t, claims(nil)) + "x", "token signature invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, rpc(t, "POST", ts.URL+"/mcp", initializeBody, map[string]string{"Authorization": "Bearer " + tt.token}))
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status = %d; want 401 (body %q)", resp.StatusCode, body)
			}
			// ResourceURL is not set, so the metadata URL is derived from the
			// request even though JWTAudience is fixed.
			got := resp.Header.Get("WWW-Authenticate")
			wantSuffix := `error="invalid_token", error_description="` + tt.wantDesc + `"`
			if !strings.HasPrefix(got, `Bearer resource_metadata="`+ts.URL) || !strings.HasSuffix(got, wantSuffix) {
				t.Errorf("WWW-Authenticate = %q; want resource metadata on %s and %s", got, ts.URL, wantSuffix)
			}
		})
	}

	t.Run("API key still accepted beside JWT", func(t *testing.T) {
		resp, body := do(t, rpc(t, "POST", ts.URL+"/mcp", initializeBody, map[string]string{"Authorization": "Bearer " + keyA}))
		if resp.StatusCode != http.StatusOK {
			t.Errorf("status = %d %q; want 200", resp.StatusCode, body)
		}
	})
}

// TestJWTScopeForms: the scopes a per-tool allow list matches come from
// "scope" or "scp", as issuers write them. Microsoft Entra ID writes "scp"
// as one space-separated string, which was read as no scope at all, so its
// callers were refused every tool allowed by scope.
func TestJWTScopeForms(t *testing.T) {
	const issuer, audience = "https://issuer.example.com", "https://bridge.example.com/mcp"
	jwks := newJWKSServer(t)
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{JWKSURL: jwks.URL, JWTIssuer: issuer, JWTAudience: audience})
	for _, tt := range []struct {
		name  string
		claim string
		value any
	}{
		{"scope string", "scope", "tools:call items:read"},
		{"scp array (Okta)", "scp", []string{"tools:call", "items:read"}},
		{"scp string (Entra ID)", "scp", "tools:call items:read"},
		{"scope array", "scope", []string{"tools:call", "items:read"}},
		{"roles (Entra ID app-only)", "roles", []string{"tools:call", "items:read"}},
	} {
		claims := jwt.MapClaims{"iss": issuer, "aud": audience, "sub": "alice", "exp": time.Now().Add(time.Hour).Unix(), tt.claim: tt.value}
		cs := connect(t, callerModes[0].transport(ts.URL, clientWithHeader("Authorization", "Bearer "+jwks.sign(t, claims))), "")
		var got whoamiOut
		callJSON(t, cs, "whoami", map[string]any{}, &got)
		if want := []string{"tools:call", "items:read"}; !slices.Equal(got.Scopes, want) {
			t.Errorf("%s: the caller's scopes are %q; want %q", tt.name, got.Scopes, want)
		}
	}
}

// TestSSESessionBoundToPrincipal checks the same binding on the legacy
// transport: only the key that opened the stream may post to it.
func TestSSESessionBoundToPrincipal(t *testing.T) {
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{APIKeys: []string{keyA, keyB}})
	events := openStream(t, rpc(t, "GET", ts.URL+"/sse", "", map[string]string{
		"Accept": "text/event-stream", "Authorization": "Bearer " + keyA,
	}))
	ep := <-events
	if ep.name != "endpoint" {
		t.Fatalf("first event = %+v; want endpoint", ep)
	}
	for _, tt := range []struct {
		key  string
		want int
	}{{keyB, http.StatusForbidden}, {keyA, http.StatusAccepted}} {
		resp, body := do(t, rpc(t, "POST", ts.URL+ep.data, initializeBody, map[string]string{"Authorization": "Bearer " + tt.key}))
		if resp.StatusCode != tt.want {
			t.Errorf("POST %s with key %s = %d %q; want %d", ep.data, tt.key[:14], resp.StatusCode, body, tt.want)
		}
	}
}
