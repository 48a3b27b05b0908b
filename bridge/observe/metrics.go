package observe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// The results of a spec reload, the values of the result label of
// mcpbridge_spec_reloads_total (see [Metrics.Reload]).
const (
	ReloadOK        = "ok"        // a new catalog was swapped in
	ReloadUnchanged = "unchanged" // the spec and whitelist gave the same tools
	ReloadFailed    = "failed"    // loading or building failed; the old catalog stays
)

// durationBuckets spans a cached answer (5ms) to the longest per-tool
// timeout worth waiting for (60s; the default call timeout is 30s).
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Metrics is the Prometheus instrumentation of one bridge process: per-tool
// calls, latencies, retries and response sizes recorded by
// [Metrics.Middleware], and the tool count, reloads and redactions that the
// wiring reports. Build it with [NewMetrics]; the zero value is not usable.
// Its methods are safe for concurrent use.
//
// The tool label takes the catalog's tool names (the runtime rejects
// unknown names before any middleware runs); at most 10,000 distinct names
// are kept, later ones are counted as [OtherTool]. [Metrics.Retire] drops
// the names a reload removed, with their series.
type Metrics struct {
	calls      *prometheus.CounterVec   // tool, outcome
	duration   *prometheus.HistogramVec // tool
	upstream   *prometheus.HistogramVec // tool
	retries    *prometheus.CounterVec   // tool
	bytes      *prometheus.CounterVec   // tool
	inflight   prometheus.Gauge
	redactions prometheus.Counter
	unenforced prometheus.Counter     // calls past a failed quota store
	reloads    *prometheus.CounterVec // result
	lastOK     prometheus.Gauge       // 1 when the last load or reload succeeded
	lastOKTime prometheus.Gauge       // when the spec was last loaded or found unchanged
	tools      prometheus.Gauge

	labels *toolLabels
	series sync.Map // tool label → *toolSeries
	// seriesMu is held wherever a child of the tool vectors is created and
	// by Retire, which deletes them: made then names every tool label
	// holding a series, so none escapes Retire.
	seriesMu sync.Mutex
	made     map[string]struct{} // guarded by seriesMu
	handler  http.Handler
}

// toolSeries holds a tool's children of the vectors, looked up once rather
// than at every call (each WithLabelValues hashes and checks its values).
// Like the vectors' own children they are created on first use: a tool's
// upstream histogram appears with its first call that sent a request.
type toolSeries struct {
	duration       prometheus.Observer
	retries, bytes prometheus.Counter
	upstream       atomic.Pointer[prometheus.Observer]
	calls          [kindSlots]atomic.Pointer[prometheus.Counter] // by outcome kind
}

// kindSlots bounds the outcome kinds toolSeries caches; a kind beyond it
// (none today) is looked up at each call.
const kindSlots = 32

func (m *Metrics) seriesOf(tool string) *toolSeries {
	if s, ok := m.series.Load(tool); ok {
		return s.(*toolSeries)
	}
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	if s, ok := m.series.Load(tool); ok {
		return s.(*toolSeries)
	}
	m.made[tool] = struct{}{}
	s := &toolSeries{
		duration: m.duration.WithLabelValues(tool),
		retries:  m.retries.WithLabelValues(tool),
		bytes:    m.bytes.WithLabelValues(tool),
	}
	m.series.Store(tool, s)
	return s
}

func (m *Metrics) callCounter(s *toolSeries, tool string, kind bridge.ErrorKind) prometheus.Counter {
	if int(kind) < kindSlots {
		if c := s.calls[kind].Load(); c != nil {
			return *c
		}
	}
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	m.made[tool] = struct{}{}
	c := m.calls.WithLabelValues(tool, kind.String())
	if int(kind) < kindSlots {
		s.calls[kind].Store(&c)
	}
	return c
}

func (m *Metrics) upstreamObserver(s *toolSeries, tool string) prometheus.Observer {
	if o := s.upstream.Load(); o != nil {
		return *o
	}
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	m.made[tool] = struct{}{}
	o := m.upstream.WithLabelValues(tool)
	s.upstream.Store(&o)
	return o
}

