package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// schemesSpec mixes security schemes: the document's default (an API key
// header), security: [], an operation's override (basic), OR'ed
// requirements whose first names an unconfigured scheme, AND'ed schemes
// (a query key and a cookie), a requirement nothing configured meets, and
// an optional one ({}).
const schemesSpec = `openapi: 3.0.3
info: {title: schemes, version: "1"}
security:
  - ApiKeyHeader: []
components:
  securitySchemes:
    ApiKeyHeader: {type: apiKey, in: header, name: X-API-Key}
    ApiKeyQuery: {type: apiKey, in: query, name: api_key}
    SessionCookie: {type: apiKey, in: cookie, name: sid}
    Basic: {type: http, scheme: basic}
    Bearer: {type: http, scheme: bearer}
    Unconfigured: {type: http, scheme: bearer}
paths:
  /default:
    get: {operationId: useDefault, responses: {"200": {description: ok}}}
  /public:
    get: {operationId: usePublic, security: [], responses: {"200": {description: ok}}}
  /admin:
    get: {operationId: useAdmin, security: [{Basic: []}], responses: {"200": {description: ok}}}
  /either:
    get: {operationId: useEither, security: [{Unconfigured: []}, {Bearer: []}], responses: {"200": {description: ok}}}
  /both:
    get:
      operationId: useBoth
      security: [{ApiKeyQuery: [], SessionCookie: []}]
      parameters:
        - {name: api_key, in: query, schema: {type: string}}
        - {name: q, in: query, schema: {type: object, additionalProperties: {type: string}}, style: form, explode: true}
      responses: {"200": {description: ok}}
  /needs:
    get: {operationId: useNeeds, security: [{Unconfigured: []}], responses: {"200": {description: ok}}}
  /needs2:
    get: {operationId: useNeeds2, security: [{Unconfigured: []}], responses: {"200": {description: ok}}}
  /optional:
    get: {operationId: useOptional, security: [{Unconfigured: []}, {}], responses: {"200": {description: ok}}}
`

const (
	schemeHeaderKey = "scheme-header-key-7d1c0e"
	schemeQueryKey  = "scheme-query-key-52ab9f"
	schemeCookie    = "scheme-cookie-e60b41"
	schemePassword  = "admin-pass-0f3a77"
	schemeBearer    = "scheme-bearer-c93d28"
	globalHeaderKey = "global-header-key-a81f4c"
	globalToken     = "global-token-4b27e1"
)

// schemesConfig configures five of the spec's schemes (the first as a
// scalar) besides a global token and API key header.
var schemesConfig = fmt.Sprintf(`upstream-token: %s
upstream-auth:
  headers: {X-API-Key: %s}
  schemes:
    ApiKeyHeader: %s
    ApiKeyQuery: {value: %s}
    SessionCookie: {value: %s}
    Basic: {user: admin, password: %s}
    Bearer: {value: %s}
`, globalToken, globalHeaderKey, schemeHeaderKey, schemeQueryKey, schemeCookie, schemePassword, schemeBearer)

// seen is what a recording upstream received on one path.
type seen struct {
	Query, Authorization, APIKey, Cookie string
}

// recordingUpstream answers every request with what it received,
// credentials included (a careless upstream), and records it by path.
type recordingUpstream struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[string]seen
}

func newRecordingUpstream(t *testing.T) *recordingUpstream {
	t.Helper()
	u := &recordingUpstream{got: map[string]seen{}}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{Query: r.URL.RawQuery, Authorization: r.Header.Get("Authorization"), APIKey: r.Header.Get("X-API-Key"), Cookie: r.Header.Get("Cookie")}
		u.mu.Lock()
		u.got[r.URL.Path] = s
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		// Field names that the default key rules do not mask: only the
		// values, as configured credentials, may be.
		_ = json.NewEncoder(w).Encode(map[string]string{"p": r.URL.Path, "q": s.Query, "h1": s.Authorization, "h2": s.APIKey, "h3": s.Cookie})
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *recordingUpstream) seen(path string) (seen, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	s, ok := u.got[path]
	return s, ok
}

