package observe_test

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/observe"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// catalogOf builds a catalog of the operations of spec (above) that keep
// says to keep, against the runtime's upstream.
func catalogOf(t *testing.T, rt *bridge.Runtime, keep ...string) *bridge.Catalog {
	t.Helper()
	res, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var entries strings.Builder
	entries.WriteString("tools:\n")
	for _, op := range keep {
		entries.WriteString("  - operationId: " + op + "\n")
	}
	wl, err := whitelist.Parse(strings.NewReader(entries.String()))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := wl.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: rt.Catalog().PingInfo().Upstream})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestMetricsRetireRemovedTools: the series of a tool a reload removed
// leave /metrics (they stayed for the life of the process, ~35 series for
// each name ever served), those of the tools still served stay, a name
// that comes back starts afresh, and the freed label slots serve new
// names under the cap.
func TestMetricsRetireRemovedTools(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := observe.NewMetricsCap(reg, "", 3)
	if err != nil {
		t.Fatal(err)
	}
	rt := newRuntime(t, m.Middleware())
	rt.OnSwap(func(_, cur *bridge.Catalog) { m.Retire(cur) })
	for _, c := range []*bridge.Call{
		{Tool: "getItem", Args: args(t, map[string]any{"id": "a1"})},
		{Tool: "missing"},
		{Tool: "ping"},
		{Tool: "flaky"}, // past the cap of 3: other
	} {
		call(t, rt, c)
	}
	series := func() map[string]int {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, mf := range mfs {
			for _, mt := range mf.GetMetric() {
				for _, l := range mt.GetLabel() {
					if l.GetName() == "tool" {
						n[l.GetValue()]++
					}
				}
			}
		}
		return n
	}
	if got := series(); got["getItem"] == 0 || got["missing"] == 0 || got["other"] == 0 {
		t.Fatalf("before the swap, series by tool = %v", got)
	}

	rt.Swap(catalogOf(t, rt, "missing", "flaky")) // getItem and createItem removed
	got := series()
	if got["getItem"] != 0 {
		t.Errorf("after a swap that removed getItem, it still has %d series: %v", got["getItem"], got)
	}
	if got["missing"] == 0 || got["ping"] == 0 || got["other"] == 0 {
		t.Errorf("after the swap, series by tool = %v; want missing, ping and other kept", got)
	}

	// The slot getItem held now serves flaky, which the cap sent to other.
	call(t, rt, &bridge.Call{Tool: "flaky"})
	rt.Swap(catalogOf(t, rt, "getItem", "missing", "flaky"))
	call(t, rt, &bridge.Call{Tool: "getItem", Args: args(t, map[string]any{"id": "a1"})})
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP mcpbridge_tool_calls_total Tool calls by tool and outcome (ok or the error kind).
# TYPE mcpbridge_tool_calls_total counter
mcpbridge_tool_calls_total{outcome="ok",tool="flaky"} 1
mcpbridge_tool_calls_total{outcome="ok",tool="other"} 2
mcpbridge_tool_calls_total{outcome="ok",tool="ping"} 1
mcpbridge_tool_calls_total{outcome="upstream_4xx",tool="missing"} 1
`), "mcpbridge_tool_calls_total"); err != nil {
		t.Error(err)
	}
}

// TestMetricsRetireRacingCalls swaps catalogs with and without getItem
// while calls of it run (each finishes on the catalog it started with):
// once the calls are done, a last swap without getItem leaves no series of
// it, whatever a call straddling a swap created.
func TestMetricsRetireRacingCalls(t *testing.T) {
	reg, m := newMetrics(t)
	rt := newRuntime(t, m.Middleware())
	rt.OnSwap(func(_, cur *bridge.Catalog) { m.Retire(cur) })
	with, without := rt.Catalog(), catalogOf(t, rt, "missing")
	done := make(chan struct{})
	var wg sync.WaitGroup
	var calls atomic.Int64
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				// An unknown tool (between swaps) is a protocol error: fine.
				_, _ = rt.Call(t.Context(), &bridge.Call{Tool: "getItem", Args: []byte(`{"id":"a1"}`)})
				calls.Add(1)
			}
		})
	}
	for i := range 200 {
		if i%2 == 0 {
			rt.Swap(without)
		} else {
			rt.Swap(with)
		}
		for n := calls.Load(); calls.Load() < n+2; {
			time.Sleep(100 * time.Microsecond) // calls on either side of each swap
		}
	}
	close(done)
	wg.Wait()
	rt.Swap(without)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "tool" && l.GetValue() == "getItem" {
					t.Errorf("%s still has a series of getItem after its removal", mf.GetName())
				}
			}
		}
	}
}