// NewMetrics creates the bridge's metrics and registers them, with the Go
// runtime and process collectors, on reg:
//
//	mcpbridge_tool_calls_total{tool,outcome}            counter (outcome: ErrorKind.String())
//	mcpbridge_tool_call_duration_seconds{tool}          histogram, the whole call
//	mcpbridge_upstream_request_duration_seconds{tool}   histogram, calls that reached the upstream
//	mcpbridge_upstream_retries_total{tool}              counter, attempts after the first
//	mcpbridge_inflight_calls                            gauge
//	mcpbridge_response_bytes_total{tool}                counter, upstream body bytes
//	mcpbridge_redactions_total                          counter
//	mcpbridge_quota_unenforced_calls_total              counter, calls let through uncounted (quota-fail open)
//	mcpbridge_spec_reloads_total{result}                counter (ok, unchanged, failed)
//	mcpbridge_spec_last_reload_successful               gauge, 1 or 0: the start's load or the last reload
//	mcpbridge_spec_last_reload_success_timestamp_seconds gauge, Unix time of the last success
//	mcpbridge_tools                                     gauge, operation tools served
//	mcpbridge_build_info{version}                       gauge, always 1
//
// reg is a *prometheus.Registry rather than a Registerer because
// [Metrics.Handler] serves what it gathers; pass a fresh
// prometheus.NewRegistry(), never the global one. version labels
// build_info; "" is exported as "unknown". It fails when reg is nil or
// already holds one of these metrics (NewMetrics called twice on it).
func NewMetrics(reg *prometheus.Registry, version string) (*Metrics, error) {
	return newMetrics(reg, version, maxToolLabels)
}

func newMetrics(reg *prometheus.Registry, version string, toolCap int) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("creating metrics: no registry")
	}
	if version == "" {
		version = "unknown"
	}
	m := &Metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpbridge_tool_calls_total",
			Help: "Tool calls by tool and outcome (ok or the error kind).",
		}, []string{"tool", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpbridge_tool_call_duration_seconds",
			Help:    "Duration of tool calls, from entering the middleware chain to the outcome.",
			Buckets: durationBuckets,
		}, []string{"tool"}),
		upstream: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcpbridge_upstream_request_duration_seconds",
			Help:    "Time spent waiting for the upstream, retries included, for calls that sent a request.",
			Buckets: durationBuckets,
		}, []string{"tool"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpbridge_upstream_retries_total",
			Help: "Upstream requests sent after the first attempt of a call.",
		}, []string{"tool"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpbridge_response_bytes_total",
			Help: "Bytes of upstream response bodies.",
		}, []string{"tool"}),
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpbridge_inflight_calls",
			Help: "Tool calls in progress (waiting for a concurrency slot included when the limit runs inside this middleware).",
		}),
		redactions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpbridge_redactions_total",
			Help: "Values replaced by the redactor.",
		}),
		unenforced: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcpbridge_quota_unenforced_calls_total",
			Help: "Tool calls let through uncounted because the quota store failed (quota-fail open).",
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpbridge_spec_reloads_total",
			Help: "Spec reload attempts by result (ok, unchanged, failed).",
		}, []string{"result"}),
		lastOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpbridge_spec_last_reload_successful",
			Help: "1 when the spec's load at start or its last reload attempt succeeded (ok or unchanged), 0 when it failed (the previous tools, or only ping when the start was degraded, are served).",
		}),
		lastOKTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpbridge_spec_last_reload_success_timestamp_seconds",
			Help: "Unix time of the spec's last successful load or reload (unchanged included); 0 before the first.",
		}),
		tools: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpbridge_tools",
			Help: "Operation tools in the served catalog (ping not counted).",
		}),
		labels: newToolLabels(toolCap),
		made:   make(map[string]struct{}),
	}
	for _, r := range []string{ReloadOK, ReloadUnchanged, ReloadFailed} {
		m.reloads.WithLabelValues(r) // export zeros, so rate() and alerts see every result
	}
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "mcpbridge_build_info",
		Help:        "Build information; the value is always 1.",
		ConstLabels: prometheus.Labels{"version": version},
	})
	buildInfo.Set(1)
	var errs []error
	for _, c := range []prometheus.Collector{
		m.calls, m.duration, m.upstream, m.retries, m.bytes, m.inflight,
		m.redactions, m.unenforced, m.reloads, m.lastOK, m.lastOKTime, m.tools, buildInfo,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("registering metrics: %w", errors.Join(errs...))
	}
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		// Bounded: a scrape storm cannot pile up gathers.
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	})
	return m, nil
}

// Handler serves the registry passed to [NewMetrics] in the Prometheus
// exposition formats (mount it at /metrics). At most 4 scrapes run at
// once (more get 503) and a scrape taking over 10s gets 503.
func (m *Metrics) Handler() http.Handler { return m.handler }

