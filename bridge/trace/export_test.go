package trace

import (
	"os"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// NewOTLPExporter is the default exporter, configured from the
// environment, with every backoff wait set to wait.
func NewOTLPExporter(wait time.Duration) (sdktrace.SpanExporter, error) {
	cfg, err := otlpConfigFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	e := newOTLPExporter(cfg)
	e.waitMin, e.waitMax = wait, wait
	return e, nil
}

// RetryAfter is retryAfter.
var RetryAfter = retryAfter
