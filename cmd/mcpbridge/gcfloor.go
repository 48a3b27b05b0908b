package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// gcFloor keeps the collector's heap goal at or above a floor while serving,
// by raising GOGC after each collection when the live heap is small, and
// leaves Go's default (GOGC=100) once the live heap passes half the floor.
//
// Why: a served bridge has a live heap of 1-2 MiB, below Go's fixed 4 MiB
// minimum heap goal, so at the default each collection comes after 2-3 MiB
// of allocation, a few small tool calls (go-sdk allocates ~250-400 KB per
// message), and scans the bridge's whole heap every time. Measured over
// stdio with 235 B answers: 1.7x as many collections as a bare go-sdk
// server and 4x its GC CPU. A 16 MiB goal cuts collections by ~5x for at
// most ~12 MiB more RSS, and changes nothing when answers are large (the
// live heap is then far above the floor, and GOGC stays 100, which bounds the
// peak RSS with 1 MiB answers in flight).
//
// Go has no minimum-heap setting (GOMEMLIMIT is a ceiling), and a ballast
// allocated after provisioning may land in pages provisioning already
// made resident. So this is the usual collection-driven tuner: a cleanup
// attached to a fresh object runs after each cycle that frees it, reads the
// live heap from runtime/metrics (no stop-the-world) and sets GOGC.
//
// It runs only when the user has not set GOGC (then theirs applies).
type gcFloor struct {
	floor   uint64 // heap goal floor, bytes
	base    int    // the GOGC used when the live heap is large
	max     int    // GOGC never goes above this
	current atomic.Int64
	stopped atomic.Bool
	samples []metrics.Sample
}

// gcFloorBytes is the heap goal floor while serving.
const gcFloorBytes = 16 << 20

// startGCFloor starts the tuner and returns its stop function, which puts
// GOGC back to base.
func startGCFloor(floor uint64) (stop func()) {
	g := &gcFloor{floor: floor, base: 100, max: 400, samples: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/stack:bytes"},
		{Name: "/gc/scan/globals:bytes"},
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

// tune sets GOGC to the smallest value at or above base whose heap goal
// reaches the floor.
func (g *gcFloor) tune() {
	metrics.Read(g.samples)
	live := sampleUint(g.samples[0])
	scannable := live + sampleUint(g.samples[1]) + sampleUint(g.samples[2])
	pct := gcPercentFor(g.floor, live, scannable, g.base, g.max)
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

// gcPercentFor is the smallest GOGC, between lo and hi, whose heap goal
// reaches floor, for a heap with live bytes and scannable bytes (live plus
// stacks and globals). The runtime's goal for GOGC p is the larger of
// live + scannable×p/100 and its minimum heap, 4 MiB×p/100.
func gcPercentFor(floor, live, scannable uint64, lo, hi int) int {
	if live >= floor || scannable == 0 {
		return lo
	}
	pct := math.Ceil(100 * min(float64(floor-live)/float64(scannable), float64(floor)/runtimeMinHeap))
	switch {
	case pct < float64(lo):
		return lo
	case pct > float64(hi):
		return hi
	}
	return int(pct)
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
