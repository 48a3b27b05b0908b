package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// rtSpec has one operation per way a call can end. Paths name what the test
// upstream (rtUpstream) does for them.
const rtSpec = `openapi: 3.0.3
info: {title: runtime, version: "7"}
paths:
  /ok:
    get:
      operationId: ok
      parameters:
        - {name: q, in: query, schema: {type: string}}
        - {name: limit, in: query, schema: {type: integer, minimum: 1}}
      responses: {"200": {description: ok}}
  /missing:
    get:
      operationId: missing
      responses: {"200": {description: ok}}
  /down:
    get:
      operationId: down
      responses: {"200": {description: ok}}
  /flaky:
    get:
      operationId: flaky
      responses: {"200": {description: ok}}
  /slow:
    get:
      operationId: slow
      responses: {"200": {description: ok}}
  /big:
    get:
      operationId: big
      responses: {"200": {description: ok}}
  /held:
    get:
      operationId: held
      responses: {"200": {description: ok}}
`

// rtSpecWithoutHeld is rtSpec after a reload that dropped /held.
var rtSpecWithoutHeld = rtSpec[:strings.Index(rtSpec, "  /held:")]

const (
	rtOKBody      = `{"ok":true}`
	rtMissingBody = `{"error":"no such thing"}`
	rtMaxBytes    = 256
)

// rtUpstream is the upstream of rtSpec. It counts the requests per path;
// /held blocks until release is closed and signals held when it starts.
type rtUpstream struct {
	*httptest.Server
	held    chan struct{}
	release chan struct{}

	mu   sync.Mutex
	hits map[string]int
}

func newRTUpstream(t *testing.T) *rtUpstream {
	t.Helper()
	u := &rtUpstream{held: make(chan struct{}, 1), release: make(chan struct{}), hits: map[string]int{}}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.hits[r.URL.Path]++
		n := u.hits[r.URL.Path]
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte(rtOKBody))
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(rtMissingBody))
		case "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"down"}`))
		case "/flaky":
			if n == 1 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.Write([]byte(rtOKBody))
		case "/slow":
			<-r.Context().Done() // the bridge gives up first
		case "/big":
			w.Write([]byte(`"` + strings.Repeat("x", 4*rtMaxBytes) + `"`))
		case "/held":
			u.held <- struct{}{}
			<-u.release
			w.Write([]byte(rtOKBody))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() {
		select {
		case <-u.release:
		default:
			close(u.release)
		}
		u.Close()
	})
	return u
}

func (u *rtUpstream) hitsOf(path string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.hits[path]
}

// rtCatalog builds a catalog of spec against up: a retrying upstream client
// with millisecond backoff, a 50ms timeout for "slow", and rtMaxBytes as the
// response limit.
func rtCatalog(t *testing.T, spec string, up *rtUpstream, opts bridge.Options) *bridge.Catalog {
	t.Helper()
	res, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ops {
		if ops[i].Op != nil && ops[i].Op.OperationID == "slow" {
			ops[i].Timeout = 50 * time.Millisecond
		}
	}
	if opts.BaseURL == "" {
		opts.BaseURL = up.URL
	}
	if opts.Client == nil {
		opts.Client = upstream.New(upstream.Options{RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
	}
	if opts.MaxResponseBytes == 0 {
		opts.MaxResponseBytes = rtMaxBytes
	}
	cat, err := bridge.New(ops, opts)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// rtSeen is what the recording middleware saw of one call.
type rtSeen struct {
	Tool      string
	Caller    *bridge.Identity
	Transport string
	Target    string
	target    *bridge.Tool
	out       *bridge.Outcome
	err       error
}

// rtRecorder is a middleware that records every call and its outcome.
type rtRecorder struct {
	mu   sync.Mutex
	seen []rtSeen
}

func (r *rtRecorder) middleware(next bridge.Invoker) bridge.Invoker {
	return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
		s := rtSeen{Tool: c.Tool, Caller: c.Caller, Transport: c.Transport, target: c.Target()}
		if c.Target() != nil {
			s.Target = c.Target().Name()
		}
		out, err := next.Invoke(ctx, c)
		s.out, s.err = out, err
		r.mu.Lock()
		r.seen = append(r.seen, s)
		r.mu.Unlock()
		return out, err
	})
}

// last returns the last call seen; it fails the test if there was none.
func (r *rtRecorder) last(t *testing.T) rtSeen {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seen) == 0 {
		t.Fatal("the middleware saw no call")
	}
	return r.seen[len(r.seen)-1]
}

