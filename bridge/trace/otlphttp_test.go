package trace_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/pem"
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
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/mcpbridge/mcpbridge/bridge/trace"
)

// otlpRequest is one request a collector received, its body decompressed
// and decoded. TracesData has the wire form of ExportTraceServiceRequest
// (resource_spans = 1) without the collector package, which would bring
// gRPC into the tests.
type otlpRequest struct {
	method, path string
	header       http.Header
	raw          []byte
	data         *tracepb.TracesData
}

// collector is a fake OTLP/HTTP collector. answer, when set, answers
// request n (from 1) and reports whether it did; otherwise 200, empty.
type collector struct {
	*httptest.Server
	answer func(n int, w http.ResponseWriter, r *http.Request) bool

	mu   sync.Mutex
	reqs []otlpRequest
}

func newCollector(t *testing.T) *collector { return startCollector(t, false) }

func startCollector(t *testing.T, tls bool) *collector {
	t.Helper()
	c := &collector{}
	c.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Errorf("collector: %v", err)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			t.Errorf("collector: %v", err)
			return
		}
		data := &tracepb.TracesData{}
		if err := proto.Unmarshal(raw, data); err != nil {
			t.Errorf("collector: the body is not an OTLP trace request: %v", err)
		}
		c.mu.Lock()
		c.reqs = append(c.reqs, otlpRequest{r.Method, r.URL.Path, r.Header.Clone(), raw, data})
		n := len(c.reqs)
		c.mu.Unlock()
		if c.answer != nil && c.answer(n, w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	if tls {
		c.StartTLS()
	} else {
		c.Start()
	}
	t.Cleanup(c.Close)
	return c
}

func (c *collector) received() []otlpRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]otlpRequest(nil), c.reqs...)
}

// kvs turns OTLP attributes into Go values: string, bool, int64, float64,
// []byte, []any for an array and map[string]any for a key-value list.
func kvs(list []*commonpb.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range list {
		m[kv.Key] = anyValue(kv.Value)
	}
	return m
}

func anyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BytesValue:
		return x.BytesValue
	case *commonpb.AnyValue_ArrayValue:
		out := []any{}
		for _, e := range x.ArrayValue.Values {
			out = append(out, anyValue(e))
		}
		return out
	case *commonpb.AnyValue_KvlistValue:
		return kvs(x.KvlistValue.Values)
	}
	return nil
}

