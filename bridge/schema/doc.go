// Package schema converts kin-openapi schemas (OpenAPI 3.0 and 3.1; Swagger
// 2.0 after conversion) into JSON Schema 2020-12 for tool input and output
// schemas ([Converter], [Output]), marshals them deterministically
// ([Marshal]), and resolves them into validators on first use ([Lazy]).
// It knows nothing of HTTP or MCP.
package schema
