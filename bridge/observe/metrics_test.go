package observe_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/observe"
)

func newMetrics(t *testing.T) (*prometheus.Registry, *observe.Metrics) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m, err := observe.NewMetrics(reg, "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	return reg, m
}

// TestMetricsMiddleware drives one call of each kind through a runtime and
// compares the counters, then checks which calls the histograms observed.
func TestMetricsMiddleware(t *testing.T) {
	reg, m := newMetrics(t)
	rt := newRuntime(t, m.Middleware())
	calls := []struct {
		c    *bridge.Call
		want bridge.ErrorKind
	}{
		{&bridge.Call{Tool: "getItem", Args: args(t, map[string]any{"id": "a1"})}, bridge.OK},
		{&bridge.Call{Tool: "getItem", Args: args(t, map[string]any{"id": "a1", "color": "red"})}, bridge.OK},
		{&bridge.Call{Tool: "getItem", Args: args(t, map[string]any{"id": 7})}, bridge.BadArguments},
		{&bridge.Call{Tool: "flaky"}, bridge.OK},
		{&bridge.Call{Tool: "missing"}, bridge.Upstream4xx},
		{&bridge.Call{Tool: "ping"}, bridge.OK},
	}
	for _, tc := range calls {
		if out := call(t, rt, tc.c); out.Kind != tc.want {
			t.Fatalf("Call(%s %s) = %s (%s), want %s", tc.c.Tool, tc.c.Args, out.Kind, out.Detail, tc.want)
		}
	}
	if _, err := rt.Call(t.Context(), &bridge.Call{Tool: "nope"}); err == nil {
		t.Fatal("Call(nope) succeeded")
	}
	m.SetTools(rt.Catalog().Len())
	m.Reload(observe.ReloadOK)
	m.Reload(observe.ReloadUnchanged)
	m.Reload(observe.ReloadUnchanged)
	m.Reload("exploded") // counted as failed
	m.AddRedactions(3)
	m.AddRedactions(-1)
	m.QuotaUnenforced()
	m.QuotaUnenforced()

	// The 404 body is text/plain "no such thing\n" (14 bytes); flaky's
	// second attempt answers {"ok":true} (11 bytes).
	want := `
# HELP mcpbridge_tool_calls_total Tool calls by tool and outcome (ok or the error kind).
# TYPE mcpbridge_tool_calls_total counter
mcpbridge_tool_calls_total{outcome="bad_arguments",tool="getItem"} 1
mcpbridge_tool_calls_total{outcome="ok",tool="flaky"} 1
mcpbridge_tool_calls_total{outcome="ok",tool="getItem"} 2
mcpbridge_tool_calls_total{outcome="ok",tool="ping"} 1
mcpbridge_tool_calls_total{outcome="upstream_4xx",tool="missing"} 1
# HELP mcpbridge_upstream_retries_total Upstream requests sent after the first attempt of a call.
# TYPE mcpbridge_upstream_retries_total counter
mcpbridge_upstream_retries_total{tool="flaky"} 1
mcpbridge_upstream_retries_total{tool="getItem"} 0
mcpbridge_upstream_retries_total{tool="missing"} 0
mcpbridge_upstream_retries_total{tool="ping"} 0
# HELP mcpbridge_response_bytes_total Bytes of upstream response bodies.
# TYPE mcpbridge_response_bytes_total counter
mcpbridge_response_bytes_total{tool="flaky"} 11
mcpbridge_response_bytes_total{tool="getItem"} 54
mcpbridge_response_bytes_total{tool="missing"} 14
mcpbridge_response_bytes_total{tool="ping"} 0
# HELP mcpbridge_inflight_calls Tool calls in progress (waiting for a concurrency slot included when the limit runs inside this middleware).
# TYPE mcpbridge_inflight_calls gauge
mcpbridge_inflight_calls 0
# HELP mcpbridge_redactions_total Values replaced by the redactor.
# TYPE mcpbridge_redactions_total counter
mcpbridge_redactions_total 3
# HELP mcpbridge_quota_unenforced_calls_total Tool calls let through uncounted because the quota store failed (quota-fail open).
# TYPE mcpbridge_quota_unenforced_calls_total counter
mcpbridge_quota_unenforced_calls_total 2
# HELP mcpbridge_spec_reloads_total Spec reload attempts by result (ok, unchanged, failed).
# TYPE mcpbridge_spec_reloads_total counter
mcpbridge_spec_reloads_total{result="failed"} 1
mcpbridge_spec_reloads_total{result="ok"} 1
mcpbridge_spec_reloads_total{result="unchanged"} 2
# HELP mcpbridge_tools Operation tools in the served catalog (ping not counted).
# TYPE mcpbridge_tools gauge
mcpbridge_tools 4
# HELP mcpbridge_build_info Build information; the value is always 1.
# TYPE mcpbridge_build_info gauge
mcpbridge_build_info{version="1.2.3"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"mcpbridge_tool_calls_total", "mcpbridge_upstream_retries_total", "mcpbridge_response_bytes_total",
		"mcpbridge_inflight_calls", "mcpbridge_redactions_total", "mcpbridge_quota_unenforced_calls_total", "mcpbridge_spec_reloads_total",
		"mcpbridge_tools", "mcpbridge_build_info"); err != nil {
		t.Error(err)
	}

	// Every call is timed; only calls that sent a request are timed
	// upstream (not ping, not the bad arguments).
	wantCounts := map[string]map[string]uint64{
		"mcpbridge_tool_call_duration_seconds":        {"getItem": 3, "flaky": 1, "missing": 1, "ping": 1},
		"mcpbridge_upstream_request_duration_seconds": {"getItem": 2, "flaky": 1, "missing": 1},
	}
	if diff := cmp.Diff(wantCounts, histogramCounts(t, reg)); diff != "" {
		t.Errorf("histogram sample counts mismatch (-want +got):\n%s", diff)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("GatherAndLint: %v %+v", err, problems)
	}
}

// histogramCounts maps each mcpbridge histogram to its sample count per
// tool.
func histogramCounts(t *testing.T, g prometheus.Gatherer) map[string]map[string]uint64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]uint64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "mcpbridge_") || mf.GetType().String() != "HISTOGRAM" {
			continue
		}
		out[mf.GetName()] = map[string]uint64{}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "tool" {
					out[mf.GetName()][l.GetValue()] = m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return out
}

// TestMetricsHandler scrapes the handler over HTTP: exactly the bridge's
// metric names, plus the Go and process collectors.
func TestMetricsHandler(t *testing.T) {
	_, m := newMetrics(t)
	rt := newRuntime(t, m.Middleware())
	call(t, rt, &bridge.Call{Tool: "getItem", Args: args(t, map[string]any{"id": "a1"})})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s\n%s", resp.Status, body)
	}
	var names []string
	for line := range strings.Lines(string(body)) {
		if name, ok := strings.CutPrefix(line, "# TYPE mcpbridge_"); ok {
			names = append(names, "mcpbridge_"+strings.Fields(name)[0])
		}
	}
	slices.Sort(names)
	want := []string{
		"mcpbridge_build_info",
		"mcpbridge_inflight_calls",
		"mcpbridge_quota_unenforced_calls_total",
		"mcpbridge_redactions_total",
		"mcpbridge_response_bytes_total",
		"mcpbridge_spec_last_reload_success_timestamp_seconds",
		"mcpbridge_spec_last_reload_successful",
		"mcpbridge_spec_reloads_total",
		"mcpbridge_tool_call_duration_seconds",
		"mcpbridge_tool_calls_total",
		"mcpbridge_tools",
		"mcpbridge_upstream_request_duration_seconds",
		"mcpbridge_upstream_retries_total",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("metric names mismatch (-want +got):\n%s", diff)
	}
	for _, s := range []string{
		`mcpbridge_build_info{version="1.2.3"} 1`,
		`mcpbridge_tool_calls_total{outcome="ok",tool="getItem"} 1`,
		"\ngo_goroutines ",
		"\nprocess_cpu_seconds_total ",
	} {
		if !strings.Contains(string(body), s) {
			t.Errorf("scrape lacks %q", s)
		}
	}
}

// TestMetricsToolLabelCap checks that tool names past the cap fold into
// "other".
func TestMetricsToolLabelCap(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := observe.NewMetricsCap(reg, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, m.Middleware())
	for _, c := range []*bridge.Call{
		{Tool: "getItem", Args: args(t, map[string]any{"id": "a1"})},
		{Tool: "ping"},
		{Tool: "missing"},
		{Tool: "flaky"},
		{Tool: "getItem", Args: args(t, map[string]any{"id": "a1"})},
	} {
		call(t, rt, c)
	}
	want := `
# HELP mcpbridge_tool_calls_total Tool calls by tool and outcome (ok or the error kind).
# TYPE mcpbridge_tool_calls_total counter
mcpbridge_tool_calls_total{outcome="ok",tool="getItem"} 2
mcpbridge_tool_calls_total{outcome="ok",tool="other"} 1
mcpbridge_tool_calls_total{outcome="ok",tool="ping"} 1
mcpbridge_tool_calls_total{outcome="upstream_4xx",tool="other"} 1
# HELP mcpbridge_build_info Build information; the value is always 1.
# TYPE mcpbridge_build_info gauge
mcpbridge_build_info{version="unknown"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "mcpbridge_tool_calls_total", "mcpbridge_build_info"); err != nil {
		t.Error(err)
	}
}

