package bridge_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// echoUpstream is an upstream answering {} that keeps the last request it
// got and counts them; it is closed with the test.
func echoUpstream(t *testing.T) (*httptest.Server, *atomic.Pointer[http.Request], *atomic.Int32) {
	t.Helper()
	got, calls := new(atomic.Pointer[http.Request]), new(atomic.Int32)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		got.Store(r.Clone(r.Context()))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(up.Close)
	return up, got, calls
}

const credParamSpec = `openapi: 3.0.3
info: {title: creds, version: "1"}
paths:
  /echo:
    get:
      operationId: echo
      parameters:
        - {name: api_key, in: query, schema: {type: string}}
        - {name: X-Api-Key, in: header, schema: {type: string}}
        - {name: sid, in: cookie, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
        - {name: deep, in: query, schema: {}}
      responses: {"200": {description: ok}}
`

// TestCredentialParametersRemoved checks that a spec parameter named like a
// configured credential is not an argument: the agent cannot send its own
// value first, next to, or instead of the configured one.
func TestCredentialParametersRemoved(t *testing.T) {
	up, got, _ := echoUpstream(t)
	res, err := specloader.LoadData(t.Context(), []byte(credParamSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	creds := bridge.Credentials{
		Query:   map[string]string{"api_key": "qk-configured-1"},
		Headers: map[string]string{"x-api-key": "hk-configured-1"},
		Cookies: map[string]string{"sid": "ck-configured-1"},
	}
	b, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, b)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tools.Tools[0].InputSchema.(map[string]any)
	props, _ := raw["properties"].(map[string]any)
	for _, name := range []string{"api_key", "X-Api-Key", "sid"} {
		if _, ok := props[name]; ok {
			t.Errorf("input schema offers %q, the name of a configured credential", name)
		}
	}
	if _, ok := props["q"]; !ok {
		t.Errorf("input schema lost the ordinary parameter q: %v", props)
	}
	// Extra arguments are refused by the schema (additionalProperties: false).
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"q": "x", "api_key": "agent-value"}})
	if err != nil || !r.IsError {
		t.Fatalf("an argument named like the credential was accepted: %v %+v", err, r)
	}
	r, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"q": "x"}})
	if err != nil || r.IsError {
		t.Fatalf("call: %v %+v", err, r)
	}
	req := got.Load()
	if v := req.URL.Query()["api_key"]; len(v) != 1 || v[0] != "qk-configured-1" {
		t.Errorf("upstream got api_key=%q; want only the configured one", v)
	}
	if v := req.Header.Values("X-Api-Key"); len(v) != 1 || v[0] != "hk-configured-1" {
		t.Errorf("upstream got X-Api-Key %q; want only the configured one", v)
	}
}

// TestArgumentLimits checks that oversized and too deeply nested arguments
// are refused before decoding, without calling the upstream.
func TestArgumentLimits(t *testing.T) {
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Write([]byte(`{}`))
	}))
	defer up.Close()
	res, err := specloader.LoadData(t.Context(), []byte(credParamSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), MaxArgumentBytes: 1 << 10, MaxArgumentDepth: 8})
	if err != nil {
		t.Fatal(err)
	}
	rt := bridge.NewRuntime(b)
	for _, tc := range []struct {
		name, args, want string
	}{
		{"too large", `{"q":"` + strings.Repeat("a", 2000) + `"}`, "more than the 1024 allowed"},
		{"too deep", `{"deep":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`, "levels deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: "echo", Args: []byte(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			text := out.Result.Content[0].(*mcp.TextContent).Text
			if out.Kind != bridge.BadArguments || !out.Result.IsError || !strings.Contains(text, tc.want) {
				t.Errorf("got kind %v, %q; want bad_arguments mentioning %q", out.Kind, text, tc.want)
			}
		})
	}
	// Brackets inside strings do not count.
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "echo", Args: []byte(`{"q":"[[[[[[[[[[[[[[[[[[[[\"{{{{"}`)})
	if err != nil || out.Kind != bridge.OK {
		t.Errorf("brackets inside a string counted as nesting: %v %+v", err, out)
	}
	if calls.Load() != 1 {
		t.Errorf("upstream saw %d calls; want 1 (only the valid one)", calls.Load())
	}
}