func (r *rtRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// rtConnect serves rt through mcpx and connects an in-memory client.
func rtConnect(t *testing.T, rt *bridge.Runtime) *mcp.ClientSession {
	t.Helper()
	server := mcpx.New(rt, mcpx.Options{Version: "test"}).MCP()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server.Connect: %v", err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatalf("client.Connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// rtText is the text of a result's first content.
func rtText(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if len(r.Content) == 0 {
		t.Fatalf("result has no content: %+v", r)
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("first content is %T, want *mcp.TextContent", r.Content[0])
	}
	return tc.Text
}

// rtOutcome is the deterministic part of an Outcome.
type rtOutcome struct {
	Kind              string
	Status, Attempts  int
	BytesIn, BytesOut int64
	IsError           bool
	RetryAfter        time.Duration
}

func rtProject(o *bridge.Outcome) rtOutcome {
	return rtOutcome{
		Kind: o.Kind.String(), Status: o.Status, Attempts: o.Attempts,
		BytesIn: o.BytesIn, BytesOut: o.BytesOut, IsError: o.Result != nil && o.Result.IsError,
		RetryAfter: o.RetryAfter,
	}
}

// rtArgsLen is the size of the arguments as a go-sdk client sends them: an
// empty object when there are none.
func rtArgsLen(t *testing.T, args map[string]any) int64 {
	t.Helper()
	if args == nil {
		return int64(len("{}"))
	}
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return int64(len(b))
}

// TestRuntimeOutcomes drives real calls through a go-sdk client, mcpx and
// the runtime to an httptest upstream, and checks the outcome a middleware
// sees for every way a call can end.
func TestRuntimeOutcomes(t *testing.T) {
	up := newRTUpstream(t)
	rec := &rtRecorder{}
	rt := bridge.NewRuntime(rtCatalog(t, rtSpec, up, bridge.Options{}), rec.middleware)
	cs := rtConnect(t, rt)

	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		path     string // upstream path, "" when none
		want     rtOutcome
		wantHits int
		// upstream reports whether Outcome.Upstream must be positive.
		upstream bool
		text     string // a substring of the client's text, "" for no check
	}{
		{
			name: "success", tool: "ok", args: map[string]any{"q": "x", "limit": 3}, path: "/ok",
			want:     rtOutcome{Kind: "ok", Status: 200, Attempts: 1, BytesOut: int64(len(rtOKBody))},
			wantHits: 1, upstream: true, text: `"ok":true`,
		},
		{
			name: "success without arguments", tool: "ok", path: "/ok",
			want:     rtOutcome{Kind: "ok", Status: 200, Attempts: 1, BytesOut: int64(len(rtOKBody))},
			wantHits: 1, upstream: true,
		},
		{
			name: "upstream 404", tool: "missing", args: map[string]any{}, path: "/missing",
			want:     rtOutcome{Kind: "upstream_4xx", Status: 404, Attempts: 1, BytesOut: int64(len(rtMissingBody)), IsError: true},
			wantHits: 1, upstream: true, text: "404",
		},
		{
			name: "503 retried to exhaustion", tool: "down", path: "/down",
			want:     rtOutcome{Kind: "upstream_5xx", Status: 503, Attempts: 3, BytesOut: int64(len(`{"error":"down"}`)), IsError: true},
			wantHits: 3, upstream: true, text: "503",
		},
		{
			name: "503 once then 200", tool: "flaky", path: "/flaky",
			want:     rtOutcome{Kind: "ok", Status: 200, Attempts: 2, BytesOut: int64(len(rtOKBody))},
			wantHits: 2, upstream: true,
		},
		{
			name: "timeout", tool: "slow", path: "/slow",
			want:     rtOutcome{Kind: "timeout", Attempts: 1, IsError: true},
			wantHits: 1, upstream: true, text: "50ms",
		},
		{
			name: "too large", tool: "big", path: "/big",
			want:     rtOutcome{Kind: "too_large", Status: 200, Attempts: 1, IsError: true},
			wantHits: 1, upstream: true, text: "256",
		},
		{
			name: "schema violation", tool: "ok", args: map[string]any{"limit": 0}, path: "/ok",
			want:     rtOutcome{Kind: "bad_arguments", IsError: true},
			wantHits: 0, text: "limit",
		},
		{
			name: "wrong type", tool: "ok", args: map[string]any{"q": 42}, path: "/ok",
			want:     rtOutcome{Kind: "bad_arguments", IsError: true},
			wantHits: 0, text: "q",
		},
		{
			name: "unknown argument", tool: "ok", args: map[string]any{"nope": true}, path: "/ok",
			want:     rtOutcome{Kind: "bad_arguments", IsError: true},
			wantHits: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, calls := up.hitsOf(tt.path), rec.count()
			params := &mcp.CallToolParams{Name: tt.tool}
			if tt.args != nil {
				params.Arguments = tt.args
			}
			res, err := cs.CallTool(t.Context(), params)
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if n := rec.count() - calls; n != 1 {
				t.Fatalf("the middleware saw %d calls, want 1", n)
			}
			seen := rec.last(t)
			if seen.err != nil {
				t.Fatalf("Invoke error: %v", seen.err)
			}
			want := tt.want
			want.BytesIn = rtArgsLen(t, tt.args)
			if diff := cmp.Diff(want, rtProject(seen.out)); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if res.IsError != tt.want.IsError {
				t.Errorf("client IsError = %v, want %v", res.IsError, tt.want.IsError)
			}
			if seen.out.Took <= 0 {
				t.Errorf("Took = %v, want > 0", seen.out.Took)
			}
			if tt.upstream && seen.out.Upstream <= 0 {
				t.Errorf("Upstream = %v, want > 0", seen.out.Upstream)
			}
			if !tt.upstream && seen.out.Upstream != 0 {
				t.Errorf("Upstream = %v, want 0: the upstream was not called", seen.out.Upstream)
			}
			if seen.out.Upstream > seen.out.Took {
				t.Errorf("Upstream %v > Took %v", seen.out.Upstream, seen.out.Took)
			}
			if tt.want.IsError && seen.out.Detail == "" {
				t.Error("a failed call has no Detail")
			}
			if !tt.want.IsError && seen.out.Detail != "" {
				t.Errorf("a successful call has Detail %q", seen.out.Detail)
			}
			if got := up.hitsOf(tt.path) - before; got != tt.wantHits {
				t.Errorf("upstream %s got %d requests, want %d", tt.path, got, tt.wantHits)
			}
			if tt.text != "" && !strings.Contains(rtText(t, res), tt.text) {
				t.Errorf("client text %q does not contain %q", rtText(t, res), tt.text)
			}
		})
	}
}

