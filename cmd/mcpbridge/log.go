package main

import (
	"context"
	"io"
	"log/slog"
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
)

// newLogger builds the process logger. It writes to w (stderr) only: in
// stdio mode stdout belongs to the protocol.
func newLogger(w io.Writer, level, format string) (*zap.Logger, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return nil, err
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
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), lvl)
	return zap.New(core), nil
}

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
