// Package specloader reads an OpenAPI document and hands back the kin-openapi
// model of it, ready for the bridge to build tools from.
//
// A source is a file path, a file:// URL or an http(s) URL. Reads are bounded
// in size and, for URLs, in time; Swagger 2.0 documents are converted to
// OpenAPI 3; references to other files or URLs next to the document are
// resolved under the same bounds; the result is validated leniently (findings
// become warnings) or strictly (findings become an error).
//
// Large JSON documents take a fast path: the root and the maps of components
// and paths are split with encoding/json and their entries decoded in
// parallel, instead of through kin-openapi's YAML-first decoder, which costs
// several times the time and memory on a spec the size of GitHub's.
//
// The package does no logging and never writes to stdout. It recovers from a
// panic inside kin-openapi and reports it as an error naming the source.
//
// specloader is a leaf: it imports kin-openapi, its YAML library and the
// standard library, and never another mcpbridge package, go-sdk or viper.
package specloader
