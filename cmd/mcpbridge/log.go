package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
)

// newLogger builds the process logger and the logger of the per-call usage
// records, with the function that writes the waiting records when the
// process is done (later records are then written at once). Both write to w (stderr) only: in stdio mode stdout belongs to
// the protocol. The usage records may wait up to usageDelay in a buffer
// (see logSink), so that a call's answer does not wait for a write(2) of
// its record; every other line is written at once, after the records
// before it.
func newLogger(w io.Writer, level, format string) (log, usage *zap.Logger, flush func() error, err error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, nil, nil, err
	}
	encCfg := zap.NewProductionEncoderConfig()
	encCfg.EncodeTime = zapcore.ISO8601TimeEncoder
	var enc zapcore.Encoder
	if format == "json" {
		enc = zapcore.NewJSONEncoder(encCfg)
	} else {
		encCfg.EncodeLevel = zapcore.CapitalLevelEncoder
		enc = zapcore.NewConsoleEncoder(encCfg)
	}
	sink := newLogSink(w, usageDelay)
	log = zap.New(zapcore.NewCore(enc, sink, lvl))
	usage = zap.New(zapcore.NewCore(enc.Clone(), deferredSink{sink}, lvl))
	return log, usage, sink.stop, nil
}

// usageDelay bounds how long a usage record waits in the buffer. Over
// stdio with small answers, the record's write(2) before each answer cost
// ~0.1x of the bridge's overhead over the floor (mcpbench's harness,
// interleaved; the same as turning the records off); 50 ms keeps
// `tail -f` live to the eye.
const usageDelay = 50 * time.Millisecond

// maxPendingLog is how many bytes of usage records may wait before they
// are written at once, whatever the delay.
const maxPendingLog = 64 << 10

// logSink is the log's writer: lines written through it go out at once,
// after any usage records still waiting; records written through its
// deferredSink wait in a buffer until the next line, usageDelay, 64 KiB of
// them, or Sync (the logger's Sync at exit), whichever comes first. So the
// order of lines on stderr is the order they were logged, and nothing is
// lost on a clean exit; a crash loses at most usageDelay of records.
type logSink struct {
	mu      sync.Mutex
	w       io.Writer
	delay   time.Duration
	pending []byte
	timer   *time.Timer // armed while pending holds records
	armed   bool
	stopped bool // after stop: records are written at once
}

func newLogSink(w io.Writer, delay time.Duration) *logSink {
	return &logSink{w: w, delay: delay}
}

// Write writes the pending records, then p (even if they failed).
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ferr := s.flushLocked()
	n, err := s.w.Write(p)
	return n, errors.Join(ferr, err)
}

// stop writes the pending records, and every record after them at once:
// a handler that outlives the shutdown still gets its record out.
func (s *logSink) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	return s.flushLocked()
}

// Sync writes the pending records.
func (s *logSink) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flushLocked()
}

// later buffers p (zap reuses its buffer after Write returns, so it is
// copied) and makes sure it is written within the delay.
func (s *logSink) later(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.w.Write(p)
	}
	s.pending = append(s.pending, p...)
	if len(s.pending) >= maxPendingLog {
		return len(p), s.flushLocked()
	}
	if !s.armed {
		s.armed = true
		if s.timer == nil {
			s.timer = time.AfterFunc(s.delay, func() { _ = s.Sync() }) // stderr errors are not actionable
		} else {
			s.timer.Reset(s.delay)
		}
	}
	return len(p), nil
}

func (s *logSink) flushLocked() error {
	if s.armed {
		s.timer.Stop()
		s.armed = false
	}
	if len(s.pending) == 0 {
		return nil
	}
	_, err := s.w.Write(s.pending)
	if cap(s.pending) > maxPendingLog {
		s.pending = nil // a burst's buffer is not kept
	} else {
		s.pending = s.pending[:0]
	}
	return err
}

// deferredSink is the logSink's entrance for lines that may wait.
type deferredSink struct{ s *logSink }

func (d deferredSink) Write(p []byte) (int, error) { return d.s.later(p) }
func (d deferredSink) Sync() error                 { return d.s.Sync() }

// slogFor adapts the zap logger for go-sdk, which wants *slog.Logger. The
// SDK's session chatter is shown only at debug level.
func slogFor(log *zap.Logger) *slog.Logger {
	if !log.Core().Enabled(zapcore.DebugLevel) {
		log = log.WithOptions(zap.IncreaseLevel(zapcore.WarnLevel))
	}
	h := zapslog.NewHandler(log.Core(), zapslog.WithName("go-sdk"),
		// A stack trace in the log says "bug"; go-sdk's errors are not ours.
		zapslog.AddStacktraceAt(slog.LevelError+100))
	return slog.New(quietStop{h})
}

// quietStop lowers go-sdk's "server run cancelled" ERROR to debug: it is
// how every clean stop (SIGINT, SIGTERM, the client quitting) ends, and an
// ERROR at each quit would fill Claude Desktop's logs with false alarms.
type quietStop struct{ slog.Handler }

func (q quietStop) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && undelivered(r) {
		// A list_changed notification to a stateless HTTP session, which
		// has no stream to carry it: expected, and nothing is lost (the
		// client lists the tools on its next connection).
		r = slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
		if !q.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
	}
	if r.Level >= slog.LevelError && r.Message == "server run cancelled" {
		r = slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
		if !q.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
	}
	return q.Handler.Handle(ctx, r)
}

// undelivered reports a go-sdk record about a notification that found no
// stream ("undelivered message: stream not connected").
func undelivered(r slog.Record) bool {
	found := strings.Contains(r.Message, "undelivered message")
	r.Attrs(func(a slog.Attr) bool {
		if strings.Contains(a.Value.String(), "undelivered message") {
			found = true
			return false
		}
		return true
	})
	return found
}

func (q quietStop) WithAttrs(as []slog.Attr) slog.Handler { return quietStop{q.Handler.WithAttrs(as)} }
func (q quietStop) WithGroup(n string) slog.Handler       { return quietStop{q.Handler.WithGroup(n)} }