const credObjectSpec = `openapi: 3.0.3
info: {title: creds, version: "1"}
paths:
  /echo:
    get:
      operationId: echo
      parameters:
        - {name: filter, in: query, style: form, explode: true, schema: {type: object, additionalProperties: true}}
        - {name: co, in: cookie, style: form, explode: true, schema: {type: object, additionalProperties: true}}
      responses: {"200": {description: ok}}
`

// specCatalog builds the catalog of every operation of spec with opts.
func specCatalog(t *testing.T, spec string, opts bridge.Options) *bridge.Catalog {
	t.Helper()
	res, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bridge.New(ops, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCredentialNamesFromObjectKeys: a free-form object exploded into the
// query or the cookies cannot write a pair named like a credential (which
// most servers would read before the configured one); other keys go.
func TestCredentialNamesFromObjectKeys(t *testing.T) {
	up, got, calls := echoUpstream(t)
	creds := bridge.Credentials{Query: map[string]string{"api_key": "qk-configured-1"}, Cookies: map[string]string{"sess": "ck-configured-1"}}
	rt := bridge.NewRuntime(specCatalog(t, credObjectSpec, bridge.Options{BaseURL: up.URL, Client: up.Client(), Credentials: creds}))
	for _, tc := range []struct{ name, args, want string }{
		{"query key", `{"filter":{"api_key":"ATTACKER"}}`, `query parameter "api_key"`},
		{"query key escaped", `{"filter":{"q":"1","api%5Fkey":"x","api_key":"ATTACKER"}}`, `query parameter "api_key"`},
		{"cookie key", `{"co":{"sess":"ATTACKER"}}`, `cookie "sess"`},
		// Names lenient servers file under the credential's: another case
		// (ASP.NET), a bracket or dot suffix (PHP, Rails), a control byte.
		{"query key, other case", `{"filter":{"API_KEY":"ATTACKER"}}`, `query parameter "API_KEY"`},
		{"query key, brackets", `{"filter":{"api_key[]":"ATTACKER"}}`, `query parameter "api_key[]"`},
		{"query key, nested", `{"filter":{"api_key":{"x":"ATTACKER"}}}`, `query parameter "api_key[x]"`},
		{"query key, dot", `{"filter":{"api_key.x":"ATTACKER"}}`, `query parameter "api_key.x"`},
		{"query key, NUL", `{"filter":{"api_key\u0000":"ATTACKER"}}`, `query parameter "api_key\x00"`},
		{"cookie key, other case", `{"co":{"SESS":"ATTACKER"}}`, `cookie "SESS"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: "echo", Args: []byte(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			text := out.Result.Content[0].(*mcp.TextContent).Text
			if out.Kind != bridge.BadArguments || !strings.Contains(text, tc.want) {
				t.Errorf("got kind %v, %q; want bad_arguments mentioning %q", out.Kind, text, tc.want)
			}
		})
	}
	if calls.Load() != 0 {
		t.Fatalf("the upstream was called %d times with a credential's name from the arguments", calls.Load())
	}
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "echo", Args: []byte(`{"filter":{"q":"1"},"co":{"theme":"dark"}}`)})
	if err != nil || out.Kind != bridge.OK {
		t.Fatalf("ordinary keys refused: %v %+v", err, out)
	}
	req := got.Load()
	if v := req.URL.Query()["api_key"]; len(v) != 1 || v[0] != "qk-configured-1" || req.URL.Query().Get("q") != "1" {
		t.Errorf("upstream query %q", req.URL.RawQuery)
	}
	if c := req.Header.Get("Cookie"); c != "theme=dark; sess=ck-configured-1" {
		t.Errorf("upstream cookies %q", c)
	}
}

// TestBaseQueryNamesFromObjectKeys: a query the upstream URL itself
// carries (an API key in --upstream, say) is configuration as well: a
// free-form object may not repeat its names, while a parameter the
// operation declares under such a name still goes.
func TestBaseQueryNamesFromObjectKeys(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: base, version: "1"}
paths:
  /echo:
    get:
      operationId: echo
      parameters:
        - {name: filter, in: query, style: form, explode: true, schema: {type: object, additionalProperties: true}}
        - {name: format, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
`
	up, got, _ := echoUpstream(t)
	rt := bridge.NewRuntime(specCatalog(t, spec, bridge.Options{BaseURL: up.URL + "/?key=QSECRET-999&format=json", Client: up.Client()}))
	for _, args := range []string{`{"filter":{"key":"mine"}}`, `{"filter":{"KEY[]":"mine"}}`} {
		got.Store(nil)
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: "echo", Args: []byte(args)})
		if err != nil {
			t.Fatal(err)
		}
		text := out.Result.Content[0].(*mcp.TextContent).Text
		if out.Kind != bridge.BadArguments || !strings.Contains(text, "which the bridge's upstream URL sets") || got.Load() != nil {
			t.Errorf("%s: kind %v, %q, upstream called %v; want refused", args, out.Kind, text, got.Load() != nil)
		}
	}
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "echo", Args: []byte(`{"format":"xml","filter":{"q":"1"}}`)})
	if err != nil || out.Kind != bridge.OK {
		t.Fatalf("declared parameter refused: %v %+v", err, out)
	}
	if q := got.Load().URL.RawQuery; q != "key=QSECRET-999&q=1&format=xml" {
		t.Errorf("upstream query %q", q)
	}
}

