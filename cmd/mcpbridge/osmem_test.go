package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// TestHeapBytesSeesTheHeap: the bound returnMemory applies reads the heap
// (a metric name that no longer exists would read 0, and the large starts
// would stop returning memory).
func TestHeapBytesSeesTheHeap(t *testing.T) {
	big := make([]byte, 2*minReturnBytes)
	for i := range big {
		big[i] = byte(i)
	}
	if got := heapBytes(); got < uint64(len(big)) {
		t.Errorf("heapBytes() = %d with %d bytes live, want at least that", got, len(big))
	}
	before := numGC()
	returnMemory()
	if numGC() == before {
		t.Errorf("returnMemory did not collect over a heap of %d bytes", heapBytes())
	}
	runtime.KeepAlive(big)

	// Without it, a small heap is left alone: no collection.
	big = nil
	debug.FreeOSMemory()
	if h := heapBytes(); h >= minReturnBytes {
		t.Fatalf("the test's heap is %d bytes after freeing, expected under %d", h, minReturnBytes)
	}
	before = numGC()
	returnMemory()
	if n := numGC(); n != before {
		t.Errorf("returnMemory collected (%d → %d) over a heap of %d bytes", before, n, heapBytes())
	}
}

func numGC() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}