func basicOf(user, password string) string {
	r, _ := http.NewRequest(http.MethodGet, "http://x", nil)
	r.SetBasicAuth(user, password)
	return r.Header.Get("Authorization")
}

// schemeCall calls a tool with args and returns its text and whether it is
// an error result.
func schemeCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String(), res.IsError
}

// TestSecuritySchemes runs the bridge over stdio with per-scheme
// credentials: each operation's request carries the credentials of the
// first of its security requirements whose schemes are configured, on top
// of the global ones (a scheme's wins on the same name), and none for
// security: [] or an optional requirement; an echoed scheme secret is
// masked; a parameter named like a scheme's API key is no argument, nor
// may an argument write that query pair; and the unmet requirements are
// summed up in one warning.
func TestSecuritySchemes(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	dir := t.TempDir()
	spec, cfg := filepath.Join(dir, "openapi.yaml"), filepath.Join(dir, "config.yaml")
	writeFile(t, spec, []byte(schemesSpec))
	writeFile(t, cfg, []byte(schemesConfig))
	p, cs := startStdioProc(t, "schemes", nil, "--config", cfg, "--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--no-cache")

	type want struct {
		query, authorization, apiKey, cookie string
	}
	bearer := func(tok string) string { return "Bearer " + tok }
	cases := []struct {
		tool, path string
		want       want
	}{
		// The document's requirement: the scheme's header replaces the
		// global one of the same name; the global token still goes.
		{"useDefault", "/default", want{"", bearer(globalToken), schemeHeaderKey, ""}},
		// security: []: no scheme credential; the global ones as before.
		{"usePublic", "/public", want{"", bearer(globalToken), globalHeaderKey, ""}},
		// The operation's override: basic replaces the global token.
		{"useAdmin", "/admin", want{"", basicOf("admin", schemePassword), globalHeaderKey, ""}},
		// OR: the first requirement names an unconfigured scheme, the second is met.
		{"useEither", "/either", want{"", bearer(schemeBearer), globalHeaderKey, ""}},
		// AND: both schemes of the requirement.
		{"useBoth", "/both", want{"api_key=" + schemeQueryKey, bearer(globalToken), globalHeaderKey, "sid=" + schemeCookie}},
		// Nothing configured meets it: sent without scheme credentials.
		{"useNeeds", "/needs", want{"", bearer(globalToken), globalHeaderKey, ""}},
		// An optional requirement ({}): none needed.
		{"useOptional", "/optional", want{"", bearer(globalToken), globalHeaderKey, ""}},
	}
	secrets := []string{schemeHeaderKey, schemeQueryKey, schemeCookie, schemePassword, schemeBearer, globalHeaderKey, globalToken}
	for _, c := range cases {
		text, isErr := schemeCall(t, cs, c.tool, map[string]any{})
		if isErr {
			t.Errorf("%s: error result %s", c.tool, text)
			continue
		}
		got, ok := up.seen(c.path)
		if !ok {
			t.Errorf("%s: the upstream saw no request to %s", c.tool, c.path)
			continue
		}
		if g := (want{got.Query, got.Authorization, got.APIKey, got.Cookie}); g != c.want {
			t.Errorf("%s: upstream got %+v, want %+v", c.tool, g, c.want)
		}
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s: the result shows the credential %q: %s", c.tool, s, text)
			}
		}
		if !strings.Contains(text, "[REDACTED]") {
			t.Errorf("%s: the echoed credentials are not masked: %s", c.tool, text)
		}
	}

	// The spec's api_key parameter is the scheme's: no argument.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name == "useBoth" {
			raw, _ := json.Marshal(tl.InputSchema)
			if strings.Contains(string(raw), `"api_key"`) {
				t.Errorf("useBoth takes the scheme's api_key as an argument: %s", raw)
			}
		}
	}
	// Nor may a free-form object write that pair.
	if text, isErr := schemeCall(t, cs, "useBoth", map[string]any{"q": map[string]any{"api_key": "agent-key"}}); !isErr || !strings.Contains(text, `"api_key"`) {
		t.Errorf("useBoth with q.api_key: %v %s, want an error naming the pair", isErr, text)
	}
	if got, _ := up.seen("/both"); strings.Contains(got.Query, "agent-key") {
		t.Errorf("the agent's api_key reached the upstream: %s", got.Query)
	}

	const warning = "operations whose security requirements name no configured scheme are called without scheme credentials: configure one of their schemes under upstream-auth.schemes"
	if n := p.log.count(warning); n != 1 {
		t.Errorf("%d unmet-requirement warnings, want 1", n)
	}
	if l := p.log.last(warning); l == nil || l["operations"] != float64(2) || l["unconfigured_schemes"] != "Unconfigured (2: useNeeds, useNeeds2)" {
		t.Errorf("unmet-requirement warning = %v", l)
	}
	p.log.mu.Lock()
	for _, l := range p.log.lines {
		line, _ := json.Marshal(l)
		for _, s := range secrets {
			if bytes.Contains(line, []byte(s)) {
				t.Errorf("a credential reached the log: %s", line)
			}
		}
	}
	p.log.mu.Unlock()
}

