package trace_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/bridge/trace"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/transport"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// The secrets no span may carry: an argument value and the query credential.
const (
	argValue  = "arg-value-7f3a"
	queryCred = "query-cred-91bc"
)

const testSpec = `openapi: 3.0.3
info: {title: trace, version: "1"}
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
  /flaky:
    get:
      operationId: flaky
      responses: {"200": {description: ok}}
  /missing:
    get:
      operationId: missing
      responses: {"200": {description: ok}}
`

// upstreamServer answers /items/* with 200, /flaky with 503 once then 200,
// /missing with 404, and records the traceparent of every request.
type upstreamServer struct {
	*httptest.Server
	flaky atomic.Int32

	mu      sync.Mutex
	parents []string
}

func newUpstream(t *testing.T) *upstreamServer {
	t.Helper()
	u := &upstreamServer{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.parents = append(u.parents, r.Header.Get("traceparent"))
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/flaky" && u.flaky.Add(1) == 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.URL.Path == "/missing":
			w.WriteHeader(http.StatusNotFound)
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstreamServer) traceparents() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.parents...)
}

// fixture is a runtime with the tracing middleware (after mws) and a traced
// upstream client, served by an MCP server.
type fixture struct {
	rec *tracetest.SpanRecorder
	up  *upstreamServer
	srv *mcp.Server
}

func newFixture(t *testing.T, mws ...bridge.Middleware) *fixture {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	f := newFixtureWith(t, tp, mws...)
	f.rec = rec
	return f
}

// newFixtureWith is a fixture whose spans go to tp; its rec is nil.
func newFixtureWith(t *testing.T, tp oteltrace.TracerProvider, mws ...bridge.Middleware) *fixture {
	t.Helper()
	up := newUpstream(t)
	res, err := specloader.LoadData(t.Context(), []byte(testSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	client := upstream.New(upstream.Options{RetryWaitMin: time.Millisecond, RetryWaitMax: 5 * time.Millisecond, Transport: trace.Transport(tp)})
	cat, err := bridge.New(ops, bridge.Options{
		BaseURL:     up.URL,
		Client:      client,
		Credentials: bridge.Credentials{Query: map[string]string{"api_key": queryCred}},
		Version:     "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	rt := bridge.NewRuntime(cat, append([]bridge.Middleware{trace.Middleware(tp)}, mws...)...)
	return &fixture{up: up, srv: mcpx.New(rt, mcpx.Options{Version: "test"}).MCP()}
}

func (f *fixture) connectInMemory(t *testing.T) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := f.srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	return cs
}

// connectHTTP serves the MCP server through transport's HTTP handler; every
// request of the client carries header.
func (f *fixture) connectHTTP(t *testing.T, opts transport.HTTPOptions, header http.Header) *mcp.ClientSession {
	t.Helper()
	h, err := transport.NewHTTPHandler(f.srv, opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	hc := &http.Client{Transport: headerTransport(header)}
	tr := &mcp.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, nil).Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type headerTransport http.Header

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

func call(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), params)
	if err != nil {
		t.Fatalf("CallTool %s: %v", params.Name, err)
	}
	return res
}

// spans splits the ended spans into the call spans and the attempt spans.
func (f *fixture) spans(t *testing.T) (calls, attempts []sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, s := range f.rec.Ended() {
		switch s.InstrumentationScope().Name {
		case trace.ScopeName:
			calls = append(calls, s)
		default:
			attempts = append(attempts, s)
		}
	}
	return calls, attempts
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// noSecrets fails when any attribute, event or status of any span quotes an
// argument value or the query credential.
func noSecrets(t *testing.T, spans ...sdktrace.ReadOnlySpan) {
	t.Helper()
	for _, s := range spans {
		texts := []string{s.Name(), s.Status().Description}
		for _, kv := range s.Attributes() {
			texts = append(texts, kv.Value.Emit())
		}
		for _, e := range s.Events() {
			for _, kv := range e.Attributes {
				texts = append(texts, kv.Value.Emit())
			}
		}
		for _, txt := range texts {
			if strings.Contains(txt, argValue) || strings.Contains(txt, queryCred) {
				t.Errorf("span %q records a secret: %q", s.Name(), txt)
			}
		}
	}
}

// parseTraceparent returns the trace and parent span IDs of a traceparent.
func parseTraceparent(t *testing.T, tp string) (oteltrace.TraceID, oteltrace.SpanID) {
	t.Helper()
	sc := oteltrace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp}))
	if !sc.IsValid() {
		t.Fatalf("upstream received traceparent %q, not a valid one", tp)
	}
	return sc.TraceID(), sc.SpanID()
}

