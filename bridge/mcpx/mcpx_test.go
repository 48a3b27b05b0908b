package mcpx_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/transport"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// op is one GET operation of a generated spec.
type op struct{ id, summary string }

// spec is an OpenAPI document with one GET /ID operation per op.
func spec(ops ...op) string {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: sync, version: \"1\"}\npaths:\n")
	for _, o := range ops {
		b.WriteString("  /" + o.id + ":\n    get:\n      operationId: " + o.id + "\n      summary: " + o.summary +
			"\n      parameters: [{name: q, in: query, schema: {type: string}}]\n      responses: {\"200\": {description: ok}}\n")
	}
	return b.String()
}

// newUpstream answers every request with its path.
func newUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"path":"` + r.URL.Path + `"}`))
	}))
	t.Cleanup(up.Close)
	return up
}

// catalog builds a catalog of src against up; descriptions override the
// description of the operations they name (as a whitelist entry would).
func catalog(t *testing.T, src string, up *httptest.Server, descriptions map[string]string) *bridge.Catalog {
	t.Helper()
	return catalogWith(t, src, up, func(o *whitelist.Operation) { o.Description = descriptions[o.Op.OperationID] })
}

// catalogAllow is catalog with the given access lists by operationId.
func catalogAllow(t *testing.T, src string, up *httptest.Server, allow map[string]*whitelist.Allow) *bridge.Catalog {
	t.Helper()
	return catalogWith(t, src, up, func(o *whitelist.Operation) { o.Allow = allow[o.Op.OperationID] })
}

// catalogWith builds the catalog of every operation of src, each edited
// by edit first.
func catalogWith(t *testing.T, src string, up *httptest.Server, edit func(*whitelist.Operation)) *bridge.Catalog {
	t.Helper()
	res, err := specloader.LoadData(t.Context(), []byte(src), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ops {
		if ops[i].Op != nil {
			edit(&ops[i])
		}
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// seen is what the recording middleware saw of one call.
type seen struct {
	Tool      string
	Transport string
	Caller    *bridge.Identity
}

// recorder is a middleware recording every call.
type recorder struct {
	mu    sync.Mutex
	calls []seen
}

func (r *recorder) middleware(next bridge.Invoker) bridge.Invoker {
	return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
		r.mu.Lock()
		r.calls = append(r.calls, seen{Tool: c.Tool, Transport: c.Transport, Caller: c.Caller})
		r.mu.Unlock()
		return next.Invoke(ctx, c)
	})
}

func (r *recorder) all() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// connectInMemory connects a client to srv in memory; notes, when not nil,
// receives one value per tools/list_changed notification.
func connectInMemory(t *testing.T, srv *mcp.Server, notes chan<- struct{}) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server.Connect: %v", err)
	}
	var opts *mcp.ClientOptions
	if notes != nil {
		opts = &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { notes <- struct{}{} }}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, opts).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatalf("client.Connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// headerTransport adds a fixed header to every request.
type headerTransport struct{ key, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP serves srv through the HTTP transport and connects a
// streamable client sending authorization ("" sends none).
func connectHTTP(t *testing.T, srv *mcp.Server, opts transport.HTTPOptions, authorization string) (*mcp.ClientSession, error) {
	t.Helper()
	h, err := transport.NewHTTPHandler(srv, opts, nil)
	if err != nil {
		t.Fatalf("NewHTTPHandler: %v", err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	hc := &http.Client{Transport: http.DefaultTransport}
	if authorization != "" {
		hc.Transport = headerTransport{"Authorization", authorization}
	}
	tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, nil
}

// TestIdentity checks the caller and transport a middleware sees: bridge.Local
// over an in-memory (stdio-like) session, the API key's principal over HTTP.
func TestIdentity(t *testing.T) {
	up := newUpstream(t)
	keys := transport.HTTPOptions{APIKeys: []string{"k1", "k2"}}
	tests := []struct {
		name   string
		http   *transport.HTTPOptions // nil: in memory
		auth   string
		wantID string
		want   string // transport
	}{
		{name: "in memory", want: "stdio", wantID: "local"},
		{name: "first API key", http: &keys, auth: "Bearer k1", wantID: "api-key:0", want: "http"},
		{name: "second API key", http: &keys, auth: "Bearer k2", wantID: "api-key:1", want: "http"},
		{name: "no auth", http: &transport.HTTPOptions{NoAuth: true}, wantID: "", want: "http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			rt := bridge.NewRuntime(catalog(t, spec(op{"alpha", "Alpha"}), up, nil), rec.middleware)
			srv := mcpx.New(rt, mcpx.Options{Version: "test"}).MCP()
			var cs *mcp.ClientSession
			if tt.http == nil {
				cs = connectInMemory(t, srv, nil)
			} else {
				var err error
				if cs, err = connectHTTP(t, srv, *tt.http, tt.auth); err != nil {
					t.Fatalf("Connect: %v", err)
				}
			}
			for _, tool := range []string{"alpha", "ping"} {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
				if err != nil || res.IsError {
					t.Fatalf("CallTool(%s) = %+v, %v", tool, res, err)
				}
			}
			calls := rec.all()
			if len(calls) != 2 {
				t.Fatalf("the middleware saw %d calls, want 2: %+v", len(calls), calls)
			}
			for _, c := range calls {
				if c.Caller == nil {
					t.Fatalf("%s: Caller is nil", c.Tool)
				}
				type view struct {
					Transport, ID, Subject string
					Scopes                 []string
				}
				want := view{Transport: tt.want, ID: tt.wantID}
				got := view{Transport: c.Transport, ID: c.Caller.ID, Subject: c.Caller.Subject, Scopes: c.Caller.Scopes}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: call seen (-want +got):\n%s", c.Tool, diff)
				}
				if tt.http == nil && c.Caller != bridge.Local {
					t.Errorf("%s: Caller = %p, want bridge.Local", c.Tool, c.Caller)
				}
				if tt.http != nil && c.Caller == bridge.Local {
					t.Errorf("%s: an HTTP caller is bridge.Local", c.Tool)
				}
			}
		})
	}

	t.Run("unknown API key", func(t *testing.T) {
		rec := &recorder{}
		rt := bridge.NewRuntime(catalog(t, spec(op{"alpha", "Alpha"}), up, nil), rec.middleware)
		srv := mcpx.New(rt, mcpx.Options{Version: "test"}).MCP()
		if _, err := connectHTTP(t, srv, keys, "Bearer k3"); err == nil {
			t.Error("Connect with an unknown API key succeeded")
		}
		if calls := rec.all(); len(calls) != 0 {
			t.Errorf("the middleware saw %+v, want nothing", calls)
		}
	})
}

// listTools returns name → description of what the client lists.
func listTools(t *testing.T, cs *mcp.ClientSession) map[string]string {
	t.Helper()
	out := map[string]string{}
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		out[tool.Name] = tool.Description
	}
	return out
}

// waitNote waits for a tools/list_changed notification.
func waitNote(t *testing.T, notes <-chan struct{}) {
	t.Helper()
	select {
	case <-notes:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed within 5s")
	}
}

// pingDescription is the built-in ping tool's description.
func pingDescription(t *testing.T, cat *bridge.Catalog) string {
	t.Helper()
	p, ok := cat.Lookup(bridge.PingToolName)
	if !ok {
		t.Fatal("catalog has no ping tool")
	}
	return p.Def().Description
}

// TestSync walks a server through reloads and checks the counts Sync
// reports, the notifications the client gets and what tools/list shows.
// Steps run in order, each from the state the previous one left.
func TestSync(t *testing.T) {
	up := newUpstream(t)
	alpha, beta, gamma, delta := op{"alpha", "Alpha"}, op{"beta", "Beta"}, op{"gamma", "Gamma"}, op{"delta", "Delta"}
	first := catalog(t, spec(alpha, beta), up, nil)
	rt := bridge.NewRuntime(first)
	s := mcpx.New(rt, mcpx.Options{Version: "test"})
	notes := make(chan struct{}, 16)
	cs := connectInMemory(t, s.MCP(), notes)
	ping := pingDescription(t, first)

	type counts struct{ Added, Changed, Removed int }
	steps := []struct {
		name string
		cat  *bridge.Catalog
		want counts
		list map[string]string
	}{
		{
			name: "same definitions, new catalog",
			cat:  catalog(t, spec(alpha, beta), up, nil),
			list: map[string]string{"alpha": "Alpha", "beta": "Beta", "ping": ping},
		},
		{
			name: "operation added",
			cat:  catalog(t, spec(alpha, beta, gamma), up, nil),
			want: counts{Added: 1},
			list: map[string]string{"alpha": "Alpha", "beta": "Beta", "gamma": "Gamma", "ping": ping},
		},
		{
			name: "description changed",
			cat:  catalog(t, spec(alpha, beta, gamma), up, map[string]string{"alpha": "Alpha, described by the whitelist"}),
			want: counts{Changed: 1},
			list: map[string]string{"alpha": "Alpha, described by the whitelist", "beta": "Beta", "gamma": "Gamma", "ping": ping},
		},
		{
			name: "operation removed",
			cat:  catalog(t, spec(alpha, gamma), up, map[string]string{"alpha": "Alpha, described by the whitelist"}),
			want: counts{Removed: 1},
			list: map[string]string{"alpha": "Alpha, described by the whitelist", "gamma": "Gamma", "ping": ping},
		},
		{
			name: "added, changed and removed at once",
			cat:  catalog(t, spec(alpha, delta), up, nil),
			want: counts{Added: 1, Changed: 1, Removed: 1},
			list: map[string]string{"alpha": "Alpha", "delta": "Delta", "ping": ping},
		},
		{
			// The definition is the same, but other callers see it now.
			name: "access list changed",
			cat:  catalogAllow(t, spec(alpha, delta), up, map[string]*whitelist.Allow{"alpha": {Keys: []string{"api-key:1"}}}),
			want: counts{Changed: 1},
			list: map[string]string{"alpha": "Alpha", "delta": "Delta", "ping": ping},
		},
		{
			name: "access list the same, new catalog",
			cat:  catalogAllow(t, spec(alpha, delta), up, map[string]*whitelist.Allow{"alpha": {Keys: []string{"api-key:1"}}}),
			list: map[string]string{"alpha": "Alpha", "delta": "Delta", "ping": ping},
		},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var got counts
			got.Added, got.Changed, got.Removed = s.Sync(st.cat)
			if diff := cmp.Diff(st.want, got); diff != "" {
				t.Errorf("Sync counts (-want +got):\n%s", diff)
			}
			// The swap's own Sync finds nothing left to do.
			rt.Swap(st.cat)
			var again counts
			again.Added, again.Changed, again.Removed = s.Sync(st.cat)
			if diff := cmp.Diff(counts{}, again); diff != "" {
				t.Errorf("second Sync (-want +got):\n%s", diff)
			}

			if st.want == (counts{}) {
				// Nothing changed, so nothing may arrive; there is no event to
				// wait for, hence the fixed wait (go-sdk debounces by 10ms).
				select {
				case <-notes:
					t.Error("got notifications/tools/list_changed for a swap that changed nothing")
				case <-time.After(200 * time.Millisecond):
				}
			} else {
				waitNote(t, notes)
			}
			if diff := cmp.Diff(st.list, listTools(t, cs)); diff != "" {
				t.Errorf("tools/list name → description (-want +got):\n%s", diff)
			}
			// Every listed tool answers, on the current catalog.
			for name := range st.list {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
				if err != nil || res.IsError {
					t.Errorf("CallTool(%s) = %+v, %v", name, res, err)
				}
			}
		})
	}
}

// TestSyncOnSwap checks that Runtime.Swap alone keeps the server in step:
// a bridge that started degraded lists only ping, and recovers all its tools
// when a full catalog is swapped in, with one notification; swapping a
// degraded catalog back in drops them again.
func TestSyncOnSwap(t *testing.T) {
	up := newUpstream(t)
	deg, err := bridge.NewDegraded("spec: connection refused", bridge.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	rt := bridge.NewRuntime(deg)
	s := mcpx.New(rt, mcpx.Options{Version: "test", Log: zap.New(core)})
	notes := make(chan struct{}, 16)
	cs := connectInMemory(t, s.MCP(), notes)
	ping := pingDescription(t, deg)

	if diff := cmp.Diff(map[string]string{"ping": ping}, listTools(t, cs)); diff != "" {
		t.Errorf("degraded tools/list (-want +got):\n%s", diff)
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha"}); err == nil {
		t.Error("CallTool(alpha) on a degraded bridge succeeded")
	}

	full := catalog(t, spec(op{"alpha", "Alpha"}, op{"beta", "Beta"}), up, nil)
	if got := rt.Swap(full); got != deg {
		t.Error("Swap did not return the degraded catalog")
	}
	waitNote(t, notes)
	want := map[string]string{"alpha": "Alpha", "beta": "Beta", "ping": ping}
	if diff := cmp.Diff(want, listTools(t, cs)); diff != "" {
		t.Errorf("recovered tools/list (-want +got):\n%s", diff)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("CallTool(alpha) after recovery = %+v, %v", res, err)
	}
	type logged struct {
		Added, Changed, Removed, Tools int64
	}
	var got []logged
	for _, e := range logs.FilterMessage("tool list changed").All() {
		f := e.ContextMap()
		got = append(got, logged{f["added"].(int64), f["changed"].(int64), f["removed"].(int64), f["tools"].(int64)})
	}
	if diff := cmp.Diff([]logged{{Added: 2, Tools: 3}}, got); diff != "" {
		t.Errorf("logged changes (-want +got):\n%s", diff)
	}

	// Degraded again (the spec broke on a later reload): only ping.
	rt.Swap(deg)
	waitNote(t, notes)
	if diff := cmp.Diff(map[string]string{"ping": ping}, listTools(t, cs)); diff != "" {
		t.Errorf("degraded again tools/list (-want +got):\n%s", diff)
	}
}

// TestIdentityOfJWTSubject: a JWT caller's subject is the token's sub
// claim whole, as the transport passes it, never cut out of the user id
// (where "evil|alice" would end as alice's and get alice's access).
func TestIdentityOfJWTSubject(t *testing.T) {
	for _, tc := range []struct {
		ti   *auth.TokenInfo
		want string
	}{
		{&auth.TokenInfo{UserID: "jwt:https://iss|evil|alice", Extra: map[string]any{"sub": "evil|alice"}}, "evil|alice"},
		{&auth.TokenInfo{UserID: "jwt:https://iss|auth0|bob", Extra: map[string]any{"sub": "auth0|bob"}}, "auth0|bob"},
		{&auth.TokenInfo{UserID: "jwt:https://iss|evil|alice"}, ""},
		{&auth.TokenInfo{UserID: "api-key:0", Extra: map[string]any{"sub": "alice"}}, ""},
	} {
		if got := mcpx.IdentityOf(tc.ti, "").Subject; got != tc.want {
			t.Errorf("IdentityOf(%v).Subject = %q, want %q", tc.ti, got, tc.want)
		}
	}
}

// TestLogMessagesOnlyWhenAsked: a call's steps go out as log messages to a
// client that set a level, over stateful HTTP and legacy SSE, and not to
// one that did not; a stateless HTTP request before 2026-07-28, whose
// session no setLevel can reach, gets go-sdk's default level (info), which
// the MCP conformance suite (tools-call-with-logging) expects.
func TestLogMessagesOnlyWhenAsked(t *testing.T) {
	up := newUpstream(t)
	for _, tc := range []struct {
		name     string
		stateful bool
		setLevel bool
		want     bool
		version  string
	}{
		{"stateless, 2026-07-28", false, false, false, ""},
		{"stateless, 2025-11-25", false, false, true, "2025-11-25"},
		{"stateless, 2025-06-18", false, false, true, "2025-06-18"},
		{"stateful, no level", true, false, false, "2025-11-25"},
		{"stateful, level info", true, true, true, "2025-11-25"},
		{"legacy SSE, no level", false, false, false, "2025-03-26"},
		{"legacy SSE, level info", false, true, true, "2025-03-26"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcpx.New(bridge.NewRuntime(catalog(t, spec(op{"alpha", "Alpha"}), up, nil)), mcpx.Options{Version: "test"}).MCP()
			h, err := transport.NewHTTPHandler(srv, transport.HTTPOptions{NoAuth: true, Stateful: tc.stateful}, zap.NewNop())
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(h)
			defer ts.Close()
			var mu sync.Mutex
			var msgs int
			opts := &mcp.ClientOptions{LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) {
				mu.Lock()
				msgs++
				mu.Unlock()
			}}
			var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", MaxRetries: -1}
			if strings.HasPrefix(tc.name, "legacy SSE") {
				tr = &mcp.SSEClientTransport{Endpoint: ts.URL + "/sse"}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, opts).Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if tc.setLevel {
				if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
			}
			for range 3 {
				if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha", Arguments: map[string]any{}}); err != nil || res.IsError {
					t.Fatalf("CallTool: %+v %v", res, err)
				}
			}
			if !tc.want {
				time.Sleep(200 * time.Millisecond) // for messages that would come late
			}
			deadline := time.Now().Add(2 * time.Second)
			for {
				mu.Lock()
				n := msgs
				mu.Unlock()
				if (n > 0) == tc.want || time.Now().After(deadline) {
					if (n > 0) != tc.want {
						t.Errorf("%d log messages; want some: %v", n, tc.want)
					}
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// TestSetLevelChecksTheLevel: logging/setLevel takes the eight MCP levels
// and refuses anything else with invalid params.
func TestSetLevelChecksTheLevel(t *testing.T) {
	up := newUpstream(t)
	srv := mcpx.New(bridge.NewRuntime(catalog(t, spec(op{"alpha", "Alpha"}), up, nil)), mcpx.Options{Version: "test"}).MCP()
	cs := connectInMemory(t, srv, nil)
	if err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Errorf("warning: %v", err)
	}
	for _, level := range []mcp.LoggingLevel{"bogus", "", "INFO"} {
		err := cs.SetLoggingLevel(t.Context(), &mcp.SetLoggingLevelParams{Level: level})
		if err == nil || !strings.Contains(err.Error(), "invalid log level") {
			t.Errorf("level %q: %v, want invalid params", level, err)
		}
	}
}
