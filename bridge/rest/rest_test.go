package rest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/rest"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

const spec = `openapi: 3.0.3
info: {title: rest, version: "1"}
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses: {"200": {description: ok}}
  /fail:
    get:
      operationId: fail
      responses: {"200": {description: ok}}
`

func newRuntime(t *testing.T, mws ...bridge.Middleware) *bridge.Runtime {
	t.Helper()
	return newRuntimeOf(t, spec, bridge.ToolsAll, mws...)
}

// newRuntimeOf serves the spec doc in the tool mode tools.
func newRuntimeOf(t testing.TB, doc, tools string, mws ...bridge.Middleware) *bridge.Runtime {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"error":"boom"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"`+strings.TrimPrefix(r.URL.Path, "/items/")+`"}`)
	}))
	t.Cleanup(up.Close)
	res, err := specloader.LoadData(t.Context(), []byte(doc), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	return bridge.NewRuntime(cat, mws...)
}

func do(t *testing.T, srv *httptest.Server, method, path, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(data)
}

func TestREST(t *testing.T) {
	var seen []string
	record := func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			seen = append(seen, c.Transport+":"+c.Tool)
			return next.Invoke(ctx, c)
		})
	}
	srv := httptest.NewServer(rest.Handler(newRuntime(t, record), rest.Options{}))
	defer srv.Close()

	status, _, body := do(t, srv, "GET", "/api/tools", "")
	var defs []struct{ Name string }
	if err := json.Unmarshal([]byte(body), &defs); status != 200 || err != nil {
		t.Fatalf("GET /api/tools: %d %s", status, body)
	}
	if diff := cmp.Diff([]struct{ Name string }{{"fail"}, {"getItem"}, {"ping"}}, defs); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	for _, tc := range []struct {
		name, path, body string
		status           int
		contains         string
	}{
		{"ok text", "/api/tools/getItem", `{"id":7}`, 200, `{\"id\":\"7\"}`},
		{"tool error", "/api/tools/fail", ``, 200, `"isError":true`},
		{"bad arguments", "/api/tools/getItem", `{"id":"x"}`, 200, `"isError":true`},
		{"unknown tool", "/api/tools/nope", `{}`, 404, `unknown tool`},
		{"not an object", "/api/tools/getItem", `[1]`, 400, `JSON object`},
		{"not JSON", "/api/tools/getItem", `{`, 400, `JSON object`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, _, body := do(t, srv, "POST", tc.path, tc.body)
			if status != tc.status || !strings.Contains(body, tc.contains) {
				t.Errorf("got %d %s; want %d containing %s", status, body, tc.status, tc.contains)
			}
		})
	}
	// A body over the limit is 413, for a call and for a batch.
	small := httptest.NewServer(rest.Handler(newRuntime(t), rest.Options{MaxBodyBytes: 64}))
	defer small.Close()
	for _, path := range []string{"/api/tools/getItem", "/api/batch"} {
		if status, _, body := do(t, small, "POST", path, `{"id":"`+strings.Repeat("7", 100)+`"}`); status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than 64 bytes") {
			t.Errorf("%s, a body over the limit: %d %s; want 413", path, status, body)
		}
	}
	if len(seen) == 0 || !strings.HasPrefix(seen[0], "rest:") {
		t.Errorf("the middleware chain did not see REST calls: %v", seen)
	}
}