// TestMetricsConcurrent counts calls made at once (run under -race).
func TestMetricsConcurrent(t *testing.T) {
	reg, m := newMetrics(t)
	rt := newRuntime(t, m.Middleware())
	const n = 40
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if out, err := rt.Call(t.Context(), &bridge.Call{Tool: "getItem", Args: []byte(`{"id":"a1"}`)}); err != nil || out.Kind != bridge.OK {
				t.Errorf("Call = %v, %v", out, err)
			}
		})
	}
	wg.Wait()
	want := `
# HELP mcpbridge_tool_calls_total Tool calls by tool and outcome (ok or the error kind).
# TYPE mcpbridge_tool_calls_total counter
mcpbridge_tool_calls_total{outcome="ok",tool="getItem"} 40
# HELP mcpbridge_inflight_calls Tool calls in progress (waiting for a concurrency slot included when the limit runs inside this middleware).
# TYPE mcpbridge_inflight_calls gauge
mcpbridge_inflight_calls 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "mcpbridge_tool_calls_total", "mcpbridge_inflight_calls"); err != nil {
		t.Error(err)
	}
}

// TestNewMetricsErrors checks the registration failures.
func TestNewMetricsErrors(t *testing.T) {
	if _, err := observe.NewMetrics(nil, "1"); err == nil {
		t.Error("NewMetrics(nil) succeeded")
	}
	reg := prometheus.NewRegistry()
	if _, err := observe.NewMetrics(reg, "1"); err != nil {
		t.Fatal(err)
	}
	_, err := observe.NewMetrics(reg, "1")
	if err == nil || !strings.Contains(err.Error(), "registering metrics") {
		t.Errorf("NewMetrics on a used registry: %v, want a registration error", err)
	}
}

// TestMetricsCountRefusals checks a call refused by an inner middleware
// (a limit or a quota): counted with its kind, never timed upstream.
func TestMetricsCountRefusals(t *testing.T) {
	reg, m := newMetrics(t)
	refuse := func(bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(context.Context, *bridge.Call) (*bridge.Outcome, error) {
			return bridge.Reject(bridge.Busy, "busy", time.Second), nil
		})
	}
	rt := newRuntime(t, m.Middleware(), refuse)
	call(t, rt, &bridge.Call{Tool: "getItem", Args: []byte(`{"id":"a1"}`)})
	want := `