// TestRuntimeCallSeenByMiddleware checks what a middleware sees of the call:
// the tool, its target taken from the catalog, the caller and the transport
// of an in-memory (stdio-like) session.
func TestRuntimeCallSeenByMiddleware(t *testing.T) {
	up := newRTUpstream(t)
	rec := &rtRecorder{}
	cat := rtCatalog(t, rtSpec, up, bridge.Options{})
	rt := bridge.NewRuntime(cat, rec.middleware)
	cs := rtConnect(t, rt)
	for _, tool := range []string{"ok", "ping"} {
		t.Run(tool, func(t *testing.T) {
			if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool}); err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			seen := rec.last(t)
			type view struct {
				Tool, Transport, Target string
				Caller                  *bridge.Identity
			}
			want := view{Tool: tool, Transport: "stdio", Target: tool, Caller: &bridge.Identity{ID: "local"}}
			got := view{Tool: seen.Tool, Transport: seen.Transport, Target: seen.Target, Caller: seen.Caller}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("call seen (-want +got):\n%s", diff)
			}
			if seen.Caller != bridge.Local {
				t.Errorf("Caller = %+v, want bridge.Local", seen.Caller)
			}
			if wantTarget, _ := cat.Lookup(tool); seen.target != wantTarget {
				t.Errorf("Target() is not the catalog's tool %q", tool)
			}
		})
	}
}