// TestSecuritySchemesSwagger2 reads Swagger 2.0 securityDefinitions (basic
// and an API key in the query, whose name holds a dot and capitals, which
// viper would have read as nesting and lowercased) with a document default
// and an operation override; it also goes through the tool cache, whose
// restored tools carry the same credentials.
func TestSecuritySchemesSwagger2(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	dir := t.TempDir()
	spec, cfg := filepath.Join(dir, "swagger.yaml"), filepath.Join(dir, "config.yaml")
	writeFile(t, spec, []byte(`swagger: "2.0"
info: {title: s2, version: "1"}
host: example.invalid
securityDefinitions:
  Key.V2: {type: apiKey, in: query, name: apikey}
  admin: {type: basic}
  extra: {type: apiKey, in: header, name: X-Extra}
security: [{Key.V2: []}]
paths:
  /items:
    get: {operationId: listItems, responses: {"200": {description: ok}}}
  /admin:
    get: {operationId: adminOnly, security: [{admin: []}], responses: {"200": {description: ok}}}
  /extra:
    get: {operationId: needsExtra, security: [{extra: []}], responses: {"200": {description: ok}}}
`))
	writeFile(t, cfg, []byte("upstream-auth:\n  schemes:\n    Key.V2: swagger-key-19ce\n    admin: {user: root, password: swagger-pass-77d0}\n"))
	cache := filepath.Join(dir, "cache")
	for round := range 2 { // built, then restored from the cache
		for _, c := range []struct{ tool, path, query, authorization string }{
			{"listItems", "/items", "apikey=swagger-key-19ce", ""},
			{"adminOnly", "/admin", "", basicOf("root", "swagger-pass-77d0")},
		} {
			var out, errb bytes.Buffer
			if err := run(t.Context(), []string{"call", c.tool, "--args", "{}", "--config", cfg, "--spec", spec, "--all-operations",
				"--upstream", up.srv.URL, "--cache-dir", cache, "--log-level", "debug"}, nil, &out, &errb); err != nil {
				t.Fatalf("round %d: %s: %v\n%s", round, c.tool, err, errb.String())
			}
			if round == 1 && !strings.Contains(errb.String(), "tools restored from cache") {
				t.Errorf("round 1: %s: not restored from the cache:\n%s", c.tool, errb.String())
			}
			// Every start says which operations go without the credentials
			// their requirements ask for, from the cache too.
			if n := strings.Count(errb.String(), "operations whose security requirements name no configured scheme"); n != 1 || !strings.Contains(errb.String(), "extra (1: needsExtra)") {
				t.Errorf("round %d: %s: %d unmet-requirement warnings, want 1 naming needsExtra:\n%s", round, c.tool, n, errb.String())
			}
			got, _ := up.seen(c.path)
			if got.Query != c.query || got.Authorization != c.authorization {
				t.Errorf("round %d: %s: upstream got query %q, Authorization %q; want %q, %q", round, c.tool, got.Query, got.Authorization, c.query, c.authorization)
			}
			for _, s := range []string{"swagger-key-19ce", "swagger-pass-77d0"} {
				if strings.Contains(out.String(), s) || strings.Contains(errb.String(), s) {
					t.Errorf("round %d: %s: a credential reached the client or the log", round, c.tool)
				}
			}
		}
	}
}

