package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lineWriter records each Write and signals it.
type lineWriter struct {
	mu     sync.Mutex
	writes []string
	wrote  chan struct{}
}

func newLineWriter() *lineWriter { return &lineWriter{wrote: make(chan struct{}, 100)} }

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writes = append(w.writes, string(p))
	w.mu.Unlock()
	w.wrote <- struct{}{}
	return len(p), nil
}

// awaitWrite waits for the next Write, failing the test if none comes.
func (w *lineWriter) awaitWrite(t *testing.T, what string) {
	t.Helper()
	select {
	case <-w.wrote:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s was not written after the delay", what)
	}
}

func (w *lineWriter) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.writes, "")
}

func (w *lineWriter) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.writes)
}

// TestLoggerUsageRecordsWait: a usage record is not written with the call;
// the next other line writes it first, in order, and Sync writes the rest.
func TestLoggerUsageRecordsWait(t *testing.T) {
	w := newLineWriter()
	log, usage, flush, err := newLogger(w, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	usage.Info("tool call")
	if n := w.count(); n != 0 {
		t.Fatalf("the usage record was written at once (%d writes)", n)
	}
	log.Warn("upstream error status")
	got := w.all()
	if i, j := strings.Index(got, `"tool call"`), strings.Index(got, `"upstream error status"`); i < 0 || j < 0 || i > j {
		t.Fatalf("after the next line, stderr holds %q: want the record, then the line", got)
	}
	usage.Info("tool call")
	usage.Debug("tool call") // below the level: never written
	if err := log.Sync(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(w.all(), `"tool call"`); n != 2 {
		t.Errorf("after Sync, %d usage records on stderr, want 2:\n%s", n, w.all())
	}
	// After the process's flush, a late record (a handler that outlived
	// the shutdown) is written at once.
	if err := flush(); err != nil {
		t.Fatal(err)
	}
	before := w.count()
	usage.Info("tool call")
	if w.count() != before+1 {
		t.Errorf("a record after the final flush was not written at once")
	}
}

// TestLogSinkFlushesWithinDelay: a waiting record goes out by itself once
// the delay passes, and a burst past maxPendingLog is written at once.
func TestLogSinkFlushesWithinDelay(t *testing.T) {
	w := newLineWriter()
	s := newLogSink(w, time.Millisecond)
	d := deferredSink{s}
	if _, err := d.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	w.awaitWrite(t, "a waiting record")
	if got := w.all(); got != "one\n" {
		t.Fatalf("stderr %q, want %q", got, "one\n")
	}
	// The timer is armed again for the next record.
	if _, err := d.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	w.awaitWrite(t, "the second waiting record")

	big := newLineWriter()
	s = newLogSink(big, time.Hour)
	line := bytes.Repeat([]byte("x"), 1023)
	line = append(line, '\n')
	for range maxPendingLog / len(line) {
		if _, err := (deferredSink{s}).Write(line); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(big.all()); got != maxPendingLog {
		t.Errorf("after %d bytes of records with an hour's delay, %d bytes written, want all", maxPendingLog, got)
	}
}
