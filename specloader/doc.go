// Package specloader reads an OpenAPI document and hands back the kin-openapi
// model of it, ready for the bridge to build tools from.
//
// A source is a file path, a file:// URL or an http(s) URL. Reads are bounded
// in size and, for URLs, in time; Swagger 2.0 documents are converted to
// OpenAPI 3, each array parameter's collectionFormat kept as a style, an
// Encoding Object or CollectionFormatExtension (collection.go); references to other files or URLs next to the document are
// resolved under the same bounds; the result is validated leniently (findings
// become warnings) or strictly (findings become an error). A few defects of
// real specs that kin-openapi refuses outright are repaired in lenient mode,
// with a warning each (see repair.go).
//
// A spec's $refs are requests its author makes from the bridge's network.
// They are followed only on the spec's own origin and on the origins of
// Options.AllowOrigins, redirects included, and every address is checked
// when it is dialed: link-local (cloud metadata) addresses never, loopback
// and private ones only where the operator named them (guard.go). Only
// failures that may heal by themselves are ErrFetch. Every URL in an error,
// a warning or a Result field is shown as RedactURL shows it. Refetch and
// RefsChanged tell a periodic refresh whether anything changed.
//
// JSON takes a fast path. kin-openapi parses JSON with its YAML parser, which
// costs about 1.6 s and 630 MiB of memory on GitHub's 13 MB spec; this
// package splits the document with a JSON scanner, which checks it is JSON
// in the same pass (FuzzSplitJSON holds it to json.Valid), builds for each
// component and path the node tree the YAML parser would have built, and
// lets kin-openapi's own decoder turn those into the model, in parallel: the
// same model (TestJSONFastPathMatchesKin) in about half the time and a
// quarter of the memory.
//
// A caller that needs a few operations says which in Options.Keep (a
// whitelist's Policy.Wants fits), and the fast path then builds only those,
// with the components they reach through $refs, found by a scan of the text
// before any model exists (prune.go): GitHub's spec loads in about 70 ms
// instead of 2 s for 20 operations. Each kept operation is what a full load
// gives (TestPrunedMatchesWhole). YAML and Swagger 2.0 documents, and JSON
// ones whose $refs the scan cannot follow, are loaded whole.
//
// The package does no logging and never writes to stdout. It recovers from a
// panic inside kin-openapi and reports it as an error naming the source.
//
// specloader is a leaf: it imports kin-openapi, the YAML library kin-openapi
// uses (go.yaml.in/yaml/v4) and the standard library, never another mcpbridge
// package, go-sdk or viper.
package specloader