// TestRuntimeUnknownTool calls the runtime directly with a name the catalog
// does not have: a protocol error, and no middleware runs.
func TestRuntimeUnknownTool(t *testing.T) {
	up := newRTUpstream(t)
	rec := &rtRecorder{}
	rt := bridge.NewRuntime(rtCatalog(t, rtSpec, up, bridge.Options{}), rec.middleware)
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "nope", Caller: bridge.Local, Transport: "cli"})
	if !errors.Is(err, bridge.ErrUnknownTool) {
		t.Fatalf("Call(nope) error = %v, want ErrUnknownTool", err)
	}
	if !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("error %q does not name the tool", err)
	}
	if out != nil {
		t.Errorf("Call(nope) outcome = %+v, want nil", out)
	}
	if n := rec.count(); n != 0 {
		t.Errorf("the middleware saw %d calls, want 0", n)
	}
}

// TestRuntimeDirectCall calls the runtime without MCP: the Call fields reach
// the middleware unchanged and the outcome carries the result.
func TestRuntimeDirectCall(t *testing.T) {
	up := newRTUpstream(t)
	rec := &rtRecorder{}
	rt := bridge.NewRuntime(rtCatalog(t, rtSpec, up, bridge.Options{}), rec.middleware)
	caller := &bridge.Identity{ID: "api-key:3", Remote: "192.0.2.1:5000"}
	args := json.RawMessage(`{"q":"direct"}`)
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "ok", Args: args, Caller: caller, Transport: "rest"})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	want := rtOutcome{Kind: "ok", Status: 200, Attempts: 1, BytesIn: int64(len(args)), BytesOut: int64(len(rtOKBody))}
	if diff := cmp.Diff(want, rtProject(out)); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	seen := rec.last(t)
	if seen.Caller != caller || seen.Transport != "rest" || seen.Tool != "ok" || seen.Target != "ok" {
		t.Errorf("middleware saw tool %q target %q caller %+v transport %q", seen.Tool, seen.Target, seen.Caller, seen.Transport)
	}
	if seen.out != out {
		t.Error("the caller did not get the outcome the middleware returned")
	}
}

// TestChainOrder checks that Chain and NewRuntime run the middlewares first
// outermost, each seeing the call before and the outcome after the inner ones.
func TestChainOrder(t *testing.T) {
	var order []string
	mw := func(name string) bridge.Middleware {
		return func(next bridge.Invoker) bridge.Invoker {
			return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
				order = append(order, name+">")
				out, err := next.Invoke(ctx, c)
				order = append(order, "<"+name)
				return out, err
			})
		}
	}
	inner := bridge.InvokerFunc(func(context.Context, *bridge.Call) (*bridge.Outcome, error) {
		order = append(order, "inner")
		return &bridge.Outcome{Kind: bridge.OK}, nil
	})

	t.Run("Chain", func(t *testing.T) {
		order = nil
		if _, err := bridge.Chain(inner, mw("a"), mw("b"), mw("c")).Invoke(t.Context(), &bridge.Call{Tool: "x"}); err != nil {
			t.Fatal(err)
		}
		want := []string{"a>", "b>", "c>", "inner", "<c", "<b", "<a"}
		if diff := cmp.Diff(want, order); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
	})
	t.Run("Chain without middlewares", func(t *testing.T) {
		order = nil
		if _, err := bridge.Chain(inner).Invoke(t.Context(), &bridge.Call{Tool: "x"}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"inner"}, order); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
	})
	t.Run("NewRuntime", func(t *testing.T) {
		order = nil
		cat, err := bridge.NewDegraded("test", bridge.Options{})
		if err != nil {
			t.Fatal(err)
		}
		rt := bridge.NewRuntime(cat, mw("a"), mw("b"))
		if _, err := rt.Call(t.Context(), &bridge.Call{Tool: bridge.PingToolName}); err != nil {
			t.Fatal(err)
		}
		want := []string{"a>", "b>", "<b", "<a"}
		if diff := cmp.Diff(want, order); diff != "" {
			t.Errorf("order (-want +got):\n%s", diff)
		}
	})
}