// setOTLPEnv points the exporter at col and clears the other variables
// it reads.
func setOTLPEnv(t *testing.T, endpoint string) {
	t.Helper()
	for _, s := range []string{"ENDPOINT", "HEADERS", "TIMEOUT", "COMPRESSION", "CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"} {
		t.Setenv("OTEL_EXPORTER_OTLP_"+s, "")
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_"+s, "")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
}

func newExporter(t *testing.T) sdktrace.SpanExporter {
	t.Helper()
	exp, err := trace.NewOTLPExporter(time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp
}

var (
	tid1    = oteltrace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	sid1    = oteltrace.SpanID{1, 1, 1, 1, 1, 1, 1, 1}
	sid2    = oteltrace.SpanID{2, 2, 2, 2, 2, 2, 2, 2}
	sidLink = oteltrace.SpanID{9, 9, 9, 9, 9, 9, 9, 9}
	t0      = time.Unix(1_700_000_000, 123456789)
)

func stubSpan(name string, sid oteltrace.SpanID, res *resource.Resource, scope string) tracetest.SpanStub {
	return tracetest.SpanStub{
		Name:                 name,
		SpanContext:          oteltrace.NewSpanContext(oteltrace.SpanContextConfig{TraceID: tid1, SpanID: sid, TraceFlags: oteltrace.FlagsSampled}),
		StartTime:            t0,
		EndTime:              t0.Add(time.Second),
		Resource:             res,
		InstrumentationScope: instrumentation.Scope{Name: scope, Version: "1.2"},
	}
}

// TestOTLPEncoding checks every field the exporter writes decodes, with
// the generated types, to what the span held.
func TestOTLPEncoding(t *testing.T) {
	col := newCollector(t)
	setOTLPEnv(t, col.URL)
	exp := newExporter(t)

	resA := resource.NewSchemaless(attribute.String("service.name", "a"))
	resB := resource.NewSchemaless(attribute.String("service.name", "b"))
	long300, long20k := strings.Repeat("x", 300), strings.Repeat("y", 20000)
	ts, _ := oteltrace.ParseTraceState("vendor=v1")
	remote := oteltrace.NewSpanContext(oteltrace.SpanContextConfig{TraceID: tid1, SpanID: sidLink, TraceFlags: oteltrace.FlagsSampled, TraceState: ts, Remote: true})

	root := stubSpan("root", sid1, resA, "s1")
	root.SpanKind = oteltrace.SpanKindServer
	root.Parent = remote
	root.Attributes = []attribute.KeyValue{
		attribute.String("s", "v"),
		attribute.String("empty", ""),
		attribute.Bool("f", false),
		attribute.Int64("i", -42),
		attribute.Int64("zero", 0),
		attribute.Float64("d", 2.5),
		attribute.BoolSlice("bs", []bool{true, false}),
		attribute.Int64Slice("is", []int64{1, 1 << 40}),
		attribute.Float64Slice("ds", []float64{0.5}),
		attribute.StringSlice("ss", []string{"a", long300}),
		attribute.String("long", long20k),
	}
	root.Events = []sdktrace.Event{{Name: "ev", Time: t0.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.Int("n", 7)}, DroppedAttributeCount: 1}}
	root.Links = []sdktrace.Link{{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.String("why", "batch")}}}
	root.Status = sdktrace.Status{Code: codes.Error, Description: "boom"}
	root.DroppedAttributes, root.DroppedEvents, root.DroppedLinks = 3, 4, 5

	child := stubSpan("child", sid2, resA, "s1")
	child.Parent = root.SpanContext
	child.SpanKind = oteltrace.SpanKindClient
	child.Status = sdktrace.Status{Code: codes.Ok}
	other := stubSpan("other-scope", sid2, resA, "s2")
	otherRes := stubSpan("other-resource", sid2, resB, "s1")

	spans := tracetest.SpanStubs{root, child, other, otherRes}.Snapshots()
	if err := exp.ExportSpans(t.Context(), spans); err != nil {
		t.Fatal(err)
	}
	reqs := col.received()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	d := reqs[0].data

	// Grouping: resource a with scopes s1 (root, child) and s2; resource b.
	type group struct {
		Service string
		Scopes  map[string][]string
	}
	var groups []group
	for _, rs := range d.ResourceSpans {
		g := group{Service: kvs(rs.Resource.Attributes)["service.name"].(string), Scopes: map[string][]string{}}
		for _, ss := range rs.ScopeSpans {
			if ss.Scope.Version != "1.2" {
				t.Errorf("scope %s version %q, want 1.2", ss.Scope.Name, ss.Scope.Version)
			}
			for _, s := range ss.Spans {
				g.Scopes[ss.Scope.Name] = append(g.Scopes[ss.Scope.Name], s.Name)
			}
		}
		groups = append(groups, g)
	}
	want := []group{
		{"a", map[string][]string{"s1": {"root", "child"}, "s2": {"other-scope"}}},
		{"b", map[string][]string{"s1": {"other-resource"}}},
	}
	if diff := cmp.Diff(want, groups); diff != "" {
		t.Errorf("grouping (-want +got):\n%s", diff)
	}

	s1 := d.ResourceSpans[0].ScopeSpans[0].Spans
	r, c := s1[0], s1[1]
	if !bytes.Equal(r.TraceId, tid1[:]) || !bytes.Equal(r.SpanId, sid1[:]) || !bytes.Equal(r.ParentSpanId, sidLink[:]) {
		t.Errorf("root ids %x/%x parent %x", r.TraceId, r.SpanId, r.ParentSpanId)
	}
	if !bytes.Equal(c.ParentSpanId, sid1[:]) || !bytes.Equal(c.TraceId, tid1[:]) {
		t.Errorf("child parent %x trace %x, want the root %x", c.ParentSpanId, c.TraceId, sid1)
	}
	if r.Kind != tracepb.Span_SPAN_KIND_SERVER || c.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("kinds %v %v", r.Kind, c.Kind)
	}
	if r.StartTimeUnixNano != uint64(t0.UnixNano()) || r.EndTimeUnixNano != uint64(t0.Add(time.Second).UnixNano()) {
		t.Errorf("root times %d %d", r.StartTimeUnixNano, r.EndTimeUnixNano)
	}
	if r.Flags != 0x301 || c.Flags != 0x101 {
		t.Errorf("flags root %#x child %#x, want 0x301 (remote parent) and 0x101", r.Flags, c.Flags)
	}
	if r.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || r.Status.GetMessage() != "boom" || c.Status.GetCode() != tracepb.Status_STATUS_CODE_OK {
		t.Errorf("status root %v child %v", r.Status, c.Status)
	}
	if r.DroppedAttributesCount != 3 || r.DroppedEventsCount != 4 || r.DroppedLinksCount != 5 {
		t.Errorf("dropped %d %d %d", r.DroppedAttributesCount, r.DroppedEventsCount, r.DroppedLinksCount)
	}
	wantAttrs := map[string]any{
		"s": "v", "empty": "", "f": false, "i": int64(-42), "zero": int64(0), "d": 2.5,
		"bs": []any{true, false}, "is": []any{int64(1), int64(1 << 40)}, "ds": []any{0.5},
		"ss": []any{"a", long300}, "long": long20k,
	}
	if diff := cmp.Diff(wantAttrs, kvs(r.Attributes)); diff != "" {
		t.Errorf("attributes (-want +got):\n%s", diff)
	}
	if len(r.Events) != 1 || r.Events[0].Name != "ev" || r.Events[0].TimeUnixNano != uint64(t0.Add(time.Millisecond).UnixNano()) ||
		kvs(r.Events[0].Attributes)["n"] != int64(7) || r.Events[0].DroppedAttributesCount != 1 {
		t.Errorf("events %v", r.Events)
	}
	if len(r.Links) != 1 || !bytes.Equal(r.Links[0].SpanId, sidLink[:]) || r.Links[0].TraceState != "vendor=v1" ||
		kvs(r.Links[0].Attributes)["why"] != "batch" || r.Links[0].Flags != 0x301 {
		t.Errorf("links %v", r.Links)
	}
}