func TestBatch(t *testing.T) {
	srv := httptest.NewServer(rest.Handler(newRuntime(t), rest.Options{}))
	defer srv.Close()
	status, _, body := do(t, srv, "POST", "/api/batch",
		`{"calls":[{"name":"getItem","arguments":{"id":1}},{"name":"fail"},{"name":"nope","arguments":{}},{"name":"getItem","arguments":{"id":3}},{"name":"getItem","arguments":[1]}]}`)
	if status != 200 {
		t.Fatalf("batch: %d %s", status, body)
	}
	var got struct {
		Results []struct {
			Name   string
			Status int
			Error  string
			Result *struct {
				IsError bool
				Content []struct{ Text string }
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name    string
		Status  int
		IsError bool
		Text    string
	}
	var rows []row
	for _, r := range got.Results {
		rw := row{Name: r.Name, Status: r.Status}
		if r.Result != nil {
			rw.IsError = r.Result.IsError
			rw.Text = r.Result.Content[0].Text
		} else {
			rw.Text = r.Error
		}
		rows = append(rows, rw)
	}
	want := []row{
		{"getItem", 200, false, `{"id":"1"}`},
		{"fail", 200, true, `upstream returned HTTP 500 Internal Server Error: {"error":"boom"}`},
		{"nope", 404, false, `unknown tool "nope"`},
		{"getItem", 200, false, `{"id":"3"}`},
		{"getItem", 400, false, "arguments must be a JSON object"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("batch results in order (-want +got):\n%s", diff)
	}
	if status, _, _ := do(t, srv, "POST", "/api/batch", `{"calls":[]}`); status != 400 {
		t.Errorf("empty batch: %d; want 400", status)
	}
}

// TestBatchTooManyCalls: a batch of more calls than MaxBatch is refused by
// its count before any member is read (a malformed member past the limit
// does not change the answer) and before any call runs.
func TestBatchTooManyCalls(t *testing.T) {
	rt := newRuntime(t)
	srv := httptest.NewServer(rest.Handler(rt, rest.Options{MaxBatch: 2}))
	t.Cleanup(srv.Close)
	call := `{"name":"getItem","arguments":{"id":1}}`
	status, _, body := do(t, srv, "POST", "/api/batch", `{"calls":[`+call+`,`+call+`,{"name":"getItem","NAME":"x"}]}`)
	if status != 400 || !strings.Contains(body, "between 1 and 2 calls, got 3") {
		t.Errorf("3 calls over a limit of 2: %d %s; want 400 naming the limit", status, body)
	}
	if status, _, body := do(t, srv, "POST", "/api/batch", `{"calls":[`+call+`,`+call+`]}`); status != 200 {
		t.Errorf("2 calls: %d %s; want 200", status, body)
	}
}

func TestRateLimited429(t *testing.T) {
	deny := func(bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(context.Context, *bridge.Call) (*bridge.Outcome, error) {
			return bridge.Reject(bridge.RateLimited, "slow down", 1500*time.Millisecond), nil
		})
	}
	srv := httptest.NewServer(rest.Handler(newRuntime(t, deny), rest.Options{}))
	defer srv.Close()
	status, h, body := do(t, srv, "POST", "/api/tools/getItem", `{"id":1}`)
	if status != 429 || h.Get("Retry-After") != "2" || !strings.Contains(body, "slow down") {
		t.Errorf("got %d Retry-After=%q %s; want 429, 2, the message", status, h.Get("Retry-After"), body)
	}
}

// A call refused because the quota store failed (quota-fail closed) did
// not happen: 503, not a 200 holding isError.
func TestQuotaUnavailable503(t *testing.T) {
	deny := func(bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(context.Context, *bridge.Call) (*bridge.Outcome, error) {
			return bridge.Reject(bridge.QuotaUnavailable, "quota store unavailable", 0), nil
		})
	}
	srv := httptest.NewServer(rest.Handler(newRuntime(t, deny), rest.Options{}))
	defer srv.Close()
	status, hdr, body := do(t, srv, "POST", "/api/tools/getItem", `{"id":1}`)
	if status != 503 || !strings.Contains(body, "quota store unavailable") || !strings.Contains(body, `"isError":true`) {
		t.Errorf("got %d %s; want 503 with the isError result", status, body)
	}
	if ra := hdr.Get("Retry-After"); ra == "" {
		t.Error("503 without Retry-After")
	}
	req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/api/tools/getItem", strings.NewReader(`{"id":1}`))
	req.Header.Set("Accept", "text/event-stream")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 {
		t.Errorf("streamed: %d; want 503 before any event", resp.StatusCode)
	}
}

func TestStream(t *testing.T) {
	srv := httptest.NewServer(rest.Handler(newRuntime(t), rest.Options{}))
	defer srv.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/api/tools/getItem", strings.NewReader(`{"id":5}`))
	req.Header.Set("Accept", "text/event-stream")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	var events []string
	var last string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if ev, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, ev)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			last = d
		}
	}
	if diff := cmp.Diff([]string{"progress", "progress", "progress", "result"}, events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if !strings.Contains(last, `{\"id\":\"5\"}`) {
		t.Errorf("result event %s", last)
	}
}