// TestSecuritySchemesStartErrors: a scheme the spec does not define is a
// start error naming the nearest defined one; a secret that does not fit
// its scheme, an empty one, and two names differing only in case are
// errors too; none shows a secret.
func TestSecuritySchemesStartErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	spec := filepath.Join(dir, "openapi.yaml")
	writeFile(t, spec, []byte(schemesSpec))
	badName := filepath.Join(dir, "bad-name.yaml")
	writeFile(t, badName, []byte(strings.Replace(schemesSpec, "name: X-API-Key}", `name: "X API Key"}`, 1)))
	for _, c := range []struct{ name, config, want, spec string }{
		{"unknown", "upstream-auth:\n  schemes:\n    ApiKeyHeadr: secret-1a2b3c\n", `"ApiKeyHeadr" is not a security scheme of the spec (did you mean ApiKeyHeader?)`, ""},
		{"wrong kind", "upstream-auth:\n  schemes:\n    Basic: secret-1a2b3c\n", `security scheme "Basic" is HTTP basic: give it a user and a password`, ""},
		{"user for a key", "upstream-auth:\n  schemes:\n    ApiKeyQuery: {user: u, password: secret-1a2b3c}\n", `security scheme "ApiKeyQuery" is an apiKey in the query "api_key": give it a value`, ""},
		{"empty", "upstream-auth:\n  schemes:\n    Bearer: {}\n", `upstream-auth.schemes.Bearer is empty`, ""},
		{"case", "upstream-auth:\n  schemes:\n    Bearer: secret-1a2b3c\n    bearer: secret-1a2b3c\n", `"Bearer" and "bearer" differ in case only`, ""},
		{"typo in a key", "upstream-auth:\n  schemes:\n    Basic: {usr: u, password: secret-1a2b3c}\n", `usr (did you mean user?)`, ""},
		{"cookie value", "upstream-auth:\n  schemes:\n    SessionCookie: 'secret-1a2b3c; admin=1'\n", `security scheme "SessionCookie": its value holds a character a cookie value cannot`, ""},
		// net/http refuses such a header: every call failed as "unavailable".
		{"header name", "upstream-auth:\n  schemes:\n    ApiKeyHeader: secret-1a2b3c\n", `the apiKey's header name "X API Key" is not a valid HTTP token`, badName},
	} {
		if c.spec == "" {
			c.spec = spec
		}
		cfg := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
		writeFile(t, cfg, []byte(c.config))
		var out, errb bytes.Buffer
		err := run(t.Context(), []string{"tools", "--config", cfg, "--spec", c.spec, "--all-operations", "--upstream", "http://127.0.0.1:9", "--no-cache"}, nil, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to say %s", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error()+errb.String(), "secret-1a2b3c") {
			t.Errorf("%s: the error or the log shows the secret: %v\n%s", c.name, err, errb.String())
		}
	}
}