// AddRedactions counts n values replaced by the redactor; n <= 0 is
// ignored.
func (m *Metrics) AddRedactions(n int) {
	if n > 0 {
		m.redactions.Add(float64(n))
	}
}

// QuotaUnenforced counts one call let through uncounted because the quota
// store failed (quota-fail open); pass it as quota.Options.Unenforced.
func (m *Metrics) QuotaUnenforced() { m.unenforced.Inc() }

// Reload counts one spec reload attempt with its result: [ReloadOK],
// [ReloadUnchanged] or [ReloadFailed]. Any other value is counted as
// failed, so the label keeps exactly these three values and an unexpected
// result still shows where alerts look.
func (m *Metrics) Reload(result string) {
	switch result {
	case ReloadOK, ReloadUnchanged:
	default:
		result = ReloadFailed
	}
	m.reloads.WithLabelValues(result).Inc()
	m.Loaded(result != ReloadFailed)
}

// Loaded records whether the spec's load succeeded: at start (false for a
// degraded start) and, through [Metrics.Reload], after every reload. An
// alert on mcpbridge_spec_last_reload_successful == 0 stays on until a load
// succeeds, where one on the failed counter's rate clears by itself.
func (m *Metrics) Loaded(ok bool) {
	if !ok {
		m.lastOK.Set(0)
		return
	}
	m.lastOK.Set(1)
	m.lastOKTime.SetToCurrentTime()
}

// SetTools sets the number of operation tools served; call it with
// Catalog.Len() at startup and after every swap.
func (m *Metrics) SetTools(n int) { m.tools.Set(float64(n)) }

// Retire removes the series of the tools cat no longer serves, after a
// reload swapped it in: a bridge reloaded for weeks would otherwise export
// every tool name it ever served (about 35 series each, up to the label
// cap), and a removed tool's counters would go on being scraped as if it
// were still there. A name that comes back starts its series afresh. A
// call that started on the old catalog and ends after this may create its
// tool's series again; the next Retire removes them.
func (m *Metrics) Retire(cat *bridge.Catalog) {
	live := func(name string) bool { _, ok := cat.Lookup(name); return ok }
	m.labels.forget(live)
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	for name := range m.made {
		if name == OtherTool || live(name) {
			continue
		}
		delete(m.made, name)
		m.series.Delete(name)
		m.calls.DeletePartialMatch(prometheus.Labels{"tool": name})
		m.duration.DeleteLabelValues(name)
		m.upstream.DeleteLabelValues(name)
		m.retries.DeleteLabelValues(name)
		m.bytes.DeleteLabelValues(name)
	}
}

// Middleware records every call that passes through it. Place it
// outermost so the duration includes the other middlewares (queueing for a
// concurrency slot, for instance) and refused calls are counted with their
// kind. A protocol error from the chain (a bug; unknown tools never reach
// it) is counted as tool_error.
//
// The duration is measured here rather than read from Outcome.Took, which
// is 0 on an outcome a middleware made (a refusal) until the runtime fills
// it after the whole chain has returned.
func (m *Metrics) Middleware() bridge.Middleware {
	return func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			m.inflight.Inc()
			defer m.inflight.Dec()
			start := time.Now()
			out, err := next.Invoke(ctx, c)
			name := toolName(c)
			if out != nil && out.Kind == bridge.Denied {
				// Whoever may read /metrics need not learn which tools an
				// access list hides from a caller that probed for them.
				name = OtherTool
			}
			m.record(m.labels.of(name), out, time.Since(start))
			return out, err
		})
	}
}

func (m *Metrics) record(tool string, out *bridge.Outcome, took time.Duration) {
	kind := bridge.ToolError
	if out != nil {
		kind = out.Kind
	}
	s := m.seriesOf(tool)
	m.callCounter(s, tool, kind).Inc()
	s.duration.Observe(took.Seconds())
	if out == nil {
		return
	}
	if out.Attempts > 0 {
		m.upstreamObserver(s, tool).Observe(out.Upstream.Seconds())
	}
	s.retries.Add(float64(retries(out)))
	s.bytes.Add(float64(max(out.BytesOut, 0)))
}

// toolName is the catalog's name of the tool called.
func toolName(c *bridge.Call) string {
	if t := c.Target(); t != nil {
		return t.Name()
	}
	return c.Tool
}

// retries is the number of upstream requests after the first.
func retries(out *bridge.Outcome) int { return max(out.Attempts-1, 0) }
