package main

import (
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// minReturnBytes is the heap below which returnMemory does nothing.
const minReturnBytes = 8 << 20

// firstListGrace is how long after serving starts a restart restored from
// the cache waits before returning memory (serveBuilt): long enough for a
// client's initialize and first tools/list (GitHub's restart answers it
// ~90 ms after serving starts here) and for the client to decode it, which
// takes mcpbench's go-sdk client 100-200 ms for GitHub's 2.4 MB: the
// collection and madvise calls of a return in the middle of that slowed
// it on this 2-core machine (mcpbench cold phase, 7 restarts each: 273 ms
// to a decoded list at 200 ms here, 232 ms at 1 s). RSS stays ~7 MiB higher
// until then.
const firstListGrace = time.Second

// returnMemory is debug.FreeOSMemory (a forced collection, then every
// free page back to the OS) for a heap large enough for it to matter: a
// heap of minReturnBytes or more, garbage included. It is for the calls on
// the way to the first tools/list (during the build, before the deferred
// work); below the bound, the few MiB they could return do not pay for a
// collection and the madvise calls in the middle of a start. Measured at
// these calls: petstore's heap 4 MiB, GitHub's with 20 operations 16-23 MiB
// (a bound of 32 MiB left those in, and its idle RSS after a cached
// restart rose from 23 to 36 MiB). Petstore's first start, a pipe reader,
// 15 interleaved runs: list 64.7 → 57.7 ms median, idle RSS 23.6 → 23.8
// MiB (the call after the deferred work, off that path, stays
// unconditional).
func returnMemory() {
	if heapBytes() < minReturnBytes {
		return
	}
	debug.FreeOSMemory()
}

// heapBytes is the memory the heap holds from the OS: objects (live or
// not yet swept), free and unused span memory; released pages excluded.
func heapBytes() uint64 {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
	}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			n += v.Value.Uint64()
		}
	}
	return n
}