// TestSecuritySchemesOAuth2 gives a scheme its own client credentials
// grant next to the global one: an operation of that scheme carries the
// scheme's token, one whose scheme is basic keeps its basic credentials
// (the global grant does not overwrite them), and the others carry the
// global grant's token. No token reaches the client.
func TestSecuritySchemesOAuth2(t *testing.T) {
	t.Parallel()
	var fetched sync.Map
	var n atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		id, _, ok := r.BasicAuth()
		if !ok {
			id = r.Form.Get("client_id")
		}
		tok := fmt.Sprintf("tok-%s-%d-5e2a91", id, n.Add(1))
		fetched.Store(id, tok)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, tok)
	}))
	defer tokens.Close()
	up := newRecordingUpstream(t)
	dir := t.TempDir()
	spec, cfg := filepath.Join(dir, "openapi.yaml"), filepath.Join(dir, "config.yaml")
	writeFile(t, spec, []byte(`openapi: 3.0.3
info: {title: oauth, version: "1"}
components:
  securitySchemes:
    OAuth: {type: oauth2, flows: {clientCredentials: {tokenUrl: https://idp.invalid/token, scopes: {}}}}
    Basic: {type: http, scheme: basic}
paths:
  /reports:
    get: {operationId: reports, security: [{OAuth: []}], responses: {"200": {description: ok}}}
  /admin:
    get: {operationId: admin, security: [{Basic: []}], responses: {"200": {description: ok}}}
  /plain:
    get: {operationId: plain, responses: {"200": {description: ok}}}
`))
	writeFile(t, cfg, []byte(fmt.Sprintf(`upstream-auth:
  oauth2: {tokenURL: %[1]s/token, clientID: global, clientSecret: global-secret-0b1c}
  schemes:
    OAuth:
      oauth2: {tokenURL: %[1]s/token, clientID: reports, clientSecret: reports-secret-9e8d}
    Basic: {user: admin, password: basic-pass-3f2e}
`, tokens.URL)))
	_, cs := startStdioProc(t, "oauth-schemes", nil, "--config", cfg, "--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--no-cache")
	texts := map[string]string{}
	for _, tool := range []string{"reports", "admin", "plain"} {
		text, isErr := schemeCall(t, cs, tool, map[string]any{})
		if isErr {
			t.Fatalf("%s: %s", tool, text)
		}
		texts[tool] = text
	}
	reportsTok, _ := fetched.Load("reports")
	globalTok, _ := fetched.Load("global")
	if reportsTok == nil || globalTok == nil {
		t.Fatalf("tokens fetched: reports %v, global %v; want both", reportsTok, globalTok)
	}
	for _, c := range []struct{ path, want string }{
		{"/reports", "Bearer " + reportsTok.(string)},
		{"/admin", basicOf("admin", "basic-pass-3f2e")},
		{"/plain", "Bearer " + globalTok.(string)},
	} {
		if got, _ := up.seen(c.path); got.Authorization != c.want {
			t.Errorf("%s: Authorization %q, want %q", c.path, got.Authorization, c.want)
		}
	}
	for tool, text := range texts {
		for _, s := range []string{reportsTok.(string), globalTok.(string), "basic-pass-3f2e"} {
			if strings.Contains(text, s) {
				t.Errorf("%s: the result shows %q: %s", tool, s, text)
			}
		}
	}
}

