package main

import (
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
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

// waitFor waits for s on stderr (lines reach it from asyncWriter's
// goroutine) and returns what was written.
func (w *lineWriter) waitFor(t *testing.T, s string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := w.all()
		if strings.Contains(got, s) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q not written; stderr holds %q", s, got)
		}
		time.Sleep(time.Millisecond)
	}
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
	log, usage, _, flush, err := newLogger(w, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	usage.Info("tool call")
	if n := w.count(); n != 0 {
		t.Fatalf("the usage record was written at once (%d writes)", n)
	}
	log.Warn("upstream error status")
	got := w.waitFor(t, `"upstream error status"`)
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
	usage.Info("late call")
	w.waitFor(t, `"late call"`)
}

// TestLogSinkFlushesWithinDelay: a waiting record goes out by itself once
// the delay passes, encoded with the time it was logged at, and a burst of
// maxPendingRecords is written at once.
func TestLogSinkFlushesWithinDelay(t *testing.T) {
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	w := newLineWriter()
	s := newLogSink(w, time.Millisecond)
	usage := zap.New(deferredCore{LevelEnabler: zapcore.InfoLevel, enc: enc, sink: s}).With(zap.String("logger", "usage"))
	usage.Info("one", zap.Int("n", 1))
	w.awaitWrite(t, "a waiting record")
	if got := w.all(); !strings.Contains(got, `"msg":"one"`) || !strings.Contains(got, `"n":1`) || !strings.Contains(got, `"logger":"usage"`) {
		t.Fatalf("stderr %q, want the record with its fields and the logger's", got)
	}
	// The timer is armed again for the next record.
	usage.Info("two")
	w.awaitWrite(t, "the second waiting record")

	big := newLineWriter()
	s = newLogSink(big, time.Hour)
	usage = zap.New(deferredCore{LevelEnabler: zapcore.InfoLevel, enc: enc, sink: s})
	for range maxPendingRecords {
		usage.Info("tool call")
	}
	if got := strings.Count(big.all(), "tool call"); got != maxPendingRecords {
		t.Errorf("after %d records with an hour's delay, %d written, want all", maxPendingRecords, got)
	}
}

// TestSlogForErrorLevel: with --log-level error, adapting the logger for
// go-sdk must not raise zap's "failed to IncreaseLevel" complaint on
// stderr at every start (warn is below the core's level, not above it).
func TestSlogForErrorLevel(t *testing.T) {
	var errOut strings.Builder
	var mu sync.Mutex
	sink := zapcore.AddSync(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return errOut.Write(p)
	}))
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(nopWriter{}), zapcore.ErrorLevel)
	slogFor(zap.New(core, zap.ErrorOutput(sink)))
	mu.Lock()
	defer mu.Unlock()
	if errOut.Len() != 0 {
		t.Errorf("slogFor wrote to the error output: %q", errOut.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