# HELP mcpbridge_tool_calls_total Tool calls by tool and outcome (ok or the error kind).
# TYPE mcpbridge_tool_calls_total counter
mcpbridge_tool_calls_total{outcome="busy",tool="getItem"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "mcpbridge_tool_calls_total"); err != nil {
		t.Error(err)
	}
	wantCounts := map[string]map[string]uint64{"mcpbridge_tool_call_duration_seconds": {"getItem": 1}}
	if diff := cmp.Diff(wantCounts, histogramCounts(t, reg)); diff != "" {
		t.Errorf("histogram sample counts mismatch (-want +got):\n%s", diff)
	}
}

// TestMetricsDeniedUnnamed: a call an access list denied is counted under
// the "other" tool, not its name: /metrics would otherwise tell whoever
// reads it that a tool hidden from the caller exists.
func TestMetricsDeniedUnnamed(t *testing.T) {
	reg, m := newMetrics(t)
	deny := func(bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(context.Context, *bridge.Call) (*bridge.Outcome, error) {
			return bridge.Reject(bridge.Denied, "access denied", 0), nil
		})
	}
	rt := newRuntime(t, m.Middleware(), deny)
	call(t, rt, &bridge.Call{Tool: "getItem", Args: []byte(`{"id":"a1"}`)})
	want := `
# HELP mcpbridge_tool_calls_total Tool calls by tool and outcome (ok or the error kind).
# TYPE mcpbridge_tool_calls_total counter
mcpbridge_tool_calls_total{outcome="denied",tool="other"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "mcpbridge_tool_calls_total"); err != nil {
		t.Error(err)
	}
}

// TestMetricsLastReload: the last-reload gauges follow the start's load and
// every reload: 0 after a failure until a load succeeds, whatever the
// failed counter's rate does, with the time of the last success.
func TestMetricsLastReload(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := observe.NewMetrics(reg, "1")
	if err != nil {
		t.Fatal(err)
	}
	gauges := func() (ok, at float64) {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			switch mf.GetName() {
			case "mcpbridge_spec_last_reload_successful":
				ok = mf.GetMetric()[0].GetGauge().GetValue()
			case "mcpbridge_spec_last_reload_success_timestamp_seconds":
				at = mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		return ok, at
	}
	m.Loaded(false) // a degraded start
	if ok, at := gauges(); ok != 0 || at != 0 {
		t.Errorf("degraded start: successful %v at %v, want 0 at 0", ok, at)
	}
	before := float64(time.Now().Unix())
	m.Reload(observe.ReloadOK)
	ok, okAt := gauges()
	if ok != 1 || okAt < before {
		t.Errorf("after a reload: successful %v at %v, want 1 at >= %v", ok, okAt, before)
	}
	m.Reload(observe.ReloadFailed)
	if ok, at := gauges(); ok != 0 || at != okAt {
		t.Errorf("after a failed reload: successful %v at %v, want 0 at %v (the last success)", ok, at, okAt)
	}
	m.Reload(observe.ReloadUnchanged)
	if ok, _ := gauges(); ok != 1 {
		t.Errorf("after an unchanged reload: successful %v, want 1", ok)
	}
}