// A streaming call refused before it began (over a quota, over the
// concurrency limit, an unknown tool) gets the status and Retry-After a
// plain call gets, not a 200 stream holding an error.
func TestStreamRefusedBeforeStart(t *testing.T) {
	deny := func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			if c.Tool == "getItem" {
				return bridge.Reject(bridge.RateLimited, "slow down", 1500*time.Millisecond), nil
			}
			return next.Invoke(ctx, c)
		})
	}
	srv := httptest.NewServer(rest.Handler(newRuntime(t, deny), rest.Options{}))
	defer srv.Close()
	for _, tc := range []struct {
		path       string
		status     int
		retryAfter string
		contains   string
	}{
		{"/api/tools/getItem", 429, "2", "slow down"},
		{"/api/tools/nope", 404, "", `unknown tool \"nope\"`},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+tc.path, strings.NewReader(`{"id":1}`))
		req.Header.Set("Accept", "text/event-stream")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Retry-After") != tc.retryAfter ||
			resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(string(body), tc.contains) {
			t.Errorf("%s streamed: %d Retry-After=%q %s %s; want %d, %q, JSON containing %s", tc.path, resp.StatusCode,
				resp.Header.Get("Retry-After"), resp.Header.Get("Content-Type"), body, tc.status, tc.retryAfter, tc.contains)
		}
	}
}

// An operation may be named "batch": /api/tools/batch calls it like any
// other, and the batch route, /api/batch, is outside /api/tools/.
func TestToolNamedBatch(t *testing.T) {
	doc := strings.Replace(spec, "operationId: fail", "operationId: batch", 1)
	srv := httptest.NewServer(rest.Handler(newRuntimeOf(t, doc, bridge.ToolsAll), rest.Options{}))
	defer srv.Close()
	if status, _, body := do(t, srv, "POST", "/api/tools/batch", `{}`); status != 200 || !strings.Contains(body, "upstream returned HTTP 500") {
		t.Errorf("POST /api/tools/batch: %d %s; want the tool batch's result", status, body)
	}
	if status, _, body := do(t, srv, "POST", "/api/batch", `{"calls":[{"name":"getItem","arguments":{"id":2}}]}`); status != 200 || !strings.Contains(body, `{\"id\":\"2\"}`) {
		t.Errorf("POST /api/batch: %d %s; want the batch's results", status, body)
	}
	// Without such a tool, the old batch path says where the batch went.
	plain := httptest.NewServer(rest.Handler(newRuntime(t), rest.Options{}))
	defer plain.Close()
	if status, _, body := do(t, plain, "POST", "/api/tools/batch", `{"calls":[]}`); status != 404 || !strings.Contains(body, "POST /api/batch") {
		t.Errorf("POST /api/tools/batch, no such tool: %d %s; want 404 naming POST /api/batch", status, body)
	}
}

// In dynamic mode the list is tools/list's (the meta-tools and ping), and
// an operation that is not listed is called as call_operation calls it.
func TestDynamicModeCallsUnlisted(t *testing.T) {
	srv := httptest.NewServer(rest.Handler(newRuntimeOf(t, spec, bridge.ToolsDynamic), rest.Options{}))
	defer srv.Close()
	_, _, body := do(t, srv, "GET", "/api/tools", "")
	var defs []struct{ Name string }
	if err := json.Unmarshal([]byte(body), &defs); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]struct{ Name string }{{"search_operations"}, {"describe_operation"}, {"call_operation"}, {"ping"}}, defs); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	_, _, direct := do(t, srv, "POST", "/api/tools/getItem", `{"id":4}`)
	_, _, meta := do(t, srv, "POST", "/api/tools/call_operation", `{"name":"getItem","arguments":{"id":4}}`)
	if direct != meta || !strings.Contains(direct, `{\"id\":\"4\"}`) {
		t.Errorf("an unlisted operation: %s; through call_operation: %s; want the same result", direct, meta)
	}
}

// A wrong method or a path that is no route gets a JSON error body, like
// every other refusal of the facade, with Allow on a 405.
func TestWrongRouteJSON(t *testing.T) {
	srv := httptest.NewServer(rest.Handler(newRuntime(t), rest.Options{}))
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/api/tools/getItem", 405, "POST"},
		{"DELETE", "/api/tools", 405, "GET, HEAD"},
		{"GET", "/api/batch", 405, "POST"},
		{"POST", "/api/nothing", 404, ""},
		{"POST", "/api/tools/a/b", 404, ""},
	} {
		status, h, body := do(t, srv, tc.method, tc.path, "")
		var e struct{ Error string }
		if status != tc.status || h.Get("Allow") != tc.allow || h.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
			t.Errorf("%s %s: %d Allow=%q %s %q; want %d, Allow=%q, a JSON error", tc.method, tc.path, status, h.Get("Allow"), h.Get("Content-Type"), body, tc.status, tc.allow)
		}
	}
}