// TestBaseQueryDeclaredParameterReplaces: when the upstream URL's query
// names a parameter the operation declares (--upstream
// http://host/base?ver=1 and a query parameter ver), the argument's value
// replaces the URL's instead of following it, which most servers would
// not read; without the argument the URL's value is sent, and the URL's
// other pairs stay as they are, first.
func TestBaseQueryDeclaredParameterReplaces(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: base, version: "1"}
paths:
  /items:
    get:
      operationId: items
      parameters:
        - {name: ver, in: query, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
        - {name: tag, in: query, schema: {type: array, items: {type: string}}}
      responses: {"200": {description: ok}}
`
	up, got, _ := echoUpstream(t)
	rt := bridge.NewRuntime(specCatalog(t, spec, bridge.Options{BaseURL: up.URL + "/base?ver=1&key=K1&tag=a&Tag=b", Client: up.Client()}))
	for _, tc := range []struct{ name, args, want string }{
		{"declared given", `{"q":"x","ver":"mine"}`, "/base/items?key=K1&tag=a&Tag=b&ver=mine&q=x"},
		{"declared absent", `{"q":"x"}`, "/base/items?ver=1&key=K1&tag=a&Tag=b&q=x"},
		{"no arguments", `{}`, "/base/items?ver=1&key=K1&tag=a&Tag=b"},
		{"array replaces every pair", `{"tag":["c","d"]}`, "/base/items?ver=1&key=K1&tag=c&tag=d"},
		{"empty array is absent", `{"tag":[]}`, "/base/items?ver=1&key=K1&tag=a&Tag=b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got.Store(nil)
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: "items", Args: []byte(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			if out.Kind != bridge.OK || got.Load() == nil {
				t.Fatalf("kind %v: %s", out.Kind, out.Result.Content[0].(*mcp.TextContent).Text)
			}
			if uri := got.Load().URL.RequestURI(); uri != tc.want {
				t.Errorf("upstream got %s\nwant %s", uri, tc.want)
			}
		})
	}
}

// TestOperationServersKeepCredentialsHome: with upstream credentials
// configured, an operation whose own servers are on another origin than
// the upstream's is skipped with the reason (the credentials would travel
// there); the same origin, written differently, is fine; without
// credentials the other origin is served.
func TestOperationServersKeepCredentialsHome(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: origins, version: "1"}
servers: [{url: "https://api.example.com/v1"}]
paths:
  /home:
    get:
      operationId: home
      responses: {"200": {description: ok}}
  /same:
    servers: [{url: "https://API.example.com:443/v2"}]
    get:
      operationId: same
      responses: {"200": {description: ok}}
  /away:
    get:
      operationId: away
      servers: [{url: "https://uploads.example.net"}]
      responses: {"200": {description: ok}}
`
	for _, tc := range []struct {
		name  string
		creds bridge.Credentials
		rules []string
		want  int
	}{
		{"header key", bridge.Credentials{Headers: map[string]string{"X-Api-Key": "hk-configured-1"}}, nil, 2},
		{"OAuth2 client secret", bridge.Credentials{}, []string{"client-secret-1"}, 2},
		{"no credentials", bridge.Credentials{}, nil, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := bridge.Options{BaseURL: "https://api.example.com/v1", UseOperationServers: true, Credentials: tc.creds}
			opts.Rules.Secrets = tc.rules
			b := specCatalog(t, spec, opts)
			if b.Len() != tc.want {
				t.Fatalf("%d tools, want %d (skipped: %+v)", b.Len(), tc.want, b.Skipped())
			}
			if tc.want == 2 {
				sk := b.Skipped()
				if len(sk) != 1 || !strings.Contains(sk[0].Reason, "https://uploads.example.net:443") || !strings.Contains(sk[0].Reason, "credentials") {
					t.Errorf("skipped %+v; want away, naming its origin", sk)
				}
			}
		})
	}
}

