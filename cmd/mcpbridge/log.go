package main

import (
	"io"
	"log/slog"

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
	return slog.New(zapslog.NewHandler(log.Core(), zapslog.WithName("go-sdk")))
}
