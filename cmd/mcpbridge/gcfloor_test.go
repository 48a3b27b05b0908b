package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, tt := range []struct {
		name                         string
		floor, live, scanHeap, roots uint64
		want                         int
	}{
		// Small heaps: the runtime's 4 MiB×p/100 minimum reaches a 16 MiB
		// floor first, at p=400.
		{"small heap", 16 * mib, 1 * mib, 1 * mib, 0, 400},
		{"empty metrics", 16 * mib, 0, 0, 0, 100},
		// 6 MiB live, 7 MiB with the roots: 6 + 7×p/100 ≥ 16 at p=143.
		{"mid heap", 16 * mib, 6 * mib, 6 * mib, 1 * mib, 143},
		// Past half the floor, the default already reaches it.
		{"live at half", 16 * mib, 8 * mib, 8 * mib, 0, 100},
		// Past the floor, a heap of pointers keeps the default...
		{"large heap of pointers", 16 * mib, 200 * mib, 200 * mib, 10 * mib, 100},
		// ...and one of buffers gets the headroom its scannable part needs:
		// (60+2)/(100+2) of the live heap, p=61,
		{"heap of some buffers", 16 * mib, 100 * mib, 60 * mib, 2 * mib, 61},
		// but never less than 1.5x the live heap.
		{"heap of buffers", 16 * mib, 200 * mib, 20 * mib, 2 * mib, minGOGC},
		// A scannable figure above the live heap (they are read apart) is
		// the live heap.
		{"scan above live", 16 * mib, 100 * mib, 120 * mib, 0, 100},
	} {
		if got := gcPercentFor(tt.floor, tt.live, tt.scanHeap, tt.roots, 100, minGOGC, 400); got != tt.want {
			t.Errorf("%s: gcPercentFor = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// gogcAfterGC collects until the tuner has set a GOGC that ok accepts,
// for up to 5 s, and returns the last GOGC seen.
func gogcAfterGC(ok func(int) bool) int {
	var got int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the cleanup runs on its own goroutine
		got = debug.SetGCPercent(-1)
		debug.SetGCPercent(got)
		if ok(got) {
			break
		}
	}
	return got
}

// TestGCFloorLowersGOGCForBuffers: with 64 MiB of pointer-free buffers
// live, the tuner sets GOGC below the default after a collection, and back
// to the default once they are gone (the small heap's floor then raises it
// above).
func TestGCFloorLowersGOGCForBuffers(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	stop := startGCFloor(gcFloorBytes)
	defer stop()
	bufs := make([][]byte, 64)
	for i := range bufs {
		bufs[i] = make([]byte, 1<<20)
	}
	if got := gogcAfterGC(func(p int) bool { return p < 100 }); got >= 100 || got < minGOGC {
		t.Fatalf("GOGC = %d with 64 MiB of buffers live, want in [%d, 100)", got, minGOGC)
	}
	runtime.KeepAlive(bufs)
	bufs = nil
	if got := gogcAfterGC(func(p int) bool { return p > 100 }); got <= 100 {
		t.Fatalf("GOGC = %d once the buffers are garbage, want > 100", got)
	}
}

// TestGCFloorRaisesGOGC: with this test binary's small live heap, the
// tuner has GOGC above the default after a collection, and stop puts the
// default back.
func TestGCFloorRaisesGOGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	stop := startGCFloor(gcFloorBytes)
	if got := gogcAfterGC(func(p int) bool { return p > 100 }); got <= 100 {
		t.Fatalf("GOGC = %d after collections with a small heap, want > 100", got)
	}
	stop()
	if now := debug.SetGCPercent(old); now != 100 {
		t.Fatalf("GOGC = %d after stop, want 100", now)
	}
}