// TestMiddlewareReject checks that a middleware refusing a call with Reject
// short-circuits it: the upstream is never called, the inner middlewares
// never run, and the client gets an IsError result with the message.
func TestMiddlewareReject(t *testing.T) {
	up := newRTUpstream(t)
	outer := &rtRecorder{}
	inner := &rtRecorder{}
	const msg = "too many calls in flight, retry in 1s"
	busy := func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			if c.Tool == "ok" {
				return bridge.Reject(bridge.Busy, msg, time.Second), nil
			}
			return next.Invoke(ctx, c)
		})
	}
	rt := bridge.NewRuntime(rtCatalog(t, rtSpec, up, bridge.Options{}), outer.middleware, busy, inner.middleware)
	cs := rtConnect(t, rt)

	args := map[string]any{"q": "x"}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ok", Arguments: args})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if !res.IsError {
		t.Error("rejected call: IsError = false, want true")
	}
	if got := rtText(t, res); got != msg {
		t.Errorf("rejected call text = %q, want %q", got, msg)
	}
	if n := up.hitsOf("/ok"); n != 0 {
		t.Errorf("upstream called %d times, want 0", n)
	}
	if n := inner.count(); n != 0 {
		t.Errorf("the inner middleware saw %d calls, want 0", n)
	}
	seen := outer.last(t)
	want := rtOutcome{Kind: "busy", BytesIn: rtArgsLen(t, args), IsError: true, RetryAfter: time.Second}
	if diff := cmp.Diff(want, rtProject(seen.out)); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	if seen.out.Detail != msg {
		t.Errorf("Detail = %q, want %q", seen.out.Detail, msg)
	}

	// A call the middleware lets through still reaches the upstream.
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "missing"})
	if err != nil || !res.IsError {
		t.Fatalf("CallTool(missing) = %+v, %v; want an upstream 404", res, err)
	}
	if n := inner.count(); n != 1 {
		t.Errorf("the inner middleware saw %d calls, want 1", n)
	}
}

// TestRejectOutcome checks Reject's outcome for every refusal kind.
func TestRejectOutcome(t *testing.T) {
	for _, k := range []bridge.ErrorKind{bridge.Busy, bridge.Denied, bridge.RateLimited} {
		t.Run(k.String(), func(t *testing.T) {
			out := bridge.Reject(k, "no: "+k.String(), 3*time.Second)
			got := rtProject(out)
			want := rtOutcome{Kind: k.String(), IsError: true, RetryAfter: 3 * time.Second}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			if text := rtText(t, out.Result); text != "no: "+k.String() {
				t.Errorf("text = %q", text)
			}
		})
	}
}

// TestErrorKindLabels pins the stable labels metrics and usage records use.
func TestErrorKindLabels(t *testing.T) {
	want := map[bridge.ErrorKind]string{
		bridge.OK:           "ok",
		bridge.ToolError:    "tool_error",
		bridge.BadArguments: "bad_arguments",
		bridge.Upstream4xx:  "upstream_4xx",
		bridge.Upstream5xx:  "upstream_5xx",
		bridge.Timeout:      "timeout",
		bridge.Unavailable:  "unavailable",
		bridge.TooLarge:     "too_large",
		bridge.Busy:         "busy",
		bridge.Denied:       "denied",
		bridge.RateLimited:  "rate_limited",
		bridge.Redirected:   "redirected",

		bridge.QuotaUnavailable: "quota_unavailable",
	}
	got := map[bridge.ErrorKind]string{}
	for _, k := range bridge.ErrorKinds() {
		got[k] = k.String()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("labels of ErrorKinds() (-want +got):\n%s", diff)
	}
	if got, want := bridge.ErrorKind(200).String(), "kind(200)"; got != want {
		t.Errorf("ErrorKind(200).String() = %q, want %q", got, want)
	}
	for status, want := range map[int]bridge.ErrorKind{200: bridge.OK, 204: bridge.OK, 302: bridge.Redirected, 404: bridge.Upstream4xx, 429: bridge.Upstream4xx, 503: bridge.Upstream5xx} {
		if got := bridge.KindOfStatus(status); got != want {
			t.Errorf("KindOfStatus(%d) = %s, want %s", status, got, want)
		}
	}
}

