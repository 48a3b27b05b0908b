// Package media classifies media types, once, for both directions of a call:
// how a request body or `content` parameter is encoded, and how an upstream
// answer is shaped and redacted. Having one list means a type the request
// side treats as text (application/x-ndjson, +yaml) is also redacted as text
// when it comes back.
package media

import (
	"mime"
	"strings"
)

// Kind is the family a media type belongs to.
type Kind uint8

// The kinds, from the most to the least structured.
const (
	// Binary is anything not listed below: bytes with no text reading.
	Binary Kind = iota
	// JSON is application/json, any +json or */json type, text/json.
	JSON
	// JSONLines is newline-delimited JSON (application/x-ndjson,
	// application/jsonl, application/json-seq): text, one JSON value a line.
	JSONLines
	// XML is application/xml, text/xml and any +xml type.
	XML
	// Form is application/x-www-form-urlencoded.
	Form
	// Text is text/* and the textual application types (yaml, javascript,
	// graphql, sql, +yaml...).
	Text
	// Multipart is multipart/* (form-data, mixed, related...).
	Multipart
	// Image is image/*.
	Image
	// Audio is audio/*.
	Audio
)

// Type lower-cases a media type and drops its parameters; it tolerates
// strings mime.ParseMediaType rejects.
func Type(ct string) string {
	if bareType(ct) {
		return ct // what mime.ParseMediaType would return, without its parameters map
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// bareType reports whether ct is already a lower-case type/subtype with
// no parameters, such as "application/json": letters, digits and -+.
// around one slash.
func bareType(ct string) bool {
	slash := -1
	for i := 0; i < len(ct); i++ {
		switch c := ct[i]; {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '+', c == '.':
		case c == '/' && slash < 0:
			slash = i
		default:
			return false
		}
	}
	return slash > 0 && slash < len(ct)-1
}

// Classify returns the kind of a media type (parameters allowed).
func Classify(ct string) Kind {
	mt := Type(ct)
	switch mt {
	case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines", "application/json-seq":
		return JSONLines
	case "application/x-www-form-urlencoded":
		return Form
	case "application/yaml", "application/x-yaml", "application/graphql", "application/javascript",
		"application/x-javascript", "application/ecmascript", "application/sql", "application/toml",
		"application/x-sh", "application/csv", "application/problem+xml":
		if strings.HasSuffix(mt, "+xml") {
			return XML
		}
		return Text
	case "text/json":
		return JSON
	case "application/xml", "text/xml":
		return XML
	}
	switch {
	case strings.HasSuffix(mt, "/json") || strings.HasSuffix(mt, "+json"):
		return JSON
	case strings.HasSuffix(mt, "+xml"):
		return XML
	case strings.HasSuffix(mt, "+yaml"):
		return Text
	case strings.HasPrefix(mt, "text/"):
		return Text
	case strings.HasPrefix(mt, "multipart/"):
		return Multipart
	case strings.HasPrefix(mt, "image/"):
		if mt == "image/svg+xml" {
			return XML
		}
		return Image
	case strings.HasPrefix(mt, "audio/"):
		return Audio
	}
	return Binary
}

// IsJSON reports whether ct is a JSON media type.
func IsJSON(ct string) bool { return Classify(ct) == JSON }

// IsText reports whether ct holds text an agent can read or write as a
// string: JSON, JSON lines, XML, form, and the text types.
func IsText(ct string) bool {
	switch Classify(ct) {
	case JSON, JSONLines, XML, Form, Text:
		return true
	}
	return false
}
