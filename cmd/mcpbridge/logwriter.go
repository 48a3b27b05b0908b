package main

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// maxLogBacklog is how many bytes of log lines may wait for stderr; past
// it, lines are dropped (see asyncWriter).
const maxLogBacklog = 1 << 20

// logFlushTimeout bounds how long the exit waits for the waiting lines to
// reach stderr: a host that never reads it must not keep the process alive.
const logFlushTimeout = time.Second

// asyncWriter writes log lines to w (stderr) off the caller's goroutine, so
// that logging never blocks serving: a host that never reads the bridge's
// stderr fills the pipe (64 KiB on Linux), after which every write(2) to
// it blocks, and with it the goroutine that logged (the stdio read loop,
// a call's handler). Write queues p and returns at once; one goroutine,
// started when the queue fills and gone once it is empty, writes the queue
// in order. Past maxLogBacklog waiting bytes, lines are dropped, counted;
// the first line that finds room again is preceded by notice(n), one line
// saying that n lines were dropped. Write never fails: a failing stderr
// loses the logs, not the server (and zap would report the error on
// stderr itself, blocking).
type asyncWriter struct {
	w      io.Writer
	notice func(dropped int) []byte

	mu      sync.Mutex
	buf     []byte        // lines waiting for the writer goroutine
	spare   []byte        // the buffer last written, reused
	dropped int           // lines dropped since the last notice
	idle    chan struct{} // closed when the writer goroutine ends; nil while none runs
}

func newAsyncWriter(w io.Writer, notice func(dropped int) []byte) *asyncWriter {
	return &asyncWriter{w: w, notice: notice}
}

// Write queues p, one or more whole lines, or drops them if the backlog
// is full.
func (a *asyncWriter) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.buf) > 0 && len(a.buf)+len(p) > maxLogBacklog {
		a.dropped += max(1, bytes.Count(p, []byte{'\n'}))
		return len(p), nil
	}
	a.noteDroppedLocked()
	a.buf = append(a.buf, p...)
	a.startLocked()
	return len(p), nil
}

// noteDroppedLocked queues the notice of the lines dropped so far.
func (a *asyncWriter) noteDroppedLocked() {
	if a.dropped > 0 {
		a.buf = append(a.buf, a.notice(a.dropped)...)
		a.dropped = 0
	}
}

// startLocked starts the writer goroutine if none runs.
func (a *asyncWriter) startLocked() {
	if a.idle == nil && len(a.buf) > 0 {
		a.idle = make(chan struct{})
		go a.run(a.idle)
	}
}

// run writes the queue until it is empty.
func (a *asyncWriter) run(idle chan struct{}) {
	a.mu.Lock()
	for len(a.buf) > 0 {
		out := a.buf
		a.buf, a.spare = a.spare[:0], nil
		a.mu.Unlock()
		_, _ = a.w.Write(out) // stderr errors are not actionable
		a.mu.Lock()
		if cap(out) <= 64<<10 {
			a.spare = out // a burst's buffer is not kept
		}
	}
	a.idle = nil
	a.mu.Unlock()
	close(idle)
}

// Sync queues the notice of lines dropped last, and waits for the queue to
// reach stderr, for at most logFlushTimeout (a stderr nobody reads never
// takes it).
func (a *asyncWriter) Sync() error {
	a.mu.Lock()
	a.noteDroppedLocked()
	a.startLocked()
	idle := a.idle
	a.mu.Unlock()
	if idle == nil {
		return nil
	}
	t := time.NewTimer(logFlushTimeout)
	defer t.Stop()
	select {
	case <-idle:
	case <-t.C:
	}
	return nil
}
