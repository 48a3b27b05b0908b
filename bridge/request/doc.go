// Package request turns validated tool arguments into the upstream HTTP
// request. A [Plan] is built once per operation: the path template as
// escaped literals and parameter references, each parameter's
// serialization ([ParamSpec]: style, explode, allowReserved, content, the
// [NestedStyle] of values OpenAPI's styles cannot express, allowSlashes, the
// delimiters of a Swagger 2.0 collectionFormat no style expresses),
// and the body's media type and per-property encoding ([Body]). Plans are plain
// data, so the tool cache stores them as they are. [Plan.Build] assembles
// the URL only from the configured base and escaped segments, and attaches
// the configured [Credentials], never ones from arguments.
package request
