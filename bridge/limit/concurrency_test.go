package limit_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/limit"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

const spec = `openapi: 3.0.3
info: {title: limit, version: "1"}
paths:
  /slow:
    get:
      operationId: slow
      responses: {"200": {description: ok}}
`

// blocking is an upstream whose every request blocks until release (or
// until the request is cancelled), counting requests at once.
type blocking struct {
	arrived chan struct{} // one value per request received
	release chan struct{} // closed: answer every request
	once    sync.Once
	hits    atomic.Int64 // requests received
	cur     atomic.Int64 // requests being served
	peak    atomic.Int64 // most requests served at once
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.hits.Add(1)
	n := b.cur.Add(1)
	defer b.cur.Add(-1)
	for p := b.peak.Load(); n > p && !b.peak.CompareAndSwap(p, n); p = b.peak.Load() {
	}
	b.arrived <- struct{}{}
	select {
	case <-b.release:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	case <-r.Context().Done():
	}
}

func (b *blocking) open() { b.once.Do(func() { close(b.release) }) }

// harness is a runtime whose only operation tool, slow, calls a blocking
// upstream through a Concurrency limit.
type harness struct {
	rt     *bridge.Runtime
	up     *blocking
	queued chan struct{} // one value per call entering the queue
}

func newHarness(t *testing.T, opts limit.Options) *harness {
	t.Helper()
	h := &harness{
		up:     &blocking{arrived: make(chan struct{}, 256), release: make(chan struct{})},
		queued: make(chan struct{}, 256),
	}
	srv := httptest.NewServer(h.up)
	t.Cleanup(srv.Close)
	t.Cleanup(h.up.open) // runs first: no handler is left blocking Close
	res, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: srv.URL, Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	h.rt = bridge.NewRuntime(cat, limit.ConcurrencyHook(opts, func() { h.queued <- struct{}{} }))
	return h
}

// call runs a call to tool.
func (h *harness) call(ctx context.Context, tool string) *bridge.Outcome {
	out, err := h.rt.Call(ctx, &bridge.Call{Tool: tool, Caller: bridge.Local, Transport: "stdio"})
	if err != nil {
		return &bridge.Outcome{Kind: bridge.ToolError, Detail: err.Error()}
	}
	return out
}

// start runs a call to slow in the background; its outcome arrives on the
// channel.
func (h *harness) start(ctx context.Context) <-chan *bridge.Outcome {
	done := make(chan *bridge.Outcome, 1)
	go func() { done <- h.call(ctx, "slow") }()
	return done
}

func wantKind(t *testing.T, what string, out *bridge.Outcome, kind bridge.ErrorKind) {
	t.Helper()
	if out.Kind != kind {
		t.Errorf("%s: outcome %s (%s), want %s", what, out.Kind, out.Detail, kind)
	}
}

func wantPending(t *testing.T, what string, done <-chan *bridge.Outcome) {
	t.Helper()
	select {
	case out := <-done:
		t.Errorf("%s ended (%s: %s), want it still waiting", what, out.Kind, out.Detail)
	default:
	}
}

// TestConcurrencyQueueAndOverflow: with 2 slots and a queue of 1, the
// third call waits, the fourth and fifth are refused at once, ping still
// answers, and the upstream never serves more than 2 requests at once.
func TestConcurrencyQueueAndOverflow(t *testing.T) {
	h := newHarness(t, limit.Options{MaxInFlight: 2, MaxQueue: 1, Wait: time.Minute})
	first, second := h.start(t.Context()), h.start(t.Context())
	<-h.up.arrived
	<-h.up.arrived
	third := h.start(t.Context())
	<-h.queued

	for _, what := range []string{"fourth call", "fifth call"} {
		out := h.call(t.Context(), "slow")
		wantKind(t, what, out, bridge.Busy)
		if want := "the bridge is busy: 2 calls in flight; retry shortly"; out.Detail != want || !out.Result.IsError {
			t.Errorf("%s: detail %q (IsError %v), want %q", what, out.Detail, out.Result.IsError, want)
		}
		if out.RetryAfter != limit.DefaultRetryAfter || out.Attempts != 0 {
			t.Errorf("%s: RetryAfter %s, Attempts %d; want %s, 0", what, out.RetryAfter, out.Attempts, limit.DefaultRetryAfter)
		}
	}
	wantKind(t, "ping while saturated", h.call(t.Context(), "ping"), bridge.OK)
	wantPending(t, "third call", third)
	if n := h.up.hits.Load(); n != 2 {
		t.Errorf("upstream got %d requests before release, want 2", n)
	}

	h.up.open()
	for what, done := range map[string]<-chan *bridge.Outcome{"first": first, "second": second, "third": third} {
		wantKind(t, what+" call", <-done, bridge.OK)
	}
	if hits, peak := h.up.hits.Load(), h.up.peak.Load(); hits != 3 || peak != 2 {
		t.Errorf("upstream served %d requests, at most %d at once; want 3, 2", hits, peak)
	}
}