// TestOTLPRetry: a 503 is retried after the collector's Retry-After, the
// body compressed as asked, at the traces endpoint used as is, with the
// traces headers replacing the general ones.
func TestOTLPRetry(t *testing.T) {
	col := newCollector(t)
	col.answer = func(n int, w http.ResponseWriter, _ *http.Request) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}
	setOTLPEnv(t, "http://unused.invalid")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", col.URL+"/custom/path")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "X-General=g")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X-Traces=t%2C1")
	// The provider's real backoff, with Retry-After 0: no wait to speak of.
	p, err := trace.NewProvider(t.Context(), trace.ProviderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, span := p.TracerProvider().Tracer("t").Start(t.Context(), "retried")
	span.End()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := p.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := col.received()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (503, then 200)", len(reqs))
	}
	for i, r := range reqs {
		if r.path != "/custom/path" || r.header.Get("Content-Encoding") != "gzip" {
			t.Errorf("request %d: %s, Content-Encoding %q; want /custom/path, gzip", i, r.path, r.header.Get("Content-Encoding"))
		}
		if r.header.Get("X-Traces") != "t,1" || r.header.Get("X-General") != "" {
			t.Errorf("request %d: X-Traces %q X-General %q, want t,1 and none", i, r.header.Get("X-Traces"), r.header.Get("X-General"))
		}
		if got := r.data.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0].GetName(); got != "retried" {
			t.Errorf("request %d: span %q", i, got)
		}
	}
	if !bytes.Equal(reqs[0].raw, reqs[1].raw) {
		t.Error("the retry sent another body")
	}
}

