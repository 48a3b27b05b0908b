package observe

import (
	"context"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// UsageOptions configures [Usage]. The zero value records no argument
// values.
type UsageOptions struct {
	// LogArguments adds the call's arguments, passed through Redact and cut
	// to MaxArgumentBytes, to each record as the field "arguments". false
	// (the default) records only their size (bytes_in).
	LogArguments bool
	// Redact rewrites the arguments' JSON text before it is logged; it is
	// required when LogArguments is true. Without it arguments are never
	// logged (Usage warns once at construction): an argument can carry a
	// credential or personal data. A good choice is the catalog redactor's
	// RedactJSON (key-aware), falling back to RedactString when the text is
	// not valid JSON.
	Redact func(string) string
	// MaxArgumentBytes bounds the logged arguments, cut after redaction
	// (so that a cut cannot hide a secret from the redactor) and marked
	// "…"; 0 means 1024, a negative value means no limit.
	MaxArgumentBytes int
}

// Usage returns a middleware that writes one record per call to log at
// Info, message "tool call", with the fields:
//
//	tool         the tool name
//	caller       Call.Caller.Key() ("" when unknown)
//	transport    Call.Transport
//	status       the upstream HTTP status (0: no answer)
//	outcome      Outcome.Kind.String(): ok, bad_arguments, busy, ...
//	duration     the call as this middleware saw it (queueing inside it included)
//	upstream_ms  time spent on the upstream, only when a request was sent
//	bytes_in     size of the arguments
//	bytes_out    size of the upstream body
//	retries      upstream attempts after the first
//	retry_after  only for refusals that say when to retry (busy, rate_limited)
//	arguments    only with UsageOptions.LogArguments, redacted
//
// Argument values are never written otherwise, nor is Outcome.Detail (an
// argument validation reason may quote a value; the catalog already logs
// the detail of failures). A protocol error from the chain is recorded as
// tool_error and returned unchanged, not logged. A nil log means no
// records.
func Usage(log *zap.Logger, opts UsageOptions) bridge.Middleware {
	if log == nil {
		log = zap.NewNop()
	}
	if opts.LogArguments && opts.Redact == nil {
		log.Warn("usage records: arguments are not logged: LogArguments needs a Redact function")
		opts.LogArguments = false
	}
	if opts.MaxArgumentBytes == 0 {
		opts.MaxArgumentBytes = 1024
	}
	return func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			start := time.Now()
			out, err := next.Invoke(ctx, c)
			if ce := log.Check(zap.InfoLevel, "tool call"); ce != nil {
				ce.Write(usageFields(c, out, time.Since(start), opts)...)
			}
			return out, err
		})
	}
}

func usageFields(c *bridge.Call, out *bridge.Outcome, took time.Duration, opts UsageOptions) []zapcore.Field {
	o := bridge.Outcome{Kind: bridge.ToolError}
	if out != nil {
		o = *out
	}
	bytesIn := o.BytesIn
	if bytesIn == 0 { // an outcome a middleware made has none yet
		bytesIn = int64(len(c.Args))
	}
	fields := make([]zapcore.Field, 0, 12)
	fields = append(fields,
		zap.String("tool", toolName(c)),
		zap.String("caller", c.Caller.Key()),
		zap.String("transport", c.Transport),
		zap.Int("status", o.Status),
		zap.String("outcome", o.Kind.String()),
		zap.Duration("duration", took),
	)
	if o.Attempts > 0 {
		fields = append(fields, zap.Float64("upstream_ms", float64(o.Upstream.Microseconds())/1000))
	}
	fields = append(fields,
		zap.Int64("bytes_in", bytesIn),
		zap.Int64("bytes_out", o.BytesOut),
		zap.Int("retries", retries(&o)),
	)
	if o.RetryAfter > 0 {
		fields = append(fields, zap.Duration("retry_after", o.RetryAfter))
	}
	if opts.LogArguments && len(c.Args) > 0 {
		fields = append(fields, zap.String("arguments", cut(opts.Redact(string(c.Args)), opts.MaxArgumentBytes)))
	}
	return fields
}

// cut shortens s to at most max bytes on a rune boundary, marking the cut
// with "…"; a negative max means no limit.
func cut(s string, max int) string {
	if max < 0 || len(s) <= max {
		return s
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