// TestRuntimeSwapInFlight checks that a call running when the catalog is
// swapped finishes on the tool it started with, that a call after the swap
// to the removed tool is a protocol error, and that OnSwap hooks run in
// registration order with the old and the new catalog.
func TestRuntimeSwapInFlight(t *testing.T) {
	up := newRTUpstream(t)
	rec := &rtRecorder{}
	oldCat := rtCatalog(t, rtSpec, up, bridge.Options{})
	newCat := rtCatalog(t, rtSpecWithoutHeld, up, bridge.Options{})
	if _, ok := newCat.Lookup("held"); ok {
		t.Fatal("the new catalog still has held")
	}
	rt := bridge.NewRuntime(oldCat, rec.middleware)
	cs := rtConnect(t, rt) // mcpx registers its hook first

	type swap struct {
		hook     string
		old, cur *bridge.Catalog
	}
	var swaps []swap
	for _, name := range []string{"first", "second"} {
		rt.OnSwap(func(old, cur *bridge.Catalog) { swaps = append(swaps, swap{name, old, cur}) })
	}

	type result struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(context.WithoutCancel(t.Context()), &mcp.CallToolParams{Name: "held"})
		done <- result{res, err}
	}()
	select {
	case <-up.held:
	case r := <-done:
		t.Fatalf("held returned before the upstream was reached: %+v, %v", r.res, r.err)
	}

	if got := rt.Swap(newCat); got != oldCat {
		t.Error("Swap did not return the old catalog")
	}
	if rt.Catalog() != newCat {
		t.Error("Catalog() is not the new catalog after Swap")
	}
	close(up.release)

	r := <-done
	if r.err != nil {
		t.Fatalf("in-flight call failed after the swap: %v", r.err)
	}
	if r.res.IsError {
		t.Fatalf("in-flight call: IsError, text %q", rtText(t, r.res))
	}
	if got := rtText(t, r.res); !strings.Contains(got, `"ok":true`) {
		t.Errorf("in-flight call text = %q", got)
	}
	seen := rec.last(t)
	if oldTool, _ := oldCat.Lookup("held"); seen.target != oldTool || seen.Target != "held" {
		t.Errorf("in-flight call target = %q (%p), want the old catalog's held (%p)", seen.Target, seen.target, oldTool)
	}
	if diff := cmp.Diff(rtOutcome{Kind: "ok", Status: 200, Attempts: 1, BytesIn: rtArgsLen(t, nil), BytesOut: int64(len(rtOKBody))}, rtProject(seen.out)); diff != "" {
		t.Errorf("in-flight outcome (-want +got):\n%s", diff)
	}

	// After the swap, held is gone: a protocol error, not a tool result.
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "held"})
	if err == nil {
		t.Errorf("CallTool(held) after the swap = %+v, want a protocol error", res)
	} else if !strings.Contains(err.Error(), "held") {
		t.Errorf("CallTool(held) error %q does not name the tool", err)
	}
	if _, err := rt.Call(t.Context(), &bridge.Call{Tool: "held"}); !errors.Is(err, bridge.ErrUnknownTool) {
		t.Errorf("rt.Call(held) after the swap: error %v, want ErrUnknownTool", err)
	}
	// The tools both catalogs have keep working, on the new catalog.
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ok"}); err != nil || res.IsError {
		t.Errorf("CallTool(ok) after the swap = %+v, %v", res, err)
	}
	if newTool, _ := newCat.Lookup("ok"); rec.last(t).target != newTool {
		t.Error("a call after the swap did not take its tool from the new catalog")
	}

	want := []swap{{"first", oldCat, newCat}, {"second", oldCat, newCat}}
	if diff := cmp.Diff(want, swaps, cmp.AllowUnexported(swap{}), cmp.Comparer(func(a, b *bridge.Catalog) bool { return a == b })); diff != "" {
		t.Errorf("OnSwap hooks (-want +got):\n%s", diff)
	}

	// Swapping back runs the hooks again, with the roles exchanged.
	swaps = nil
	if got := rt.Swap(oldCat); got != newCat {
		t.Error("second Swap did not return the new catalog")
	}
	want = []swap{{"first", newCat, oldCat}, {"second", newCat, oldCat}}
	if diff := cmp.Diff(want, swaps, cmp.AllowUnexported(swap{}), cmp.Comparer(func(a, b *bridge.Catalog) bool { return a == b })); diff != "" {
		t.Errorf("OnSwap hooks after swapping back (-want +got):\n%s", diff)
	}
}