func TestCallSpan(t *testing.T) {
	f := newFixture(t)
	cs := f.connectInMemory(t)
	res := call(t, cs, &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": argValue, "q": argValue}})
	if res.IsError {
		t.Fatalf("call failed: %+v", res.Content)
	}
	calls, attempts := f.spans(t)
	if len(calls) != 1 || len(attempts) != 1 {
		t.Fatalf("%d call spans and %d attempt spans, want 1 and 1", len(calls), len(attempts))
	}
	cs0, at := calls[0], attempts[0]
	if cs0.Name() != "tools/call getItem" || cs0.SpanKind() != oteltrace.SpanKindServer {
		t.Errorf("call span %q kind %v, want \"tools/call getItem\" server", cs0.Name(), cs0.SpanKind())
	}
	a := attrs(cs0)
	for key, want := range map[attribute.Key]attribute.Value{
		trace.MethodKey:    attribute.StringValue("tools/call"),
		trace.OperationKey: attribute.StringValue("execute_tool"),
		trace.ToolKey:      attribute.StringValue("getItem"),
		trace.TransportKey: attribute.StringValue("stdio"),
		trace.CallerKey:    attribute.StringValue("local"),
		trace.OutcomeKey:   attribute.StringValue("ok"),
		trace.StatusKey:    attribute.IntValue(200),
		trace.AttemptsKey:  attribute.IntValue(1),
	} {
		if got := a[key]; got != want {
			t.Errorf("%s = %v, want %v", key, got.Emit(), want.Emit())
		}
	}
	if _, ok := a[trace.ErrorTypeKey]; ok || cs0.Status().Code == codes.Error {
		t.Errorf("a successful call has error.type %v, status %v", a[trace.ErrorTypeKey].Emit(), cs0.Status())
	}
	if cs0.Parent().IsValid() {
		t.Errorf("call span has parent %v; the client sent none", cs0.Parent())
	}

	if at.Parent().SpanID() != cs0.SpanContext().SpanID() || at.SpanContext().TraceID() != cs0.SpanContext().TraceID() {
		t.Errorf("attempt span's parent is %v, want the call span %v", at.Parent().SpanID(), cs0.SpanContext().SpanID())
	}
	if at.SpanKind() != oteltrace.SpanKindClient {
		t.Errorf("attempt span kind %v, want client", at.SpanKind())
	}
	aa := attrs(at)
	if got, want := aa["url.full"].AsString(), f.up.URL; got != want {
		t.Errorf("attempt url.full = %q, want the origin %q", got, want)
	}
	if got := aa["http.response.status_code"].AsInt64(); got != 200 {
		t.Errorf("attempt http.response.status_code = %d, want 200", got)
	}
	if _, ok := aa[trace.ResendKey]; ok {
		t.Errorf("the first attempt has %s", trace.ResendKey)
	}

	parents := f.up.traceparents()
	if len(parents) != 1 {
		t.Fatalf("upstream saw %d requests, want 1", len(parents))
	}
	tid, sid := parseTraceparent(t, parents[0])
	if tid != cs0.SpanContext().TraceID() || sid != at.SpanContext().SpanID() {
		t.Errorf("upstream traceparent %s: want trace %s and parent %s (the attempt)", parents[0], cs0.SpanContext().TraceID(), at.SpanContext().SpanID())
	}
	noSecrets(t, cs0, at)
}

func TestRetriedAttempts(t *testing.T) {
	f := newFixture(t)
	res := call(t, f.connectInMemory(t), &mcp.CallToolParams{Name: "flaky"})
	if res.IsError {
		t.Fatalf("call failed: %+v", res.Content)
	}
	calls, attempts := f.spans(t)
	if len(calls) != 1 || len(attempts) != 2 {
		t.Fatalf("%d call spans and %d attempt spans, want 1 and 2", len(calls), len(attempts))
	}
	callSC := calls[0].SpanContext()
	if got := attrs(calls[0])[trace.AttemptsKey].AsInt64(); got != 2 {
		t.Errorf("%s = %d, want 2", trace.AttemptsKey, got)
	}
	wantStatus := []int64{503, 200}
	for i, at := range attempts {
		if at.Parent().SpanID() != callSC.SpanID() {
			t.Errorf("attempt %d: parent %s, want the call span %s", i, at.Parent().SpanID(), callSC.SpanID())
		}
		a := attrs(at)
		if got := a["http.response.status_code"].AsInt64(); got != wantStatus[i] {
			t.Errorf("attempt %d: status %d, want %d", i, got, wantStatus[i])
		}
		if got, want := a[trace.ResendKey].AsInt64(), int64(i); got != want {
			t.Errorf("attempt %d: %s = %d, want %d", i, trace.ResendKey, got, want)
		}
	}
	parents := f.up.traceparents()
	if len(parents) != 2 {
		t.Fatalf("upstream saw %d requests, want 2", len(parents))
	}
	for i, p := range parents {
		tid, sid := parseTraceparent(t, p)
		if tid != callSC.TraceID() || sid != attempts[i].SpanContext().SpanID() {
			t.Errorf("request %d: traceparent %s, want trace %s parent %s", i, p, callSC.TraceID(), attempts[i].SpanContext().SpanID())
		}
	}
}

func TestErrorOutcome(t *testing.T) {
	f := newFixture(t)
	res := call(t, f.connectInMemory(t), &mcp.CallToolParams{Name: "missing"})
	if !res.IsError {
		t.Fatal("a 404 is not an error result")
	}
	calls, _ := f.spans(t)
	if len(calls) != 1 {
		t.Fatalf("%d call spans, want 1", len(calls))
	}
	a := attrs(calls[0])
	if got := a[trace.OutcomeKey].AsString(); got != "upstream_4xx" {
		t.Errorf("outcome %q, want upstream_4xx", got)
	}
	if got := a[trace.ErrorTypeKey].AsString(); got != "upstream_4xx" {
		t.Errorf("error.type %q, want upstream_4xx", got)
	}
	if got := a[trace.StatusKey].AsInt64(); got != 404 {
		t.Errorf("status %d, want 404", got)
	}
	if st := calls[0].Status(); st.Code != codes.Error || st.Description != "upstream_4xx" {
		t.Errorf("status %+v, want Error upstream_4xx", st)
	}
}

func TestBadArgumentsRecordNoValue(t *testing.T) {
	f := newFixture(t)
	// id must be a string: the validation reason may quote the value.
	res := call(t, f.connectInMemory(t), &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": map[string]any{"x": argValue}}})
	if !res.IsError {
		t.Fatal("bad arguments gave no error result")
	}
	calls, attempts := f.spans(t)
	if len(calls) != 1 || len(attempts) != 0 {
		t.Fatalf("%d call spans and %d attempt spans, want 1 and 0", len(calls), len(attempts))
	}
	a := attrs(calls[0])
	if got := a[trace.OutcomeKey].AsString(); got != "bad_arguments" {
		t.Errorf("outcome %q, want bad_arguments", got)
	}
	if _, ok := a[trace.AttemptsKey]; ok {
		t.Errorf("%s set for a call that sent nothing", trace.AttemptsKey)
	}
	noSecrets(t, calls...)
}

// TestRefusedCall checks a call refused further in the chain (a limit) is a
// span with the refusal's outcome and no attempt.
func TestRefusedCall(t *testing.T) {
	busy := func(bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(context.Context, *bridge.Call) (*bridge.Outcome, error) {
			return bridge.Reject(bridge.Busy, "busy", time.Second), nil
		})
	}
	f := newFixture(t, busy)
	call(t, f.connectInMemory(t), &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": "1"}})
	calls, attempts := f.spans(t)
	if len(calls) != 1 || len(attempts) != 0 {
		t.Fatalf("%d call spans and %d attempt spans, want 1 and 0", len(calls), len(attempts))
	}
	if got := attrs(calls[0])[trace.OutcomeKey].AsString(); got != "busy" {
		t.Errorf("outcome %q, want busy", got)
	}
	if calls[0].Status().Code != codes.Error {
		t.Errorf("status %v, want Error", calls[0].Status())
	}
	if len(f.up.traceparents()) != 0 {
		t.Error("a refused call reached the upstream")
	}
}

const (
	clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan  = "00f067aa0ba902b7"
)

func TestMetaTraceparent(t *testing.T) {
	f := newFixture(t)
	call(t, f.connectInMemory(t), &mcp.CallToolParams{
		Name:      "getItem",
		Arguments: map[string]any{"id": "1"},
		Meta:      mcp.Meta{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01", "tracestate": "vendor=x"},
	})
	calls, attempts := f.spans(t)
	if len(calls) != 1 || len(attempts) != 1 {
		t.Fatalf("%d call spans and %d attempt spans, want 1 and 1", len(calls), len(attempts))
	}
	checkClientParent(t, calls[0])
	if got := calls[0].SpanContext().TraceState().Get("vendor"); got != "x" {
		t.Errorf("tracestate vendor = %q, want x", got)
	}
	tid, _ := parseTraceparent(t, f.up.traceparents()[0])
	if tid.String() != clientTrace {
		t.Errorf("upstream trace %s, want the client's %s", tid, clientTrace)
	}
}

func TestMalformedMetaTraceparent(t *testing.T) {
	f := newFixture(t)
	call(t, f.connectInMemory(t), &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": "1"}, Meta: mcp.Meta{"traceparent": "garbage"}})
	calls, _ := f.spans(t)
	if len(calls) != 1 {
		t.Fatalf("%d call spans, want 1", len(calls))
	}
	if calls[0].Parent().IsValid() {
		t.Errorf("a malformed traceparent gave the parent %v", calls[0].Parent())
	}
}

func TestHTTPHeaderTraceparent(t *testing.T) {
	f := newFixture(t)
	cs := f.connectHTTP(t, transport.HTTPOptions{APIKeys: []string{"k1"}}, http.Header{
		"Authorization": {"Bearer k1"},
		"Traceparent":   {"00-" + clientTrace + "-" + clientSpan + "-01"},
	})
	res := call(t, cs, &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": "1"}})
	if res.IsError {
		t.Fatalf("call failed: %+v", res.Content)
	}
	calls, attempts := f.spans(t)
	if len(calls) != 1 || len(attempts) != 1 {
		t.Fatalf("%d call spans and %d attempt spans, want 1 and 1", len(calls), len(attempts))
	}
	checkClientParent(t, calls[0])
	a := attrs(calls[0])
	if got := a[trace.TransportKey].AsString(); got != "http" {
		t.Errorf("transport %q, want http", got)
	}
	if got := a[trace.CallerKey].AsString(); got != "api-key:0" {
		t.Errorf("caller %q, want api-key:0", got)
	}
	if attempts[0].Parent().SpanID() != calls[0].SpanContext().SpanID() {
		t.Error("the attempt span is not the call span's child")
	}
}

// TestMetaBeatsHeader: the _meta context, set by the MCP client for this
// call, wins over the HTTP request's.
func TestMetaBeatsHeader(t *testing.T) {
	f := newFixture(t)
	cs := f.connectHTTP(t, transport.HTTPOptions{NoAuth: true}, http.Header{
		"Traceparent": {"00-11111111111111111111111111111111-2222222222222222-01"},
	})
	call(t, cs, &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": "1"}, Meta: mcp.Meta{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-01"}})
	calls, _ := f.spans(t)
	if len(calls) != 1 {
		t.Fatalf("%d call spans, want 1", len(calls))
	}
	checkClientParent(t, calls[0])
}

func checkClientParent(t *testing.T, s sdktrace.ReadOnlySpan) {
	t.Helper()
	p := s.Parent()
	if !p.IsRemote() || p.TraceID().String() != clientTrace || p.SpanID().String() != clientSpan {
		t.Errorf("call span parent %s/%s remote=%v, want the client's %s/%s", p.TraceID(), p.SpanID(), p.IsRemote(), clientTrace, clientSpan)
	}
	if s.SpanContext().TraceID().String() != clientTrace {
		t.Errorf("call span trace %s, want %s", s.SpanContext().TraceID(), clientTrace)
	}
}

// TestUnsampled: a client that says "not sampled" gets no recorded span,
// and the upstream still receives the trace context, flagged unsampled.
func TestUnsampled(t *testing.T) {
	f := newFixture(t)
	call(t, f.connectInMemory(t), &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": "1"}, Meta: mcp.Meta{"traceparent": "00-" + clientTrace + "-" + clientSpan + "-00"}})
	if n := len(f.rec.Ended()); n != 0 {
		t.Errorf("%d spans recorded for an unsampled trace", n)
	}
	parents := f.up.traceparents()
	if len(parents) != 1 || !strings.HasPrefix(parents[0], "00-"+clientTrace+"-") || !strings.HasSuffix(parents[0], "-00") {
		t.Errorf("upstream traceparents %q, want the client's trace, unsampled", parents)
	}
}

// TestOff: a nil provider adds nothing: no hook, and a middleware that is
// the next invoker itself.
func TestOff(t *testing.T) {
	if trace.Transport(nil) != nil {
		t.Error("Transport(nil) returned a hook")
	}
	var ran bool
	next := bridge.InvokerFunc(func(context.Context, *bridge.Call) (*bridge.Outcome, error) {
		ran = true
		return &bridge.Outcome{}, nil
	})
	inv := trace.Middleware(nil)(next)
	if _, err := inv.Invoke(t.Context(), &bridge.Call{Tool: "x"}); err != nil || !ran {
		t.Errorf("Middleware(nil) did not pass the call on (err %v)", err)
	}
	var p *trace.Provider
	if p.TracerProvider() != nil || p.Shutdown(t.Context()) != nil {
		t.Error("a nil *Provider is not off")
	}
}

func TestHTTPContext(t *testing.T) {
	var got oteltrace.SpanContext
	h := trace.HTTPContext(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = oteltrace.SpanContextFromContext(r.Context())
	}))
	r := httptest.NewRequest(http.MethodPost, "/api/tools/x", nil)
	r.Header.Set("traceparent", "00-"+clientTrace+"-"+clientSpan+"-01")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if got.TraceID().String() != clientTrace || got.SpanID().String() != clientSpan || !got.IsRemote() {
		t.Errorf("handler saw %v, want the client's span context", got)
	}
}

func TestNewProvider(t *testing.T) {
	for _, tt := range []struct {
		name, env, want string
	}{
		{name: "default", want: "mcpbridge"},
		{name: "OTEL_SERVICE_NAME", env: "gateway-7", want: "gateway-7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("OTEL_SERVICE_NAME", tt.env)
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
			exp := tracetest.NewInMemoryExporter()
			p, err := trace.NewProvider(t.Context(), trace.ProviderOptions{ServiceVersion: "v9", Exporter: keepSpans{exp}})
			if err != nil {
				t.Fatal(err)
			}
			_, span := p.TracerProvider().Tracer("t").Start(t.Context(), "s")
			span.End()
			if err := p.Shutdown(t.Context()); err != nil {
				t.Fatal(err)
			}
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans exported, want 1", len(spans))
			}
			res := map[attribute.Key]string{}
			for _, kv := range spans[0].Resource.Attributes() {
				res[kv.Key] = kv.Value.Emit()
			}
			if res["service.name"] != tt.want || res["service.version"] != "v9" {
				t.Errorf("resource service.name %q version %q, want %q v9", res["service.name"], res["service.version"], tt.want)
			}
		})
	}
}