// gated blocks every call of getItem with id 0 until release is closed, and
// counts the calls that reached it.
func gated(release <-chan struct{}, started *atomic.Int64) bridge.Middleware {
	return func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			started.Add(1)
			if string(c.Args) == `{"id":0}` {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return next.Invoke(ctx, c)
		})
	}
}

// A batch's results are written in order as soon as they and those before
// them are done, not held until the whole batch is: six batches of 32 calls
// answering 4 MiB each held 2.5 GB.
func TestBatchWritesResultsAsTheyFinish(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int64
	srv := httptest.NewServer(rest.Handler(newRuntime(t, gated(release, &started)), rest.Options{}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/api/batch",
		strings.NewReader(`{"calls":[{"name":"getItem","arguments":{"id":1}},{"name":"getItem","arguments":{"id":0}}]}`))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("the batch's answer did not start while its second call ran: %v", err)
	}
	defer resp.Body.Close()
	var got []byte
	buf := make([]byte, 4096)
	for !strings.Contains(string(got), `{\"id\":\"1\"}`) {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("the first result was not written while the second call ran: %v; got %q", err, got)
		}
	}
}

// Finished results waiting for an earlier one to be written are bounded:
// past MaxBatchHeldBytes no further call of the batch starts until they
// are written.
func TestBatchHeldBytesBounded(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int64
	srv := httptest.NewServer(rest.Handler(newRuntime(t, gated(release, &started)), rest.Options{BatchConcurrency: 2, MaxBatchHeldBytes: 1}))
	defer srv.Close()
	calls := []string{`{"name":"getItem","arguments":{"id":0}}`}
	for i := 1; i < 10; i++ {
		calls = append(calls, `{"name":"getItem","arguments":{"id":`+strconv.Itoa(i)+`}}`)
	}
	done := make(chan string, 1)
	go func() {
		_, _, body := do(t, srv, "POST", "/api/batch", `{"calls":[`+strings.Join(calls, ",")+`]}`)
		done <- body
	}()
	time.Sleep(300 * time.Millisecond) // time for calls that should not start to start
	if n := started.Load(); n > 2 {
		t.Errorf("%d calls started while the first was running and the second's result waited; want 2", n)
	}
	close(release)
	body := <-done
	for i := range 10 {
		if !strings.Contains(body, `{\"id\":\"`+strconv.Itoa(i)+`\"}`) {
			t.Errorf("result %d missing from %s", i, body)
		}
	}
}

// A batch whose client leaves starts no further call, and its handler
// returns: the calls running are cancelled.
func TestBatchClientGone(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var started atomic.Int64
	handlerDone := make(chan struct{})
	h := rest.Handler(newRuntime(t, gated(release, &started)), rest.Options{BatchConcurrency: 2})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		close(handlerDone)
	}))
	defer srv.Close()
	calls := make([]string, 10)
	for i := range calls {
		calls[i] = `{"name":"getItem","arguments":{"id":0}}` // each blocks until cancelled
	}
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/api/batch", strings.NewReader(`{"calls":[`+strings.Join(calls, ",")+`]}`))
	go func() {
		for started.Load() < 2 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	if resp, err := srv.Client().Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	select {
	case <-handlerDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the batch handler still runs after its client left")
	}
	if n := started.Load(); n != 2 {
		t.Errorf("%d calls started; want the 2 running when the client left", n)
	}
}

// A batch waiting for a slow call keeps its answer alive with whitespace
// between results (valid JSON), as an event stream gets comments: a proxy
// with an idle timeout cut a batch whose first call was slow.
func TestBatchKeepAlive(t *testing.T) {
	release := make(chan struct{})
	var started atomic.Int64
	srv := httptest.NewServer(rest.Handler(newRuntime(t, gated(release, &started)), rest.Options{KeepAlive: 5 * time.Millisecond}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/api/batch",
		strings.NewReader(`{"calls":[{"name":"getItem","arguments":{"id":0}},{"name":"getItem","arguments":{"id":1}}]}`))
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []byte
	buf := make([]byte, 4096)
	for !strings.HasSuffix(string(got), "\n\n") {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("no keepalive while the first call ran: %v; got %q", err, got)
		}
	}
	close(release)
	rest, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Results []struct{ Status int } }
	if err := json.Unmarshal(append(got, rest...), &body); err != nil || len(body.Results) != 2 {
		t.Errorf("answer %q: %v; want valid JSON with 2 results", append(got, rest...), err)
	}
}