// TestSecuritySchemesReload: SIGHUP re-reads the spec's security
// requirements (an operation moved to another scheme carries its
// credential from then on), and a spec that no longer defines a
// configured scheme fails the reload, the previous tools still serving.
func TestSecuritySchemesReload(t *testing.T) {
	t.Parallel()
	up := newRecordingUpstream(t)
	dir := t.TempDir()
	spec, cfg := filepath.Join(dir, "openapi.yaml"), filepath.Join(dir, "config.yaml")
	writeFile(t, spec, []byte(schemesSpec))
	writeFile(t, cfg, []byte(schemesConfig))
	p, cs := startStdioProc(t, "schemes-reload", nil, "--config", cfg, "--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--no-cache")
	if text, isErr := schemeCall(t, cs, "useDefault", nil); isErr {
		t.Fatal(text)
	}
	if got, _ := up.seen("/default"); got.APIKey != schemeHeaderKey || got.Query != "" {
		t.Fatalf("before the reload: upstream got %+v", got)
	}

	// The document's default becomes the query key.
	writeFile(t, spec, []byte(strings.Replace(schemesSpec, "security:\n  - ApiKeyHeader: []\n", "security:\n  - ApiKeyQuery: []\n", 1)))
	p.hup(t)
	waitPing(t, "moved scheme", cs, 5*time.Second, is("ok"))
	if text, isErr := schemeCall(t, cs, "useDefault", nil); isErr {
		t.Fatal(text)
	}
	if got, _ := up.seen("/default"); got.APIKey != globalHeaderKey || got.Query != "api_key="+schemeQueryKey {
		t.Errorf("after the reload: upstream got %+v, want the global header and the scheme's query key", got)
	}

	// A spec without the Basic scheme: the configuration names it.
	writeFile(t, spec, []byte(strings.Replace(schemesSpec, "    Basic: {type: http, scheme: basic}\n", "", 1)))
	p.hup(t)
	res := waitPing(t, "dropped scheme", cs, 5*time.Second, func(s string) bool { return strings.HasPrefix(s, "failed") })
	if !strings.Contains(res.LastReload, `"Basic" is not a security scheme of the spec`) {
		t.Errorf("failed reload: %q, want it to name the scheme", res.LastReload)
	}
	if text, isErr := schemeCall(t, cs, "useAdmin", nil); isErr {
		t.Fatal(text)
	}
	if got, _ := up.seen("/admin"); got.Authorization != basicOf("admin", schemePassword) {
		t.Errorf("after the failed reload: /admin got Authorization %q, want the basic credentials", got.Authorization)
	}
	_ = os.Remove(spec)
}

// TestSecuritySchemesOrigin: scheme credentials stay on the upstream's
// origin as the others do: an operation whose own servers are elsewhere
// is skipped, and a redirect to another origin is not followed.
func TestSecuritySchemesOrigin(t *testing.T) {
	t.Parallel()
	other := newRecordingUpstream(t)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.srv.URL+"/stolen", http.StatusFound)
	}))
	defer up.Close()
	dir := t.TempDir()
	spec, cfg := filepath.Join(dir, "openapi.yaml"), filepath.Join(dir, "config.yaml")
	writeFile(t, spec, []byte(fmt.Sprintf(`openapi: 3.0.3
info: {title: origin, version: "1"}
servers: [{url: %q}]
security: [{K: []}]
components:
  securitySchemes:
    K: {type: apiKey, in: header, name: X-API-Key}
paths:
  /home:
    get: {operationId: home, responses: {"200": {description: ok}}}
  /away:
    servers: [{url: %q}]
    get: {operationId: away, responses: {"200": {description: ok}}}
`, up.URL, other.srv.URL)))
	writeFile(t, cfg, []byte("upstream-auth:\n  schemes:\n    K: origin-key-6a5b4c\n"))
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"tools", "--config", cfg, "--spec", spec, "--all-operations", "--no-cache"}, nil, &out, &errb); err != nil {
		t.Fatalf("tools: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "skipped GET /away: its servers are on "+other.srv.URL) {
		t.Errorf("GET /away on another origin not skipped:\n%s", out.String())
	}
	out.Reset()
	errb.Reset()
	err := run(t.Context(), []string{"call", "home", "--args", "{}", "--config", cfg, "--spec", spec, "--all-operations", "--no-cache"}, nil, &out, &errb)
	if err == nil || !strings.Contains(out.String()+errb.String(), "redirect") {
		t.Errorf("call home redirected elsewhere: err %v\n%s\n%s", err, out.String(), errb.String())
	}
	if got, ok := other.seen("/stolen"); ok {
		t.Errorf("the other origin got a request: %+v", got)
	}
	if strings.Contains(out.String()+errb.String(), "origin-key-6a5b4c") {
		t.Errorf("the key reached the client or the log")
	}
}
