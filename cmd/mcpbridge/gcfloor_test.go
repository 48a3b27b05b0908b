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
		name              string
		floor, live, scan uint64
		want              int
	}{
		// Small heaps: the runtime's 4 MiB×p/100 minimum reaches a 16 MiB
		// floor first, at p=400.
		{"small heap", 16 * mib, 1 * mib, 1 * mib, 400},
		{"empty metrics", 16 * mib, 0, 0, 100},
		// 6 MiB live, 7 MiB scannable: 6 + 7×p/100 ≥ 16 at p=143.
		{"mid heap", 16 * mib, 6 * mib, 7 * mib, 143},
		// Past half the floor, the default already reaches it.
		{"live at half", 16 * mib, 8 * mib, 8 * mib, 100},
		{"large heap", 16 * mib, 200 * mib, 210 * mib, 100},
	} {
		if got := gcPercentFor(tt.floor, tt.live, tt.scan, 100, 400); got != tt.want {
			t.Errorf("%s: gcPercentFor = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestGCFloorRaisesGOGC: with this test binary's small live heap, the
// tuner has GOGC above the default after a collection, and stop puts the
// default back.
func TestGCFloorRaisesGOGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	stop := startGCFloor(gcFloorBytes)
	var got int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond) // the cleanup runs on its own goroutine
		got = debug.SetGCPercent(-1)
		debug.SetGCPercent(got)
		if got > 100 {
			break
		}
	}
	if got <= 100 {
		t.Fatalf("GOGC = %d after collections with a small heap, want > 100", got)
	}
	stop()
	if now := debug.SetGCPercent(old); now != 100 {
		t.Fatalf("GOGC = %d after stop, want 100", now)
	}
}