// TestListFollowsCatalogAndCaller: the tool list, encoded once per catalog
// and set of visible tools, is the new catalog's after a swap and each
// caller's own when access lists filter it.
func TestListFollowsCatalogAndCaller(t *testing.T) {
	rt := newRuntime(t)
	srv := httptest.NewServer(rest.Handler(rt, rest.Options{
		Identity: func(r *http.Request) *bridge.Identity {
			return &bridge.Identity{Subject: r.Header.Get("X-Who")}
		},
		Visible: func(id *bridge.Identity, tl *bridge.Tool) bool {
			return id.Subject != "limited" || tl.Name() == "getItem"
		},
	}))
	defer srv.Close()
	list := func(who string) string {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", srv.URL+"/api/tools", nil)
		req.Header.Set("X-Who", who)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("GET /api/tools: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		var defs []struct{ Name string }
		if err := json.Unmarshal(body, &defs); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range defs {
			names = append(names, d.Name)
		}
		return strings.Join(names, ",")
	}
	for range 2 {
		if got := list("all"); got != "fail,getItem,ping" {
			t.Errorf("all: %s", got)
		}
		if got := list("limited"); got != "getItem" {
			t.Errorf("limited: %s", got)
		}
	}
	next := newRuntimeOf(t, strings.Replace(spec, "operationId: fail", "operationId: failAgain", 1), bridge.ToolsAll)
	rt.Swap(next.Catalog())
	if got := list("all"); !strings.Contains(got, "failAgain") {
		t.Errorf("after a swap: %s", got)
	}
}

// BenchmarkList: GET /api/tools for GitHub's whole API (1,200 tools).
func BenchmarkList(b *testing.B) {
	doc, err := os.ReadFile("/work/shared/specs/github-api.3.0.json")
	if err != nil {
		b.Skip(err)
	}
	srv := httptest.NewServer(rest.Handler(newRuntimeOf(b, string(doc), bridge.ToolsAll), rest.Options{}))
	defer srv.Close()
	b.ResetTimer()
	for b.Loop() {
		resp, err := srv.Client().Get(srv.URL + "/api/tools")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// TestBatchExactNames: a batch's members are named exactly and once. The
// decoder took "NAME" for "name" and the last of two, so a batch that a
// reviewer, a log or a policy proxy reads as calling getItem called fail
// (JavaScript and Python keep "NAME" as a key of its own).
func TestBatchExactNames(t *testing.T) {
	var called []string
	record := func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			called = append(called, c.Tool)
			return next.Invoke(ctx, c)
		})
	}
	srv := httptest.NewServer(rest.Handler(newRuntime(t, record), rest.Options{}))
	defer srv.Close()
	for _, tc := range []struct{ body, want string }{
		{`{"calls":[{"name":"getItem","arguments":{"id":1},"NAME":"fail"}]}`, `calls[0]: unknown field \"NAME\" (names are case-sensitive: \"name\")`},
		{`{"calls":[{"Name":"fail"}]}`, `calls[0]: unknown field \"Name\"`},
		{`{"calls":[{"name":"getItem","name":"fail"}]}`, `calls[0]: field \"name\" given twice`},
		{`{"calls":[{"name":"getItem","arguments":{"id":1},"Arguments":{"id":2}}]}`, `unknown field \"Arguments\"`},
		{`{"calls":[{"name":"getItem","arguments":{"id":1}}],"CALLS":[{"name":"fail"}]}`, `unknown field \"CALLS\"`},
		{`{"calls":[{"name":7}]}`, `calls[0]: \"name\" must be a string`},
		{`{"calls":{"name":"fail"}}`, `\"calls\" must be an array`},
	} {
		called = nil
		status, _, body := do(t, srv, "POST", "/api/batch", tc.body)
		if status != http.StatusBadRequest || !strings.Contains(body, tc.want) || len(called) != 0 {
			t.Errorf("%s: %d %s, called %v; want 400 containing %s and no call", tc.body, status, body, called, tc.want)
		}
	}
	if status, _, body := do(t, srv, "POST", "/api/batch", `{"calls":[{"name":"getItem","arguments":{"id":4}}]}`); status != 200 || !strings.Contains(body, `{\"id\":\"4\"}`) {
		t.Errorf("a well-formed batch: %d %s", status, body)
	}
}
