package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// gcFloor sets GOGC after each collection while serving, so that the
// collector's headroom (heap goal minus live heap) is what its work needs:
// at least a floor for small heaps, and about the scannable heap (what a
// cycle marks) when most of the live heap is pointer-free buffers.
//
// Small heaps: a served bridge has a live heap of 1-2 MiB, below Go's fixed
// 4 MiB minimum heap goal, so at the default each collection comes after
// 2-3 MiB of allocation, a few small tool calls (go-sdk allocates ~250-400
// KB per message), and scans the bridge's whole heap every time. Measured
// over stdio with 235 B answers: 1.7x as many collections as a bare go-sdk
// server and 4x its GC CPU. A 16 MiB goal cuts collections by ~5x for at
// most ~12 MiB more RSS.
//
// Large answers: with 1 MiB answers in flight the live heap is mostly
// their bytes (the upstream body, its text block, the encoded result),
// which a cycle does not scan, and at GOGC=100 the heap goal, and so the
// peak RSS, is twice that. Here GOGC drops until the headroom is the
// scannable heap plus the roots, never below minGOGC: collections come
// more often, but each marks only the little that holds pointers, so
// mark work per allocated byte stays what GOGC=100 gives a heap made of
// pointers. A heap of pointers (a large catalog) keeps GOGC=100.
//
// Go has no minimum-heap setting (GOMEMLIMIT is a ceiling), and a ballast
// allocated after provisioning may land in pages provisioning already
// made resident. So this is the usual collection-driven tuner: a cleanup
// attached to a fresh object runs after each cycle that frees it, reads the
// heap from runtime/metrics (no stop-the-world) and sets GOGC.
//
// It runs only when the user has not set GOGC (then theirs applies).
type gcFloor struct {
	floor   uint64 // heap goal floor, bytes
	base    int    // the GOGC of a heap of pointers past the floor, and after stop
	min     int    // GOGC never goes below this
	max     int    // GOGC never goes above this
	current atomic.Int64
	stopped atomic.Bool
	samples []metrics.Sample
}

// gcFloorBytes is the heap goal floor while serving.
const gcFloorBytes = 16 << 20

// minGOGC bounds the tuner below: the heap goal stays at least 1.25x the
// live heap, so that a burst of allocation between two collections (the
// pacer's estimate lags) does not turn into back-to-back cycles. Measured
// with 1 MiB answers at concurrency 32 (mcpbench, 4 A/B pairs): peak RSS
// stdio 240-288 MiB at 50, 183-212 at 25; HTTP 249-301 at 50, 198-255 at
// 25; server CPU per call the same within noise at both.
const minGOGC = 25

// startGCFloor starts the tuner and returns its stop function, which puts
// GOGC back to base.
func startGCFloor(floor uint64) (stop func()) {
	g := &gcFloor{floor: floor, base: 100, min: minGOGC, max: 400, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
		{Name: "/gc/scan/heap:bytes"},
	}}
	debug.SetGCPercent(g.base)
	g.current.Store(int64(g.base))
	g.tune()
	g.arm()
	return func() {
		g.stopped.Store(true)
		debug.SetGCPercent(g.base)
	}
}

// arm attaches a cleanup to a new object; it runs after the cycle that
// collects it, tunes, and arms again.
func (g *gcFloor) arm() {
	sentinel := new([16]byte)
	runtime.AddCleanup(sentinel, func(g *gcFloor) {
		if g.stopped.Load() {
			return
		}
		g.tune()
		g.arm()
	}, g)
}

// tune sets GOGC from the heap the last collection left (gcPercentFor).
func (g *gcFloor) tune() {
	metrics.Read(g.samples)
	live := sampleUint(g.samples[0])
	roots := sampleUint(g.samples[1]) + sampleUint(g.samples[2])
	scanHeap := live // a Go without the metric: treat the heap as all pointers
	if g.samples[3].Value.Kind() == metrics.KindUint64 {
		scanHeap = min(g.samples[3].Value.Uint64(), live)
	}
	pct := gcPercentFor(g.floor, live, scanHeap, roots, g.base, g.min, g.max)
	cur := int(g.current.Load())
	// A change of an eighth or less is not worth a call, except back to base.
	if d := pct - cur; pct == cur || (pct != g.base && d <= cur/8 && -d <= cur/8) {
		return
	}
	if g.stopped.Load() {
		return
	}
	g.current.Store(int64(pct))
	debug.SetGCPercent(pct)
}

// gcPercentFor is the GOGC, between lo and hi, whose headroom over a heap
// of live bytes (scanHeap of them scannable, plus roots: stacks and
// globals) is the larger of what reaches a heap goal of floor and the
// scannable heap plus roots, capped at base's headroom. The runtime's goal
// for GOGC p is the larger of live + (live+roots)×p/100 and its minimum
// heap, 4 MiB×p/100. A heap of pointers past the floor gets base; a heap
// that is mostly pointer-free buffers gets less, down to lo.
func gcPercentFor(floor, live, scanHeap, roots uint64, base, lo, hi int) int {
	total := live + roots
	if total == 0 {
		return base
	}
	if live < floor {
		// The floor: the smallest p whose goal reaches it, at or above base.
		pct := math.Ceil(100 * min(float64(floor-live)/float64(total), float64(floor)/runtimeMinHeap))
		return int(max(float64(base), min(pct, float64(hi))))
	}
	pct := math.Ceil(100 * float64(min(scanHeap, live)+roots) / float64(total))
	return int(max(float64(lo), min(pct, float64(base))))
}

// runtimeMinHeap is the Go runtime's minimum heap goal at GOGC=100
// (defaultHeapMinimum in runtime/mgcpacer.go).
const runtimeMinHeap = 4 << 20

func sampleUint(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0 // a metric this Go does not have: count it as none
	}
	return s.Value.Uint64()
}
