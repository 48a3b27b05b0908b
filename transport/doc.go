// Package transport serves an *mcp.Server to MCP clients: over stdio, and over
// HTTP as streamable HTTP (/mcp, stateless by default) plus the legacy
// 2024-11-05 HTTP+SSE transport (GET /sse, POST /messages?sessionId=...).
//
// Its one job is the wire: routing, the HTTP contract (202 for notifications,
// 400 with a JSON-RPC parse error for malformed JSON, 405 with Allow, 404 for
// unknown sessions, 413 past the body limit), Origin and Host validation,
// inbound authentication (static API keys or JWTs verified against a JWKS),
// RFC 9728 protected resource metadata, SSE keepalive comments, /health and
// /ready, and graceful shutdown. The protocol itself (JSON-RPC framing,
// sessions, SSE events) is go-sdk's: this package composes
// mcp.NewStreamableHTTPHandler, mcp.SSEServerTransport and mcp.IOTransport and
// adds only what they lack.
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
