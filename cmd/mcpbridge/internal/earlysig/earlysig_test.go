//go:build unix

package earlysig

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestHupCaughtFromInit sends this test process a SIGHUP: the handler the
// package's init registered must take it (without it, the default action
// ends the test binary) and deliver it on Hup.
func TestHupCaughtFromInit(t *testing.T) {
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	select {
	case <-Hup():
	case <-time.After(5 * time.Second):
		t.Fatal("SIGHUP not delivered on Hup within 5s")
	}
}