// TestConcurrencyCancelQueued: a queued call whose context is cancelled
// ends at once without reaching the upstream and frees its queue place.
func TestConcurrencyCancelQueued(t *testing.T) {
	h := newHarness(t, limit.Options{MaxInFlight: 1, MaxQueue: 1, Wait: time.Minute})
	first := h.start(t.Context())
	<-h.up.arrived

	ctx, cancel := context.WithCancel(t.Context())
	queued := h.start(ctx)
	<-h.queued
	cancel()
	wantKind(t, "cancelled queued call", <-queued, bridge.Unavailable)

	// The queue place is free again: the next call waits instead of being
	// refused.
	next := h.start(t.Context())
	<-h.queued
	wantPending(t, "next call", next)
	wantKind(t, "call beyond the queue", h.call(t.Context(), "slow"), bridge.Busy)

	h.up.open()
	wantKind(t, "first call", <-first, bridge.OK)
	wantKind(t, "next call", <-next, bridge.OK)
	if hits, peak := h.up.hits.Load(), h.up.peak.Load(); hits != 2 || peak != 1 {
		t.Errorf("upstream served %d requests, at most %d at once; want 2, 1", hits, peak)
	}
}

// TestConcurrencyCancelRunning: a running call that is cancelled gives its
// slot back; the next call runs without queueing.
func TestConcurrencyCancelRunning(t *testing.T) {
	h := newHarness(t, limit.Options{MaxInFlight: 1, MaxQueue: 1, Wait: time.Minute})
	ctx, cancel := context.WithCancel(t.Context())
	first := h.start(ctx)
	<-h.up.arrived
	cancel()
	wantKind(t, "cancelled running call", <-first, bridge.Unavailable)

	next := h.start(t.Context())
	<-h.up.arrived
	h.up.open()
	wantKind(t, "next call", <-next, bridge.OK)
	if n := len(h.queued); n != 0 {
		t.Errorf("%d calls queued, want 0", n)
	}
}

// TestConcurrencyWaitEnds: a queued call is refused when Wait expires, and
// ends as Timeout when its own deadline passes first.
func TestConcurrencyWaitEnds(t *testing.T) {
	h := newHarness(t, limit.Options{MaxInFlight: 1, MaxQueue: 4, Wait: 20 * time.Millisecond, RetryAfter: 3 * time.Second})
	first := h.start(t.Context())
	<-h.up.arrived

	out := h.call(t.Context(), "slow")
	wantKind(t, "call whose wait expired", out, bridge.Busy)
	if out.RetryAfter != 3*time.Second {
		t.Errorf("RetryAfter %s, want 3s", out.RetryAfter)
	}

	h2 := newHarness(t, limit.Options{MaxInFlight: 1, Wait: -1})
	other := h2.start(t.Context())
	<-h2.up.arrived
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	wantKind(t, "call whose deadline passed", h2.call(ctx, "slow"), bridge.Timeout)

	h.up.open()
	h2.up.open()
	wantKind(t, "first call", <-first, bridge.OK)
	wantKind(t, "other call", <-other, bridge.OK)
	if n := h.up.hits.Load() + h2.up.hits.Load(); n != 2 {
		t.Errorf("upstreams got %d requests, want 2", n)
	}
}

// TestConcurrencyNoQueue: with MaxQueue < 0 a call finding no free slot is
// refused at once.
func TestConcurrencyNoQueue(t *testing.T) {
	h := newHarness(t, limit.Options{MaxInFlight: 1, MaxQueue: -1})
	first := h.start(t.Context())
	<-h.up.arrived
	wantKind(t, "second call", h.call(t.Context(), "slow"), bridge.Busy)
	if n := len(h.queued); n != 0 {
		t.Errorf("%d calls queued, want 0", n)
	}
	h.up.open()
	wantKind(t, "first call", <-first, bridge.OK)
}

// TestConcurrencyDefaults: the zero Options run 64 calls at once and queue
// the 65th; a negative MaxInFlight sets no limit.
func TestConcurrencyDefaults(t *testing.T) {
	tests := []struct {
		name     string
		opts     limit.Options
		running  int // calls that reach the upstream at once
		queueOne bool
	}{
		{"zero", limit.Options{}, limit.DefaultMaxInFlight, true},
		{"unlimited", limit.Options{MaxInFlight: -1}, limit.DefaultMaxInFlight + 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.opts)
			var dones []<-chan *bridge.Outcome
			for range tt.running {
				dones = append(dones, h.start(t.Context()))
			}
			for range tt.running {
				<-h.up.arrived
			}
			if tt.queueOne {
				dones = append(dones, h.start(t.Context()))
				<-h.queued
			}
			h.up.open()
			for _, done := range dones {
				wantKind(t, "call", <-done, bridge.OK)
			}
			if peak := h.up.peak.Load(); peak != int64(tt.running) {
				t.Errorf("upstream served at most %d at once, want %d", peak, tt.running)
			}
		})
	}
}
