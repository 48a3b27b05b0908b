//go:build unix

package specloader_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// TestSpecFIFONoWriter: a spec path that is a FIFO nobody writes to is
// read as empty at once (open(2) of a FIFO used to wait for a writer: a
// reload hung on it, and the exit that waited for the reload); a FIFO with
// a writer that never writes is abandoned when the context ends.
func TestSpecFIFONoWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spec.yaml")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err) // not a failure of the bridge: no FIFOs here
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := specloader.Load(ctx, path, specloader.Options{})
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("a FIFO without a writer: %v after %v; want an error at once", err, time.Since(start))
	}

	// A writer that holds the FIFO open and writes nothing.
	done := make(chan struct{})
	go func() {
		defer close(done)
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		<-ctx.Done()
		w.Close()
	}()
	for i := 0; i < 100; i++ { // let the writer block in open until a reader comes
		time.Sleep(5 * time.Millisecond)
	}
	short, cancelShort := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancelShort()
	start = time.Now()
	_, err = specloader.ReadLocalFile(short, path, 1<<20)
	if err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("a silent writer: %v after %v; want the context's end", err, time.Since(start))
	}
	cancel()
	<-done
}
