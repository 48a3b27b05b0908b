package zapredact_test

import (
	"errors"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mcpbridge/mcpbridge/sanitizer"
	"github.com/mcpbridge/mcpbridge/sanitizer/zapredact"
)

func ExampleWrap() {
	r, err := sanitizer.New(sanitizer.Rules{Secrets: []string{"upstream-key-123"}})
	if err != nil {
		panic(err)
	}
	cfg := zap.NewProductionEncoderConfig()
	cfg.TimeKey = "" // a stable output for the example
	core := zapcore.NewCore(zapcore.NewJSONEncoder(cfg), zapcore.AddSync(os.Stdout), zapcore.InfoLevel)
	log := zap.New(zapredact.Wrap(core, r))
	log.Warn("upstream rejected upstream-key-123",
		zap.String("password", "hunter2"),
		zap.Error(errors.New("401: Bearer abcdefghijklmnop")))
	// Output:
	// {"level":"warn","msg":"upstream rejected [REDACTED]","password":"[REDACTED]","error":"401: Bearer [REDACTED]"}
}