// rtPing calls the ping tool and decodes its report.
func rtPing(t *testing.T, cs *mcp.ClientSession, name string) bridge.PingInfo {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	if res.IsError {
		t.Fatalf("ping: IsError, text %q", rtText(t, res))
	}
	var info bridge.PingInfo
	dec := json.NewDecoder(strings.NewReader(rtText(t, res)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&info); err != nil {
		t.Fatalf("decoding ping %q: %v", rtText(t, res), err)
	}
	return info
}

// TestRuntimePing checks that ping reports the current catalog and the last
// reload, redacted.
func TestRuntimePing(t *testing.T) {
	up := newRTUpstream(t)
	const secret = "tok-secret-1234567890"
	cat := rtCatalog(t, rtSpec, up, bridge.Options{
		Version: "1.2.3", SpecTitle: "runtime", SpecVersion: "7",
		Credentials: bridge.Credentials{BearerToken: secret},
	})
	rec := &rtRecorder{}
	rt := bridge.NewRuntime(cat, rec.middleware)
	cs := rtConnect(t, rt)
	upstreamURL := cat.PingInfo().Upstream
	if !strings.HasPrefix(upstreamURL, up.URL) {
		t.Fatalf("PingInfo().Upstream = %q, want the upstream %q", upstreamURL, up.URL)
	}
	base := bridge.PingInfo{
		Bridge: "mcpbridge", Version: "1.2.3", Upstream: upstreamURL,
		SpecTitle: "runtime", SpecVersion: "7", Tools: 7,
	}

	t.Run("before any reload", func(t *testing.T) {
		if diff := cmp.Diff(base, rtPing(t, cs, "ping")); diff != "" {
			t.Errorf("ping (-want +got):\n%s", diff)
		}
		seen := rec.last(t)
		if diff := cmp.Diff(rtOutcome{Kind: "ok", BytesIn: rtArgsLen(t, nil)}, rtProject(seen.out)); diff != "" {
			t.Errorf("ping outcome (-want +got):\n%s", diff)
		}
	})
	t.Run("failed reload", func(t *testing.T) {
		rt.NoteReload("failed: x")
		want := base
		want.LastReload = "failed: x"
		if diff := cmp.Diff(want, rtPing(t, cs, "ping")); diff != "" {
			t.Errorf("ping (-want +got):\n%s", diff)
		}
	})
	t.Run("reload note with a credential", func(t *testing.T) {
		rt.NoteReload("failed: GET https://spec.example/?token=" + secret + ": 401")
		got := rtPing(t, cs, "ping")
		if strings.Contains(got.LastReload, secret) {
			t.Errorf("lastReload leaks the credential: %q", got.LastReload)
		}
		if !strings.HasPrefix(got.LastReload, "failed: ") {
			t.Errorf("lastReload = %q, want the failure", got.LastReload)
		}
	})
	t.Run("ok reload", func(t *testing.T) {
		rt.NoteReload("ok")
		want := base
		want.LastReload = "ok"
		if diff := cmp.Diff(want, rtPing(t, cs, "ping")); diff != "" {
			t.Errorf("ping (-want +got):\n%s", diff)
		}
	})
	t.Run("degraded after a swap", func(t *testing.T) {
		deg, err := bridge.NewDegraded("loading spec: connection refused", bridge.Options{Version: "1.2.3"})
		if err != nil {
			t.Fatal(err)
		}
		rt.Swap(deg)
		rt.NoteReload("failed: connection refused")
		want := bridge.PingInfo{
			Bridge: "mcpbridge", Version: "1.2.3", Degraded: true,
			Reason: "loading spec: connection refused", LastReload: "failed: connection refused",
		}
		if diff := cmp.Diff(want, rtPing(t, cs, "ping")); diff != "" {
			t.Errorf("ping (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, func() bridge.PingInfo { p := deg.PingInfo(); p.LastReload = want.LastReload; return p }()); diff != "" {
			t.Errorf("PingInfo (-want +got):\n%s", diff)
		}
	})
}

// TestRuntimePingDegraded checks a bridge that starts degraded: only ping,
// which says so and why.
func TestRuntimePingDegraded(t *testing.T) {
	deg, err := bridge.NewDegraded("spec: no such file", bridge.Options{Version: "9"})
	if err != nil {
		t.Fatal(err)
	}
	if deg.Len() != 0 || deg.Degraded() != "spec: no such file" {
		t.Errorf("Len() = %d, Degraded() = %q", deg.Len(), deg.Degraded())
	}
	cs := rtConnect(t, bridge.NewRuntime(deg))
	want := bridge.PingInfo{Bridge: "mcpbridge", Version: "9", Degraded: true, Reason: "spec: no such file"}
	if diff := cmp.Diff(want, rtPing(t, cs, "ping")); diff != "" {
		t.Errorf("ping (-want +got):\n%s", diff)
	}
}

// panicky is a Progress that panics, so that a call panics inside the
// invoker, as a bug in building the request or shaping the answer would.
type panicky struct{}

func (panicky) Step(context.Context, int, int, string) { panic("boom in the invoker") }

// TestRuntimeRecoversPanic: a panic while serving a call (in the invoker,
// or in a middleware) ends that call as an error result, reported through
// OnPanic, instead of ending the process; a panic in the invoker is an
// outcome the middlewares see (metrics, the usage record), and the runtime
// serves the next call.
func TestRuntimeRecoversPanic(t *testing.T) {
	up := newRTUpstream(t)
	rec := &rtRecorder{}
	explode := false
	panicking := func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			if explode {
				panic("boom in a middleware")
			}
			return next.Invoke(ctx, c)
		})
	}
	rt := bridge.NewRuntime(rtCatalog(t, rtSpec, up, bridge.Options{}), rec.middleware, panicking)
	var reported []string
	rt.OnPanic(func(tool string, p any, stack []byte) {
		if len(stack) == 0 {
			t.Error("OnPanic got no stack")
		}
		reported = append(reported, fmt.Sprintf("%s: %v", tool, p))
	})
	args := json.RawMessage(`{"q":"x"}`)

	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "ok", Args: args, Progress: panicky{}})
	if err != nil || out == nil || !out.Result.IsError || out.Kind != bridge.ToolError {
		t.Fatalf("panic in the invoker: Call = %+v, %v; want a tool_error result", out, err)
	}
	if got := rtText(t, out.Result); !strings.Contains(got, "internal error") {
		t.Errorf("text = %q; want it to say internal error", got)
	}
	if seen := rec.last(t); seen.out.Kind != bridge.ToolError || !strings.Contains(seen.out.Detail, "boom in the invoker") {
		t.Errorf("the middleware saw %+v; want the panic's outcome", seen.out)
	}

	explode = true
	out, err = rt.Call(t.Context(), &bridge.Call{Tool: "ok", Args: args})
	if err != nil || out == nil || !out.Result.IsError || out.BytesIn != int64(len(args)) {
		t.Fatalf("panic in a middleware: Call = %+v, %v; want an error result", out, err)
	}

	explode = false
	out, err = rt.Call(t.Context(), &bridge.Call{Tool: "ok", Args: args})
	if err != nil || out.Result.IsError {
		t.Fatalf("the call after the panics: %+v, %v; want success", out, err)
	}
	want := []string{"ok: boom in the invoker", "ok: boom in a middleware"}
	if diff := cmp.Diff(want, reported); diff != "" {
		t.Errorf("OnPanic reports (-want +got):\n%s", diff)
	}
}
