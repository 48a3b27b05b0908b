// Package bridge turns selected OpenAPI operations into MCP tools and runs
// every tool call through one call path.
//
// Provisioning builds a [Catalog] once per spec and whitelist ([New], or
// [NewDegraded] when the spec could not be loaded): every tool gets a
// sanitized name, a description, annotations, an input schema (always type
// object), an optional output schema and a precompiled request plan. A
// catalog is immutable; a reload builds a new one.
//
// A [Runtime] serves one catalog at a time and swaps it atomically
// ([Runtime.Swap]). Every caller (the MCP tools of package mcpx today; the
// REST facade, the CLI call and dynamic meta-tools later) goes through
// [Runtime.Call]:
//
//	Runtime.Call(ctx, &Call{Tool, Args, Caller, Transport, Progress})
//	  └─ the tool is taken from the current catalog, once
//	  └─ middleware chain (metrics, usage, limits, ... in the order given)
//	       └─ invoker: decode + validate → request.Plan.Build → upstream
//	          client (retries for idempotent calls) → result.Shaper (redact,
//	          structured content) → Outcome{Result, Kind, Status, Attempts,
//	          BytesIn, BytesOut, Took, Upstream, Detail}
//
// Tool failures (bad arguments, upstream status >= 400, timeouts, limits)
// are IsError results classified by an [ErrorKind]; a Go error leaves
// Call only for an unknown tool or a real bug.
//
// Each concern lives in a subpackage with one job, imported one way (the
// root imports them; none imports the root except mcpx):
//
//	media     one media-type classifier for requests and responses
//	schema    OpenAPI schema → JSON Schema 2020-12, marshaling, lazy validators
//	request   parameter and body serialization, credentials, server URLs
//	upstream  the HTTP client: retries, redirects, bounded reads
//	result    upstream answer → CallToolResult, redacted
//	mcpx      MCP exposure: registration, diffing on swap, progress, identity
//
// bridge must not import specloader, transport, viper, or read environment
// variables or files: it receives a parsed document's operations and plain
// options.
package bridge