func TestOTLPRetryBounded(t *testing.T) {
	spans := tracetest.SpanStubs{stubSpan("s", sid1, resource.Empty(), "t")}.Snapshots()

	t.Run("attempts", func(t *testing.T) {
		col := newCollector(t)
		col.answer = func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			w.WriteHeader(http.StatusBadGateway)
			return true
		}
		setOTLPEnv(t, col.URL)
		err := newExporter(t).ExportSpans(t.Context(), spans)
		if err == nil || !strings.Contains(err.Error(), "502") || !strings.Contains(err.Error(), "gave up after 5 attempts") {
			t.Errorf("error %v, want a 502 given up after 5 attempts", err)
		}
		if n := len(col.received()); n != 5 {
			t.Errorf("%d requests, want 5", n)
		}
	})
	t.Run("Retry-After past the timeout", func(t *testing.T) {
		col := newCollector(t)
		col.answer = func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			w.Header().Set("Retry-After", "60")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		setOTLPEnv(t, col.URL)
		t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2000")
		start := time.Now()
		err := newExporter(t).ExportSpans(t.Context(), spans)
		if err == nil || !strings.Contains(err.Error(), "429") || !strings.Contains(err.Error(), "past the export timeout") {
			t.Errorf("error %v, want a 429 whose retry is past the timeout", err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("took %v: it waited for a retry it could not make", took)
		}
		if n := len(col.received()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("no collector", func(t *testing.T) {
		col := newCollector(t)
		setOTLPEnv(t, col.URL)
		col.Close()
		err := newExporter(t).ExportSpans(t.Context(), spans)
		if err == nil || !strings.Contains(err.Error(), "gave up after 5 attempts") {
			t.Errorf("error %v, want a refused connection given up after 5 attempts", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		col := newCollector(t)
		col.answer = func(_ int, _ http.ResponseWriter, r *http.Request) bool {
			<-r.Context().Done()
			return true
		}
		setOTLPEnv(t, col.URL)
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "100")
		start := time.Now()
		if err := newExporter(t).ExportSpans(t.Context(), spans); err == nil {
			t.Error("a collector that never answers gave no error")
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("took %v, want about the 100 ms timeout", took)
		}
	})
}

// TestOTLPFailure: a refusal is not retried, and its error quotes the
// collector's reason with the configured header values blanked out.
func TestOTLPFailure(t *testing.T) {
	const key = "sk-live-5ecret"
	col := newCollector(t)
	col.answer = func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		st := protowire.AppendTag(nil, 1, protowire.VarintType)
		st = protowire.AppendVarint(st, 16)
		st = protowire.AppendTag(st, 2, protowire.BytesType)
		st = protowire.AppendString(st, "bad api key Bearer "+key)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(st)
		return true
	}
	setOTLPEnv(t, col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer%20"+key)
	err := newExporter(t).ExportSpans(t.Context(), tracetest.SpanStubs{stubSpan("s", sid1, resource.Empty(), "t")}.Snapshots())
	if err == nil {
		t.Fatal("a 401 gave no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, "401") || !strings.Contains(msg, "bad api key [REDACTED]") || strings.Contains(msg, key) {
		t.Errorf("error %q: want the 401, the reason, and no key", msg)
	}
	if n := len(col.received()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestOTLPPartialSuccess(t *testing.T) {
	col := newCollector(t)
	col.answer = func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		ps := protowire.AppendTag(nil, 1, protowire.VarintType)
		ps = protowire.AppendVarint(ps, 2)
		ps = protowire.AppendTag(ps, 2, protowire.BytesType)
		ps = protowire.AppendString(ps, "too old")
		resp := protowire.AppendTag(nil, 1, protowire.BytesType)
		resp = protowire.AppendBytes(resp, ps)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(resp)
		return true
	}
	setOTLPEnv(t, col.URL)
	err := newExporter(t).ExportSpans(t.Context(), tracetest.SpanStubs{stubSpan("s", sid1, resource.Empty(), "t")}.Snapshots())
	if err == nil || !strings.Contains(err.Error(), "rejected 2 spans: too old") {
		t.Errorf("error %v, want the partial success reported", err)
	}
}

func TestOTLPShutdown(t *testing.T) {
	started := make(chan struct{})
	col := newCollector(t)
	col.answer = func(_ int, _ http.ResponseWriter, r *http.Request) bool {
		close(started)
		<-r.Context().Done()
		return true
	}
	setOTLPEnv(t, col.URL)
	exp := newExporter(t)
	spans := tracetest.SpanStubs{stubSpan("s", sid1, resource.Empty(), "t")}.Snapshots()
	done := make(chan error, 1)
	go func() { done <- exp.ExportSpans(t.Context(), spans) }()
	<-started
	if err := exp.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("an export cut short by Shutdown reported success")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Shutdown did not cancel the export under way")
	}
	if err := exp.ExportSpans(t.Context(), spans); err == nil {
		t.Error("an export after Shutdown reported success")
	}
	if err := exp.Shutdown(t.Context()); err != nil {
		t.Errorf("a second Shutdown: %v", err)
	}
}

// TestOTLPConfigErrors: a variable that does not parse fails NewProvider,
// naming the variable and never quoting a header value.
func TestOTLPConfigErrors(t *testing.T) {
	const secret = "s3cr3t-value"
	for _, tt := range []struct {
		name, env, value, want string
	}{
		{"endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://collector", "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{"traces endpoint", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "collector:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{"header without =", "OTEL_EXPORTER_OTLP_HEADERS", "a=1,Authorization " + secret, "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value"},
		{"header bad escape", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "Authorization=" + secret + "%zz", "OTEL_EXPORTER_OTLP_TRACES_HEADERS: entry 1: bad percent-encoding"},
		{"header bad name", "OTEL_EXPORTER_OTLP_HEADERS", "bad name=" + secret, "is not a header name"},
		{"header line break", "OTEL_EXPORTER_OTLP_HEADERS", "X-Key=" + secret + "%0D%0AX-Evil: 1", "header X-Key: the value holds a line break"},
		{"timeout", "OTEL_EXPORTER_OTLP_TIMEOUT", "10s", "OTEL_EXPORTER_OTLP_TIMEOUT: want milliseconds"},
		{"compression", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "zstd", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION: want gzip or none"},
		{"client key alone", "OTEL_EXPORTER_OTLP_CLIENT_KEY", "/nonexistent", "go together"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setOTLPEnv(t, "")
			t.Setenv(tt.env, tt.value)
			_, err := trace.NewProvider(t.Context(), trace.ProviderOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q quotes a header value", err)
			}
		})
	}
}

// TestOTLPCertificate: an https collector is trusted through
// OTEL_EXPORTER_OTLP_CERTIFICATE; without it the export fails at once, a
// certificate refusal not being worth a retry.
func TestOTLPCertificate(t *testing.T) {
	col := startCollector(t, true)
	spans := tracetest.SpanStubs{stubSpan("s", sid1, resource.Empty(), "t")}.Snapshots()

	setOTLPEnv(t, col.URL)
	start := time.Now()
	err := newExporter(t).ExportSpans(t.Context(), spans)
	if err == nil || !strings.Contains(err.Error(), "certificate") || strings.Contains(err.Error(), "attempts") {
		t.Errorf("error %v, want a certificate refusal, not retried", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("took %v", took)
	}

	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: col.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", ca)
	if err := newExporter(t).ExportSpans(t.Context(), spans); err != nil {
		t.Fatal(err)
	}
	if n := len(col.received()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"soon":                          0,
		"0":                             time.Millisecond,
		"3":                             3 * time.Second,
		"99999999999":                   time.Hour,
		"Fri, 02 Jan 2026 03:04:15 GMT": 10 * time.Second,
		"Fri, 02 Jan 2026 03:00:00 GMT": time.Millisecond,
	} {
		if got := trace.RetryAfter(v, now); got != want {
			t.Errorf("Retry-After %q: %v, want %v", v, got, want)
		}
	}
}

// TestOTLPConnectionErrorHidesQuery: a collector that cannot be reached
// is named without the endpoint's query (which may hold a token), as the
// other failures name it.
func TestOTLPConnectionErrorHidesQuery(t *testing.T) {
	const token = "Zq83kdLmPq02xTok"
	setOTLPEnv(t, "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:1/v1/traces?dd="+token)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "300")
	err := newExporter(t).ExportSpans(t.Context(), tracetest.SpanStubs{stubSpan("s", sid1, resource.Empty(), "t")}.Snapshots())
	if err == nil {
		t.Fatal("no error from an unreachable collector")
	}
	if msg := err.Error(); strings.Contains(msg, token) || !strings.Contains(msg, "127.0.0.1:1") {
		t.Errorf("error %q: want the endpoint without its query", msg)
	}
}

// TestOTLPRedirectElsewhere: a collector endpoint that redirects to
// another origin (a misrouted load balancer, a hijacked name) must not
// receive the spans with the OTLP headers, which carry the vendor's API
// key, nor the endpoint's query in a Referer. A redirect within the
// endpoint's origin is still followed.
func TestOTLPRedirectElsewhere(t *testing.T) {
	spans := tracetest.SpanStubs{stubSpan("s", sid1, resource.Empty(), "t")}.Snapshots()
	other := newCollector(t)
	// The same server under another host name: another origin.
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/v1/traces"
	col := newCollector(t)
	col.answer = func(_ int, w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/moved" {
			return false
		}
		to := elsewhere
		if r.URL.Path == "/same" {
			to = "/moved"
		}
		w.Header().Set("Location", to)
		w.WriteHeader(http.StatusTemporaryRedirect)
		return true
	}
	setOTLPEnv(t, "http://unused.invalid")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "X-Api-Key=collector-key-123")

	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", col.URL+"/v1/traces?api_key=query-key-456")
	err := newExporter(t).ExportSpans(t.Context(), spans)
	if n := len(other.received()); n != 0 {
		t.Fatalf("the other origin received %d exports (headers %v), want none", n, other.received()[0].header)
	}
	if err == nil || !strings.Contains(err.Error(), "307") || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("error %v, want the 307 named as a redirect to another origin", err)
	}
	if err != nil && (strings.Contains(err.Error(), "query-key-456") || strings.Contains(err.Error(), "collector-key-123")) {
		t.Errorf("error %v quotes a credential", err)
	}

	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", col.URL+"/same?api_key=query-key-456")
	if err := newExporter(t).ExportSpans(t.Context(), spans); err != nil {
		t.Fatalf("a redirect within the origin: %v", err)
	}
	var moved []otlpRequest
	for _, r := range col.received() {
		if r.path == "/moved" {
			moved = append(moved, r)
		}
	}
	if len(moved) != 1 || moved[0].header.Get("X-Api-Key") != "collector-key-123" {
		t.Fatalf("%d exports reached /moved (%v), want 1 with its header", len(moved), moved)
	}
	if ref := moved[0].header.Get("Referer"); ref != "" {
		t.Errorf("the redirected export carried Referer %q", ref)
	}
}

// TestOTLPFailureEndpointCredentials: a collector (or the gateway before
// it) that echoes the credentials the endpoint URL carries, its query's
// key or its userinfo password, does not have them quoted in the error
// that the log prints: they are blanked like the header values.
func TestOTLPFailureEndpointCredentials(t *testing.T) {
	const queryKey, password = "q9Key4Collector", "pw7Secret2Basic"
	col := newCollector(t)
	col.answer = func(_ int, w http.ResponseWriter, r *http.Request) bool {
		user, pass, _ := r.BasicAuth()
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "key %s is not valid for %s:%s", r.URL.Query().Get("api_key"), user, pass)
		return true
	}
	setOTLPEnv(t, "http://unused.invalid")
	u, _ := url.Parse(col.URL + "/v1/traces?region=eu&api_key=" + queryKey)
	u.User = url.UserPassword("tenant", password)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", u.String())
	err := newExporter(t).ExportSpans(t.Context(), tracetest.SpanStubs{stubSpan("s", sid1, resource.Empty(), "t")}.Snapshots())
	if err == nil {
		t.Fatal("a 403 gave no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, "403") || !strings.Contains(msg, "key [REDACTED] is not valid for tenant:[REDACTED]") {
		t.Errorf("error %q: want the 403 and the reason with both credentials blanked", msg)
	}
	if strings.Contains(msg, queryKey) || strings.Contains(msg, password) {
		t.Errorf("error %q quotes a credential of the endpoint URL", msg)
	}
}

// TestOTLPFailureEndpointCredentialsEscaped: a collector that echoes its
// request URL quotes the endpoint's query key escaped, as the request
// line had it; that form is blanked too (only the decoded value was).
func TestOTLPFailureEndpointCredentialsEscaped(t *testing.T) {
	const queryKey = "ab+cd/ef=gh"
	col := newCollector(t)
	col.answer = func(_ int, w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "denied: %s", r.URL.RawQuery)
		return true
	}
	setOTLPEnv(t, "http://unused.invalid")
	u, _ := url.Parse(col.URL + "/v1/traces")
	u.RawQuery = url.Values{"api_key": {queryKey}}.Encode()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", u.String())
	err := newExporter(t).ExportSpans(t.Context(), tracetest.SpanStubs{stubSpan("s", sid1, resource.Empty(), "t")}.Snapshots())
	if err == nil {
		t.Fatal("a 403 gave no error")
	}
	msg := err.Error()
	if esc := url.QueryEscape(queryKey); strings.Contains(msg, esc) || !strings.Contains(msg, "api_key=[REDACTED]") {
		t.Errorf("error %q: want the escaped query key (%s) blanked", msg, esc)
	}
}