// TestConnectionHeadersNotArguments: header parameters for the connection
// itself (Host, Content-Length, Transfer-Encoding, and hop-by-hop ones such
// as Connection, which could have a proxy drop the credential header it
// names) are not tool arguments, like Accept, Content-Type and
// Authorization; other headers are.
func TestConnectionHeadersNotArguments(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: hop, version: "1"}
paths:
  /echo:
    get:
      operationId: echo
      parameters:
        - {name: Connection, in: header, schema: {type: string}}
        - {name: Host, in: header, schema: {type: string}}
        - {name: Content-Length, in: header, schema: {type: string}}
        - {name: Transfer-Encoding, in: header, schema: {type: string}}
        - {name: Keep-Alive, in: header, schema: {type: string}}
        - {name: Upgrade, in: header, schema: {type: string}}
        - {name: TE, in: header, schema: {type: string}}
        - {name: Accept, in: header, schema: {type: string}}
        - {name: X-Trace, in: header, schema: {type: string}}
      responses: {"200": {description: ok}}
`
	up, got, _ := echoUpstream(t)
	b := specCatalog(t, spec, bridge.Options{BaseURL: up.URL, Client: up.Client(), Credentials: bridge.Credentials{Headers: map[string]string{"X-Api-Key": "hk-configured-1"}}})
	cs := connect(t, b)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tools.Tools[0].InputSchema.(map[string]any)
	props, _ := raw["properties"].(map[string]any)
	if len(props) != 1 || props["X-Trace"] == nil {
		t.Errorf("input schema properties %v, want X-Trace alone", props)
	}
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"Connection": "X-Api-Key"}})
	if err != nil || !r.IsError {
		t.Fatalf("a Connection argument was accepted: %v %+v", err, r)
	}
	r, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"X-Trace": "t1"}})
	if err != nil || r.IsError {
		t.Fatalf("call: %v %+v", err, r)
	}
	if req := got.Load(); req.Header.Get("X-Trace") != "t1" || req.Header.Get("X-Api-Key") != "hk-configured-1" || req.Header.Get("Connection") != "" {
		t.Errorf("upstream headers %v", req.Header)
	}
}

const lenientCredSpec = `openapi: 3.0.3
info: {title: lenient, version: "1"}
paths:
  /echo:
    get:
      operationId: echo
      parameters:
        - {name: filter, in: query, style: form, explode: true, schema: {type: object, additionalProperties: true}}
        - {name: prefs, in: cookie, style: form, explode: true, schema: {type: object, additionalProperties: true}}
        - {name: X_Api_Key, in: header, schema: {type: string}}
        - {name: X-Trace, in: header, schema: {type: string}}
      responses: {"200": {description: ok}}
  /form:
    post:
      operationId: form
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, additionalProperties: true, properties: {opts: {type: object, additionalProperties: true}}}
            encoding: {opts: {style: form, explode: true}}
      responses: {"200": {description: ok}}
  /upload:
    post:
      operationId: upload
      requestBody:
        content:
          multipart/form-data:
            schema: {type: object, additionalProperties: true, properties: {opts: {type: object, additionalProperties: true}}}
            encoding: {opts: {style: deepObject, explode: true}}
      responses: {"200": {description: ok}}
