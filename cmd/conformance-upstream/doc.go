// Command conformance-upstream is the REST API described by
// testdata/conformance/openapi.yaml. testdata/e2e/run.sh serves it through
// "mcpbridge serve --transport http" and points the official MCP
// conformance suite at the bridge, so the suite's tool scenarios
// (test_simple_text, test_image_content, ...) go through the real bridge
// path: argument validation, the upstream request, the response mapping and
// redaction.
//
// Each route returns what the matching scenario expects as an ordinary HTTP
// response (text/plain, image/png, audio/wav, application/pdf, an error
// status); nothing here knows about MCP.
//
// It listens on loopback only and writes one line to stderr once it is
// ready: "conformance-upstream: listening on http://ADDR". It imports only the
// standard library and no mcpbridge package.
package main
