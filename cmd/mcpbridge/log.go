package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
)

// newLogger builds the process logger and the logger of the per-call usage
// records, with the function that writes the waiting records when the
// process is done (later records are then written at once). Both write to
// w (stderr) only: in stdio mode stdout belongs to the protocol. A usage
// record waits up to usageDelay (see logSink), neither encoded nor
// written, so that a call's answer waits for neither; every other line is
// written at once, after the records before it. notes writes text for a
// person (the demo's note) in line with the log, never blocking either.
func newLogger(w io.Writer, level, format string) (log, usage *zap.Logger, notes io.Writer, flush func() error, err error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, nil, nil, nil, err
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
	// Lines reach w through asyncWriter: a host that never reads stderr
	// must not stall the server.
	note := enc.Clone()
	sink := newLogSink(newAsyncWriter(w, func(n int) []byte { return droppedNotice(note, n) }), usageDelay)
	log = zap.New(zapcore.NewCore(enc, sink, lvl))
	usage = zap.New(deferredCore{LevelEnabler: lvl, enc: enc.Clone(), sink: sink})
	return log, usage, sink, sink.stop, nil
}

// droppedNotice is the log line, in the log's format, saying that n lines
// were dropped because stderr was not read.
func droppedNotice(enc zapcore.Encoder, n int) []byte {
	ent := zapcore.Entry{Level: zapcore.WarnLevel, Time: time.Now(), Message: "log lines dropped: stderr was not being read"}
	buf, err := enc.EncodeEntry(ent, []zapcore.Field{zap.Int("dropped", n)})
	if err != nil { // cannot happen: a fixed entry
		return nil
	}
	defer buf.Free()
	return slices.Clone(buf.Bytes())
}

// usageDelay bounds how long a usage record waits. Over stdio with small
// answers, the record's write(2) before each answer cost ~0.1x of the
// bridge's overhead over the floor (mcpbench's harness, interleaved; the
// same as turning the records off); 50 ms keeps `tail -f` live to the eye.
const usageDelay = 50 * time.Millisecond

// maxPendingRecords is how many usage records may wait before they are
// written at once, whatever the delay.
const maxPendingRecords = 256

// record is a usage record waiting to be encoded and written.
type record struct {
	enc    zapcore.Encoder // the logger's encoder, with its With fields
	ent    zapcore.Entry
	fields []zapcore.Field
}

// logSink is the log's writer: lines written through it go out at once,
// after any usage records still waiting; records handed to it by
// deferredCore wait, as entries, until the next line, usageDelay,
// maxPendingRecords of them, or stop (at exit), whichever comes first. So
// the order of lines on stderr is the order they were logged (each record
// keeps the time it was logged at), and nothing is lost on a clean exit; a
// crash loses at most usageDelay of records.
type logSink struct {
	mu      sync.Mutex
	w       io.Writer
	delay   time.Duration
	pending []record
	out     []byte      // the encoded records of a flush, reused
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
// a handler that outlives the shutdown still gets its record out. Then it
// waits, a bounded time, for the lines to reach stderr (syncWriter).
func (s *logSink) stop() error {
	s.mu.Lock()
	s.stopped = true
	err := s.flushLocked()
	s.mu.Unlock()
	return errors.Join(err, s.syncWriter())
}

// Sync writes the pending records and waits, a bounded time, for them to
// reach stderr.
func (s *logSink) Sync() error {
	return errors.Join(s.flush(), s.syncWriter())
}

// flush writes the pending records (to the asyncWriter: at once).
func (s *logSink) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flushLocked()
}

// syncWriter syncs w, if it can be, without the lock: loggers must not
// wait for stderr.
func (s *logSink) syncWriter() error {
	if ws, ok := s.w.(interface{ Sync() error }); ok {
		return ws.Sync()
	}
	return nil
}

// add keeps r (its fields copied: the caller's slice is not ours) and
// makes sure it is written within the delay.
func (s *logSink) add(r record) error {
	r.fields = slices.Clone(r.fields)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, r)
	if s.stopped || len(s.pending) >= maxPendingRecords {
		return s.flushLocked()
	}
	if !s.armed {
		s.armed = true
		if s.timer == nil {
			s.timer = time.AfterFunc(s.delay, func() { _ = s.flush() }) // stderr errors are not actionable
		} else {
			s.timer.Reset(s.delay)
		}
	}
	return nil
}

// flushLocked encodes the pending records and writes them in one call.
func (s *logSink) flushLocked() error {
	if s.armed {
		s.timer.Stop()
		s.armed = false
	}
	if len(s.pending) == 0 {
		return nil
	}
	var errs []error
	out := s.out[:0]
	for i, r := range s.pending {
		buf, err := r.enc.EncodeEntry(r.ent, r.fields)
		if err != nil {
			errs = append(errs, err)
		} else {
			out = append(out, buf.Bytes()...)
			buf.Free()
		}
		s.pending[i] = record{}
	}
	s.pending = s.pending[:0]
	if _, err := s.w.Write(out); err != nil {
		errs = append(errs, err)
	}
	if cap(out) <= 64<<10 {
		s.out = out // a burst's buffer is not kept
	}
	return errors.Join(errs...)
}

// deferredCore is the usage records' zap core: Write hands the entry and
// its fields to the logSink, which encodes them when it writes them out,
// off the call's path. The fields must be values (zap.String, zap.Int, ...),
// not objects that may change before then; observe.Usage writes only such.
type deferredCore struct {
	zapcore.LevelEnabler
	enc  zapcore.Encoder
	sink *logSink
}

func (c deferredCore) With(fields []zapcore.Field) zapcore.Core {
	enc := c.enc.Clone()
	for _, f := range fields {
		f.AddTo(enc)
	}
	return deferredCore{LevelEnabler: c.LevelEnabler, enc: enc, sink: c.sink}
}

func (c deferredCore) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(ent.Level) {
		return ce.AddCore(ent, c)
	}
	return ce
}

func (c deferredCore) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	return c.sink.add(record{enc: c.enc, ent: ent, fields: fields})
}

func (c deferredCore) Sync() error { return c.sink.Sync() }

// slogFor adapts the zap logger for go-sdk, which wants *slog.Logger. The
// SDK's session chatter is shown only at debug level.
func slogFor(log *zap.Logger) *slog.Logger {
	// A core above warn (--log-level error) needs no raise; zap refuses a
	// lowering with a complaint on stderr.
	if !log.Core().Enabled(zapcore.DebugLevel) && log.Core().Enabled(zapcore.WarnLevel) {
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
