package trace

import (
	"context"
	"net/http"
	"net/url"
	"sync/atomic"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

// ScopeName is the instrumentation scope of the call spans.
const ScopeName = "github.com/mcpbridge/mcpbridge/bridge/trace"

// The attribute keys of a call span (see the package documentation).
const (
	MethodKey    = attribute.Key("mcp.method.name")
	OperationKey = attribute.Key("gen_ai.operation.name")
	ToolKey      = attribute.Key("gen_ai.tool.name")
	TransportKey = attribute.Key("mcpbridge.transport")
	CallerKey    = attribute.Key("mcpbridge.caller")
	OutcomeKey   = attribute.Key("mcpbridge.outcome")
	StatusKey    = attribute.Key("http.response.status_code")
	AttemptsKey  = attribute.Key("mcpbridge.attempts")
	ErrorTypeKey = attribute.Key("error.type")
	// ResendKey is set on the attempt spans after the first of a call: 1
	// for the first retry or redirect hop, 2 for the next (semantic
	// conventions' http.request.resend_count).
	ResendKey = attribute.Key("http.request.resend_count")
)

// Middleware returns a middleware that wraps every call in a span from tp,
// a child of the span context ctx carries, and puts the span in the
// context the rest of the chain and the upstream request see. A nil tp
// returns a middleware that adds nothing to the chain.
//
// Placed right after the metrics middleware, the span covers the whole
// call as the client sees it: a call refused by a limit further in is a
// span too (outcome busy, no attempt).
func Middleware(tp oteltrace.TracerProvider) bridge.Middleware {
	if tp == nil {
		return func(next bridge.Invoker) bridge.Invoker { return next }
	}
	tracer := tp.Tracer(ScopeName)
	return func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			name := toolName(c)
			kind := oteltrace.SpanKindServer
			if c.Transport == "cli" {
				kind = oteltrace.SpanKindInternal
			}
			ctx, span := tracer.Start(ctx, "tools/call "+name, oteltrace.WithSpanKind(kind), oteltrace.WithAttributes(
				MethodKey.String("tools/call"),
				OperationKey.String("execute_tool"),
				ToolKey.String(name),
				TransportKey.String(c.Transport),
			))
			defer span.End()
			if !span.IsRecording() {
				// Not sampled: the span context still travels upstream.
				return next.Invoke(ctx, c)
			}
			if key := c.Caller.Key(); key != "" {
				span.SetAttributes(CallerKey.String(key))
			}
			ctx = context.WithValue(ctx, attemptsKey{}, new(atomic.Int32))
			out, err := next.Invoke(ctx, c)
			end(span, out, err)
			return out, err
		})
	}
}

// end records how the call ended on its span.
func end(span oteltrace.Span, out *bridge.Outcome, err error) {
	kind := bridge.ToolError // a protocol error (a bug): no outcome
	if out != nil && err == nil {
		kind = out.Kind
	}
	label := kind.String()
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, OutcomeKey.String(label))
	if out != nil {
		if out.Status > 0 {
			attrs = append(attrs, StatusKey.Int(out.Status))
		}
		if out.Attempts > 0 {
			attrs = append(attrs, AttemptsKey.Int(out.Attempts))
		}
	}
	if kind != bridge.OK {
		attrs = append(attrs, ErrorTypeKey.String(label))
		span.SetStatus(codes.Error, label)
	}
	span.SetAttributes(attrs...)
}

// toolName is the tool the call runs: the operation behind call_operation.
func toolName(c *bridge.Call) string {
	if t := c.Target(); t != nil {
		return t.Name()
	}
	return c.Tool
}

// attemptsKey carries the *atomic.Int32 counting a call's upstream
// requests, for http.request.resend_count.
type attemptsKey struct{}

// Transport returns the upstream.Options.Transport hook that sends every
// upstream attempt (each retry and redirect hop) in a client span from tp,
// a child of the call span, and injects its W3C traceparent (and
// tracestate) into the request. A nil tp returns nil: no hook.
//
// The span is otelhttp's ("HTTP GET", http.request.method, server.address,
// http.response.status_code, ...), but its url.full is only the
// upstream's origin (scheme://host[:port]): the path and query would
// record argument values and any query credential. No metrics are
// recorded.
func Transport(tp oteltrace.TracerProvider) func(http.RoundTripper) http.RoundTripper {
	if tp == nil {
		return nil
	}
	return func(base http.RoundTripper) http.RoundTripper {
		return unwrapAttempt{otelhttp.NewTransport(attempt{base},
			otelhttp.WithTracerProvider(tp),
			otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
			otelhttp.WithPropagators(propagation.TraceContext{}),
		)}
	}
}

// attempt runs inside otelhttp's span, after otelhttp set the request
// attributes: it replaces url.full and counts the attempt.
type attempt struct{ next http.RoundTripper }

func (a attempt) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	if span := oteltrace.SpanFromContext(ctx); span.IsRecording() {
		attrs := []attribute.KeyValue{attribute.String("url.full", origin(r.URL))}
		if n, ok := ctx.Value(attemptsKey{}).(*atomic.Int32); ok {
			if i := n.Add(1); i > 1 {
				attrs = append(attrs, ResendKey.Int(int(i-1)))
			}
		}
		span.SetAttributes(attrs...)
	}
	resp, err := a.next.RoundTrip(r)
	if err != nil {
		return nil, attemptError{err}
	}
	return resp, nil
}

// attemptError is a failed attempt's error as otelhttp sees it: it puts
// the text in the span's status, and Go's transport quotes the upstream's
// bytes in some (a header line without a colon, whole), which may echo a
// credential. Its text is what the client is told (upstream.FailureKind);
// unwrapAttempt hands the caller the error itself. error.type names this
// type.
type attemptError struct{ err error }

func (e attemptError) Error() string { return upstream.FailureKind(e.err) }
func (e attemptError) Unwrap() error { return e.err }

// unwrapAttempt is otelhttp's transport returning the attempt's own error.
type unwrapAttempt struct{ next http.RoundTripper }

func (u unwrapAttempt) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := u.next.RoundTrip(r)
	if ae, ok := err.(attemptError); ok {
		return resp, ae.err
	}
	return resp, err
}

// origin is scheme://host[:port] of u.
func origin(u *url.URL) string {
	if u == nil {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}

// HTTPContext returns next with the W3C trace context of each request's
// traceparent and tracestate headers in the request's context, so that
// calls a plain HTTP handler (the REST facade) hands to the runtime are
// children of the client's span.
func HTTPContext(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("traceparent") != "" {
			r = r.WithContext(propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		next.ServeHTTP(w, r)
	})
}
