// Package transport serves an *mcp.Server to MCP clients: over stdio, and over
// HTTP as streamable HTTP (/mcp, stateless by default) plus the legacy
// 2024-11-05 HTTP+SSE transport (GET /sse, POST /messages?sessionId=...).
//
// Its one job is the wire: routing, the HTTP contract (202 for notifications,
// 400 with a JSON-RPC parse error for malformed JSON, 405 with Allow, 404 for
// unknown sessions, 408 for a body that does not arrive, 413 past the body
// limit, 429 and 503 past the session and stream caps), Origin and Host
// validation, inbound authentication (static API keys or JWTs verified
// against a JWKS), RFC 9728 protected resource metadata, SSE keepalive
// comments, /health and /ready, and graceful shutdown. The protocol itself
// (JSON-RPC messages, sessions, SSE events) is go-sdk's: this package composes
// mcp.NewStreamableHTTPHandler and mcp.SSEServerTransport and adds only what
// they lack. Over stdio it has its own mcp.Connection (stdio_conn.go): each
// line is checked and decoded once before go-sdk sees it, where go-sdk's
// mcp.IOTransport would decode it twice more, and a result is written as
// go-sdk marshaled it. PollableStdio lets a host's pipes or sockets be
// served by Go's poller instead of a thread blocked in read(2).
//
// Bounded by default. Every limit has a safe non-zero default that the
// options can raise but not remove: message size and JSON nesting depth (on
// stdio, a bad line is answered with a JSON-RPC error and the session goes
// on), the time a request body may take, and the number of stateful
// sessions and legacy SSE streams, in total and per caller.
//
// Identity. The authenticated principal reaches tool handlers as
// mcp.RequestExtra.TokenInfo (UserID "api-key:N" or "jwt:ISS|SUB", and the
// token's Scopes) on every HTTP transport, legacy SSE included. With auth
// off, handlers get no TokenInfo; the caps then count per remote address.
//
// Credentials. The inbound Authorization and X-API-Key headers are consumed
// here: after a request is authenticated they are deleted from the request
// that reaches go-sdk, so neither tool handlers (which see the request headers
// through mcp.RequestExtra) nor anything they call can forward or log the
// client's credential. This package never logs header values or tokens.
//
// Imports: go-sdk, net/http, zap, golang-jwt and keyfunc only. It must not
// import bridge, specloader, whitelist or viper: it serves whatever
// *mcp.Server it is given and knows nothing about OpenAPI or configuration
// files.
package transport