`

// TestLenientCredentialNames: names that PHP (and CGI, Rack, Sinatra)
// file under a credential's are refused as well as the credential's own:
// PHP reads '.', ' ' and an unmatched '[' as '_' and trims leading spaces
// (a cookie session.id is $_COOKIE['session_id'], the first of which
// wins; a query api.key is $_GET['api_key'], the last of which wins), a
// header X_Api_Key is HTTP_X_API_KEY like X-Api-Key, and a form or
// multipart body field is merged over the query ($_REQUEST). The upstream
// is not called; ordinary names still go.
func TestLenientCredentialNames(t *testing.T) {
	// The upstream keeps the last request with its body.
	got, calls := new(atomic.Pointer[http.Request]), new(atomic.Int32)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		kept := r.Clone(context.Background())
		kept.Body = io.NopCloser(bytes.NewReader(body))
		got.Store(kept)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(up.Close)
	creds := bridge.Credentials{
		Query:   map[string]string{"api_key": "QSECRET-111"},
		Cookies: map[string]string{"session_id": "CSECRET-222"},
		Headers: map[string]string{"X-Api-Key": "HSECRET-333"},
	}
	withCreds := bridge.NewRuntime(specCatalog(t, lenientCredSpec, bridge.Options{BaseURL: up.URL + "/v1", Client: up.Client(), Credentials: creds}))
	withBase := bridge.NewRuntime(specCatalog(t, lenientCredSpec, bridge.Options{BaseURL: up.URL + "/v1?api_key=BASESECRET-444", Client: up.Client()}))
	const (
		cookieCred = "which carries the bridge's upstream credential"
		queryCred  = "which carries the bridge's upstream credential"
		baseSet    = "which the bridge's upstream URL sets"
		formCred   = "read as the query parameter that carries the bridge's upstream credential"
		formBase   = "read as a query parameter the bridge's upstream URL sets"
	)
	for _, tc := range []struct {
		name string
		rt   *bridge.Runtime
		tool string
		args string
		want []string // all in the refusal; nil: the call goes
	}{
		// 1. Cookies: PHP maps '.' and ' ' to '_', an unmatched '[' too,
		// and skips leading spaces once the name is unescaped.
		{"cookie dot", withCreds, "echo", `{"prefs":{"session.id":"EVIL"}}`, []string{`cookie "session.id"`, cookieCred}},
		{"cookie space", withCreds, "echo", `{"prefs":{"session id":"EVIL"}}`, []string{`cookie "session id"`, cookieCred}},
		{"cookie leading space", withCreds, "echo", `{"prefs":{" session_id":"EVIL"}}`, []string{`cookie " session_id"`, cookieCred}},
		{"cookie unmatched bracket", withCreds, "echo", `{"prefs":{"session[id":"EVIL"}}`, []string{`cookie "session[id"`, cookieCred}},
		{"cookie array", withCreds, "echo", `{"prefs":{"Session.ID[x]":"EVIL"}}`, []string{`cookie "Session.ID[x]"`, cookieCred}},
		// 2. The upstream URL's query, and a query credential.
		{"base query dot", withBase, "echo", `{"filter":{"api.key":"EVIL"}}`, []string{`"filter"`, `query parameter "api.key"`, baseSet}},
		{"base query leading space", withBase, "echo", `{"filter":{" api_key":"EVIL"}}`, []string{`"filter"`, `query parameter " api_key"`, baseSet}},
		{"base query unmatched bracket", withBase, "echo", `{"filter":{"api[key":"EVIL"}}`, []string{`"filter"`, `query parameter "api[key"`, baseSet}},
		{"base query trailing space", withBase, "echo", `{"filter":{"api_key ":"EVIL"}}`, []string{`"filter"`, `query parameter "api_key "`, baseSet}},
		{"credential query dot", withCreds, "echo", `{"filter":{"API.KEY":"EVIL"}}`, []string{`"filter"`, `query parameter "API.KEY"`, queryCred}},
		{"credential query space", withCreds, "echo", `{"filter":{"api key[]":"EVIL"}}`, []string{`"filter"`, `query parameter "api key[]"`, queryCred}},
		// 3. A declared header X_Api_Key is no argument next to a
		// configured X-Api-Key.
		{"header underscore", withCreds, "echo", `{"X_Api_Key":"EVIL"}`, []string{"X_Api_Key"}},
		// 4. Form and multipart bodies: field names as written, nested
		// ones included.
		{"form field", withCreds, "form", `{"body":{"api_key":"EVIL"}}`, []string{`"body"`, `form field "api_key"`, formCred}},
		{"form field nested", withCreds, "form", `{"body":{"api_key[x]":"EVIL"}}`, []string{`form field "api_key[x]"`, formCred}},
		{"form field dot", withCreds, "form", `{"body":{"Api.Key":"EVIL"}}`, []string{`form field "Api.Key"`, formCred}},
		{"form field exploded", withCreds, "form", `{"body":{"opts":{"api_key":"EVIL"}}}`, []string{`form field "api_key"`, formCred}},
		{"form field base", withBase, "form", `{"body":{"api.key":"EVIL"}}`, []string{`form field "api.key"`, formBase}},
		{"multipart field", withCreds, "upload", `{"body":{"api_key":"EVIL"}}`, []string{`"body"`, `form field "api_key"`, formCred}},
		{"multipart field space", withCreds, "upload", `{"body":{" api key":"EVIL"}}`, []string{`form field " api key"`, formCred}},
		{"multipart field base", withBase, "upload", `{"body":{"API_KEY[]":"EVIL"}}`, []string{`form field "API_KEY[]"`, formBase}},
		// deepObject parts: opts[api_key] is opts to PHP; api_key as a
		// key of its own is refused.
		{"multipart deepObject key", withCreds, "upload", `{"body":{"opts":{"x":"1"},"api_key":"EVIL"}}`, []string{`form field "api_key"`, formCred}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := calls.Load()
			out, err := tc.rt.Call(t.Context(), &bridge.Call{Tool: tc.tool, Args: []byte(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			text := out.Result.Content[0].(*mcp.TextContent).Text
			if out.Kind != bridge.BadArguments {
				t.Fatalf("got kind %v, %q; want bad_arguments mentioning %q", out.Kind, text, tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("refusal %q does not mention %q", text, w)
				}
			}
			if n := calls.Load() - before; n != 0 {
				t.Errorf("the upstream was called %d times", n)
			}
		})
	}

	// Ordinary names, and names that merely resemble a credential's, go.
	for _, tc := range []struct {
		name string
		rt   *bridge.Runtime
		tool string
		args string
		want func(*http.Request) string // "" when the request is as it should be
	}{
		{"query and cookie", withCreds, "echo", `{"filter":{"api-key":"1","api_key_id":"2","api":"3"},"prefs":{"session":"s","theme":"dark"},"X-Trace":"t1"}`, func(r *http.Request) string {
			q := r.URL.Query()
			if q.Get("api-key") != "1" || q.Get("api_key_id") != "2" || q.Get("api") != "3" || len(q["api_key"]) != 1 || q.Get("api_key") != "QSECRET-111" {
				return "query " + r.URL.RawQuery
			}
			if c := r.Header.Get("Cookie"); c != "session=s; theme=dark; session_id=CSECRET-222" {
				return "cookies " + c
			}
			if v := r.Header.Values("X-Api-Key"); len(v) != 1 || v[0] != "HSECRET-333" || r.Header.Get("X-Trace") != "t1" || r.Header.Get("X_Api_Key") != "" {
				return "headers " + strings.Join(v, ",")
			}
			return ""
		}},
		{"base query", withBase, "echo", `{"filter":{"api_key_id":"2","key":"3"}}`, func(r *http.Request) string {
			if q := r.URL.RawQuery; q != "api_key=BASESECRET-444&api_key_id=2&key=3" {
				return "query " + q
			}
			return ""
		}},
		{"form", withCreds, "form", `{"body":{"name":"n","api-key":"1","opts":{"apikey":"2"}}}`, func(r *http.Request) string {
			if err := r.ParseForm(); err != nil || r.PostForm.Get("name") != "n" || r.PostForm.Get("api-key") != "1" || r.PostForm.Get("apikey") != "2" || r.Form.Get("api_key") != "QSECRET-111" {
				return "form " + r.PostForm.Encode()
			}
			return ""
		}},
		{"multipart", withBase, "upload", `{"body":{"name":"n","opts":{"api_key":"x"}}}`, func(r *http.Request) string {
			if err := r.ParseMultipartForm(1 << 20); err != nil || r.PostForm.Get("name") != "n" || r.PostForm.Get("opts[api_key]") != "x" {
				return fmt.Sprintf("multipart %v %v", err, r.PostForm)
			}
			return ""
		}},
	} {
		t.Run("ordinary "+tc.name, func(t *testing.T) {
			got.Store(nil)
			out, err := tc.rt.Call(t.Context(), &bridge.Call{Tool: tc.tool, Args: []byte(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			if out.Kind != bridge.OK || got.Load() == nil {
				t.Fatalf("kind %v: %s", out.Kind, out.Result.Content[0].(*mcp.TextContent).Text)
			}
			if msg := tc.want(got.Load()); msg != "" {
				t.Errorf("upstream got %s", msg)
			}
		})
	}
}
