// Package bridge turns selected OpenAPI operations into MCP tools and runs
// each tool call as one HTTP request to the upstream API.
//
// Building happens once, in [New]: every tool gets a sanitized name, a
// description, annotations, a resolved input schema (always type object), an
// optional output schema, and a precompiled request plan. Handlers are
// closures over that prepared tool, so a call never walks the spec.
//
// A call validates its arguments, builds the request toward the configured
// base URL only, runs it through a [Doer] (normally go-retryablehttp with an
// idempotent-only retry policy), and maps the response to a
// CallToolResult after redaction by the sanitizer. Tool failures (bad
// arguments, upstream status >= 400, timeouts, limits) are IsError results;
// a Go error leaves a handler only for a real bug.
//
// bridge must not import specloader, transport, viper, or read environment
// variables or files: it receives a parsed document's operations and plain
// options.
package bridge