// keepSpans keeps the exported spans past Shutdown (the in-memory
// exporter's own Shutdown forgets them).
type keepSpans struct{ *tracetest.InMemoryExporter }

func (keepSpans) Shutdown(context.Context) error { return nil }

// TestProviderExportsOTLP runs the default exporter against a collector on
// httptest: a traced call arrives as one OTLP/HTTP protobuf request at
// /v1/traces, with the configured headers, the resource, the scopes, and
// the attempt span the call span's child.
func TestProviderExportsOTLP(t *testing.T) {
	col := newCollector(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL+"/")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20tok+en/x==, X-Tenant = t1")
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	p, err := trace.NewProvider(t.Context(), trace.ProviderOptions{ServiceVersion: "v9"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixtureWith(t, p.TracerProvider())
	res := call(t, f.connectInMemory(t), &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": argValue}})
	if res.IsError {
		t.Fatalf("call failed: %+v", res.Content)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	reqs := col.received()
	if len(reqs) != 1 {
		t.Fatalf("collector got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.method != http.MethodPost || r.path != "/v1/traces" || r.header.Get("Content-Type") != "application/x-protobuf" {
		t.Errorf("collector got %s %s %s, want POST /v1/traces application/x-protobuf", r.method, r.path, r.header.Get("Content-Type"))
	}
	if got := r.header.Get("Authorization"); got != "Bearer tok+en/x==" {
		t.Errorf("Authorization %q, want the URL-decoded value with its + kept", got)
	}
	if got := r.header.Get("X-Tenant"); got != "t1" {
		t.Errorf("X-Tenant %q, want t1", got)
	}
	if len(r.data.ResourceSpans) != 1 {
		t.Fatalf("%d resource spans, want 1", len(r.data.ResourceSpans))
	}
	rs := r.data.ResourceSpans[0]
	resAttrs := kvs(rs.GetResource().GetAttributes())
	if resAttrs["service.name"] != "mcpbridge" || resAttrs["service.version"] != "v9" || resAttrs["telemetry.sdk.language"] != "go" {
		t.Errorf("resource %v, want service.name mcpbridge, service.version v9 and the SDK's attributes", resAttrs)
	}
	byScope := map[string][]*tracepb.Span{}
	for _, ss := range rs.ScopeSpans {
		byScope[ss.GetScope().GetName()] = append(byScope[ss.GetScope().GetName()], ss.Spans...)
	}
	calls := byScope[trace.ScopeName]
	if len(calls) != 1 || len(byScope) != 2 {
		t.Fatalf("spans by scope %v, want one call span in %s and one attempt span in otelhttp's", byScope, trace.ScopeName)
	}
	var attempt *tracepb.Span
	for name, spans := range byScope {
		if name != trace.ScopeName && len(spans) == 1 {
			attempt = spans[0]
		}
	}
	if attempt == nil {
		t.Fatalf("no single attempt span in %v", byScope)
	}
	cs := calls[0]
	if cs.Name != "tools/call getItem" || cs.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("call span %q kind %v, want \"tools/call getItem\" server", cs.Name, cs.Kind)
	}
	a := kvs(cs.Attributes)
	for key, want := range map[attribute.Key]any{
		trace.MethodKey:    "tools/call",
		trace.ToolKey:      "getItem",
		trace.TransportKey: "stdio",
		trace.OutcomeKey:   "ok",
		trace.StatusKey:    int64(200),
		trace.AttemptsKey:  int64(1),
	} {
		if got := a[string(key)]; got != want {
			t.Errorf("call span %s = %#v, want %#v", key, got, want)
		}
	}
	if len(cs.ParentSpanId) != 0 || len(cs.TraceId) != 16 || len(cs.SpanId) != 8 {
		t.Errorf("call span trace %x span %x parent %x: want a root span", cs.TraceId, cs.SpanId, cs.ParentSpanId)
	}
	if !bytes.Equal(attempt.ParentSpanId, cs.SpanId) || !bytes.Equal(attempt.TraceId, cs.TraceId) || attempt.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("attempt span trace %x parent %x kind %v, want trace %x parent %x client", attempt.TraceId, attempt.ParentSpanId, attempt.Kind, cs.TraceId, cs.SpanId)
	}
	if cs.StartTimeUnixNano == 0 || cs.EndTimeUnixNano < cs.StartTimeUnixNano || attempt.StartTimeUnixNano < cs.StartTimeUnixNano {
		t.Errorf("times: call %d-%d attempt %d", cs.StartTimeUnixNano, cs.EndTimeUnixNano, attempt.StartTimeUnixNano)
	}
	if cs.Flags != 0x101 { // sampled, parent known not remote
		t.Errorf("call span flags %#x, want 0x101", cs.Flags)
	}
	if bytes.Contains(r.raw, []byte(argValue)) || bytes.Contains(r.raw, []byte(queryCred)) {
		t.Error("the export carries an argument value or the query credential")
	}
}
