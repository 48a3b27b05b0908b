// Package trace adds OpenTelemetry tracing to the call path: one span per
// tool call ([Middleware]), a child span per upstream attempt with the W3C
// traceparent sent to the upstream ([Transport], for
// upstream.Options.Transport), and the provider that exports them over
// OTLP/HTTP ([NewProvider]).
//
// A call span is named "tools/call TOOL" (the MCP semantic conventions'
// "{mcp.method.name} {target}"), of kind server (internal for the CLI's
// call command), and carries:
//
//	mcp.method.name            "tools/call"
//	gen_ai.operation.name      "execute_tool"
//	gen_ai.tool.name           the tool name
//	mcpbridge.transport        Call.Transport: stdio, http, rest, cli
//	mcpbridge.caller           Call.Caller.Key(), when known (never a secret)
//	mcpbridge.outcome          Outcome.Kind.String(): ok, upstream_5xx, busy, ...
//	http.response.status_code  the upstream's HTTP status, when it answered
//	mcpbridge.attempts         upstream requests sent, when any
//	error.type                 the outcome label, for every outcome but ok
//
// and status Error for every outcome but ok (the description is the outcome
// label). Argument values are never recorded, nor Outcome.Detail (a
// validation reason may quote one). An attempt span is otelhttp's client
// span, whose url.full keeps only the upstream's origin: the path and query
// carry argument values and may carry a query credential. A failed
// attempt's status says what the client is told, not Go's error (which
// may quote the upstream's bytes, a credential it echoed among them).
//
// The parent of a call span is whatever span context ctx carries when the
// call enters the runtime: the MCP exposure (bridge/mcpx) extracts the
// client's traceparent from params._meta or the HTTP request's headers, and
// [HTTPContext] does it for plain HTTP handlers such as the REST facade.
//
// The default exporter is this package's own (otlphttp.go, otlpproto.go):
// OTLP/HTTP with the protobuf encoding (application/x-protobuf), the one
// every collector accepts, written field by field with protowire. It
// replaces OpenTelemetry's otlptracehttp, whose configuration package links
// gRPC and whose request types bring grpc-gateway: 11 MB of binary and
// 3.5 MiB of idle RSS for a client that only POSTs. protowire is the wire
// primitives alone; the generated types and their reflection runtime are
// not needed (the binary still holds the runtime, for Prometheus). The
// messages written are frozen by OTLP's stability guarantees, and the
// tests decode them with the generated types. The exporter reads the
// OTEL_EXPORTER_OTLP_[TRACES_]{ENDPOINT,HEADERS,TIMEOUT,COMPRESSION,
// CERTIFICATE,CLIENT_CERTIFICATE,CLIENT_KEY} variables, retries 429, 502,
// 503, 504 and failed connections (at most 5 attempts, backoff or
// Retry-After, within the export timeout), reads at most 64 KiB of an
// answer, and never quotes a header value: they carry API keys.
//
// Every function takes its TracerProvider explicitly; nothing here reads or
// sets OpenTelemetry's process-wide provider or propagator. A nil provider
// turns the piece off at no cost.
package trace
