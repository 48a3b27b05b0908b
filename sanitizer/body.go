package sanitizer

import (
	"bytes"
	"encoding/json"
	"strings"
)

// binMask is the byte that replaces every byte of a match in a binary body.
const binMask = '*'

// maxBodyDepth bounds the nesting of multipart bodies.
const maxBodyDepth = 4

// bodyKind is the rule set a media type selects.
type bodyKind int

const (
	kindBinary bodyKind = iota
	kindUntyped
	kindJSON
	kindJSONLines
	kindJSONSeq
	kindXML
	kindHTML
	kindForm
	kindText
	kindConfig
	kindCSV
	kindTSV
	kindMultipart
)

// classify returns the kind of body a media type (a Content-Type value,
// parameters allowed) announces, and its parameters.
func classify(mediaType string) (bodyKind, string) {
	mt, params, _ := strings.Cut(mediaType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if wide := strings.ToLower(params); strings.Contains(wide, "utf-16") || strings.Contains(wide, "utf-32") {
		return kindBinary, params // text in a wide encoding: scanned as bytes
	}
	switch mt {
	case "":
		return kindUntyped, params
	case "application/json", "text/json", "application/x-json":
		return kindJSON, params
	case "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonl",
		"application/jsonlines", "application/x-jsonlines", "application/json-lines", "application/x-json-stream":
		return kindJSONLines, params
	case "application/json-seq":
		return kindJSONSeq, params
	case "application/xml", "text/xml", "application/xml-external-parsed-entity":
		return kindXML, params
	case "text/html":
		return kindHTML, params
	case "application/x-www-form-urlencoded":
		return kindForm, params
	case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "application/toml",
		"text/toml", "text/x-toml", "application/x-env", "text/x-env", "text/x-java-properties",
		"text/x-properties", "application/x-properties", "text/x-ini", "application/x-ini":
		return kindConfig, params
	case "text/csv", "application/csv", "text/x-csv", "application/x-csv", "text/comma-separated-values":
		return kindCSV, params
	case "text/tab-separated-values", "text/tsv":
		return kindTSV, params
	case "application/javascript", "application/x-javascript", "application/ecmascript",
		"application/graphql", "application/sql", "application/x-sh", "application/x-shellscript",
		"application/jwt", "application/x-pem-file", "application/pem-certificate-chain",
		"application/rtf":
		return kindText, params
	}
	switch {
	case strings.HasSuffix(mt, "+json"):
		return kindJSON, params
	case strings.HasSuffix(mt, "+json-seq"):
		return kindJSONSeq, params
	case strings.HasSuffix(mt, "+xml"):
		return kindXML, params
	case strings.HasSuffix(mt, "+yaml"):
		return kindConfig, params
	case strings.HasPrefix(mt, "text/"), strings.HasPrefix(mt, "message/"):
		return kindText, params
	case strings.HasPrefix(mt, "multipart/"):
		return kindMultipart, params
	}
	return kindBinary, params
}

// RedactBody redacts an upstream body of any media type (a Content-Type
// value; parameters such as charset and boundary are read) and returns it
// with the number of values and parts of text it masked. It never fails:
//
//   - JSON (application/json, text/json, *+json): [Redactor.RedactJSON],
//     so the result is compact JSON. A body that is not valid JSON (cut
//     short, several documents) is redacted in place instead: the value
//     rules over the whole text and inside every string decoded, and the
//     value after every sensitive "name": masked (as "[REDACTED]"), the
//     rest of the bytes kept.
//   - JSON lines (application/x-ndjson, jsonl...) line by line, and JSON
//     text sequences (application/json-seq, *+json-seq) record by record,
//     each as above; line breaks and record separators are kept.
//   - XML (application/xml, text/xml, *+xml): the text and attribute values
//     of elements whose name is a sensitive key, attribute values whose
//     attribute name is, and the other attribute values of an element whose
//     name or key attribute names a sensitive key (<add key="ApiKey"
//     value="..."/>); plus the value rules everywhere. HTML (text/html)
//     gets the attribute rules only (<input name="password" value="...">).
//   - Forms (application/x-www-form-urlencoded): the value of every
//     sensitive field, plus the value rules, on the raw and the decoded
//     names and values.
//   - multipart/*: each part by its own Content-Type (text/plain when it
//     has none); the values of sensitive part headers are masked.
//   - Configuration text (YAML, TOML, .env, Java properties, INI): the text
//     rules below, plus the value of every "key: value" or "key = value"
//     line whose key is sensitive (quotes, "export ", "- " and trailing
//     comments understood; a YAML block scalar "key: |" masked to the end
//     of its indented block).
//   - Tables (text/csv, text/tab-separated-values): the text rules below,
//     plus every value in a column whose header names a sensitive key
//     (quoted fields, doubled quotes and line breaks inside them read as
//     RFC 4180 says; the first line is the header).
//   - Other text (text/*, JavaScript, message/*...): the value rules
//     as [Redactor.RedactString] does, plus the in-place JSON rule above
//     for the JSON the text may hold (a JSON error sent as text/plain, a
//     JSON object quoted in a message).
//   - Anything else (images, audio, application/octet-stream, PDF, and any
//     text in UTF-16 or UTF-32): binary. Every byte of a value-rule match
//     (configured secrets in all their forms, UTF-16 included, built-in
//     tokens, prefixes, patterns) is replaced by '*': the body keeps its
//     length and every other byte, so offsets inside the file stay valid,
//     though checksums over a masked part (PNG chunk CRCs) no longer match.
//     A gzip body (its first bytes say so, whatever the media type) is
//     looked into: up to 16 MiB inflated (as far as it inflates), it is
//     redacted as a body of no media type and compressed again when
//     something was masked; larger, it is scanned through a window for
//     value-rule matches and withheld whole (every byte '*') when one is
//     found or it inflates past 64 MiB. Other compressed (zip, zstd...)
//     or encrypted content is not looked into.
//   - No media type: JSON when the body is valid JSON, binary otherwise. An
//     XML, HTML or form body that starts like JSON, and a binary one that
//     is valid JSON, are text (JSON sent with the wrong type).
//
// Everywhere but in JSON, Mask replaces each match and the rest of the
// bytes is kept as it was. A body with nothing to mask is returned as is
// (for JSON: compacted), never modified in place.
func (r *Redactor) RedactBody(mediaType string, body []byte) ([]byte, int) {
	r = r.current()
	out, n := r.redactBody(mediaType, body, 0)
	r.counted(n)
	return out, n
}

// Contains reports whether a value rule matches somewhere in b, read as a
// binary body: a configured secret in any of its forms, a built-in token,
// a configured prefix or pattern. Key names play no part. It does not
// allocate (patterns aside).
func (r *Redactor) Contains(b []byte) bool {
	r = r.current()
	return matchesMode(r, b, true)
}

// maxSettle bounds the passes that settle a redacted body.
const maxSettle = 8

// settle redacts out, the result of redact with n masks, again until it no
// longer changes: masking can expose a match where two rules overlap (a
// mask that makes a word start before an AWS key id, a pattern across a
// tag), and a body redacted twice must come out the same. It runs only
// when something was masked; the masks of the extra passes, which concern
// only such overlaps, are not counted.
func settle(out []byte, n int, redact func([]byte) ([]byte, int)) ([]byte, int) {
	for i := 0; n > 0 && i < maxSettle; i++ {
		again, m := redact(out)
		if m == 0 || bytes.Equal(again, out) {
			break
		}
		out = again
	}
	return out, n
}

func (r *Redactor) redactBody(mediaType string, body []byte, depth int) ([]byte, int) {
	kind, params := classify(mediaType)
	if kind != kindBinary && kind != kindUntyped && isGzip(body) {
		// gzip labelled as what it holds (a .json.gz served as JSON, a
		// multipart part): no text rule sees through compression, so it
		// is inflated like a binary body's, and what it holds redacted by
		// its label.
		if depth+1 >= maxBodyDepth {
			return bytes.Repeat([]byte{binMask}, len(body)), 1
		}
		if out, n, ok := r.redactGzip(mediaType, body, depth); ok {
			return out, n
		}
		// Nothing inside was masked: its bytes are scanned as a binary
		// body's, whose masks keep the length (the label's text rules
		// put "[REDACTED]" into the stream and broke it).
		kind = kindBinary
	}
	switch kind {
	case kindJSON, kindJSONLines, kindJSONSeq:
		return r.redactBodyOnce(kind, params, body, depth)
	case kindUntyped:
		if out, n, err := r.redactJSON(make([]byte, 0, len(body)), body); err == nil {
			return out, n
		}
		kind = kindBinary
	case kindXML, kindHTML, kindForm:
		if looksJSON(body) {
			kind = kindText // JSON sent as XML, HTML or a form
		}
	case kindBinary:
		if looksJSON(body) && json.Valid(body) {
			kind = kindText // JSON sent as binary
		}
	}
	out, n := r.redactBodyOnce(kind, params, body, depth)
	return settle(out, n, func(b []byte) ([]byte, int) { return r.redactBodyOnce(kind, params, b, depth) })
}

// redactBodyOnce is one pass of redactBody over a body of the given kind.
func (r *Redactor) redactBodyOnce(kind bodyKind, params string, body []byte, depth int) ([]byte, int) {
	switch kind {
	case kindJSON:
		return r.redactJSONBody(body)
	case kindJSONLines:
		return r.redactRecords(body, '\n')
	case kindJSONSeq:
		return r.redactRecords(body, 0x1e)
	case kindXML:
		return r.redactMarkup(body, false)
	case kindHTML:
		return r.redactMarkup(body, true)
	case kindForm:
		return r.redactForm(body)
	case kindText:
		return r.redactText(body)
	case kindConfig:
		return r.redactConfig(body)
	case kindCSV:
		return r.redactCSV(body, ',')
	case kindTSV:
		return r.redactCSV(body, '\t')
	case kindMultipart:
		if depth < maxBodyDepth {
			if out, n, ok := r.redactMultipart(params, body, depth); ok {
				return out, n
			}
		}
		return r.redactText(body)
	}
	if isGzip(body) {
		if depth+1 >= maxBodyDepth {
			// gzip inside gzip, deeper than any server compresses: what
			// it holds is not looked for, so none of it is shown.
			return bytes.Repeat([]byte{binMask}, len(body)), 1
		}
		if out, n, ok := r.redactGzip("", body, depth); ok {
			return out, n
		}
	}
	return r.redactBinary(body)
}

// redactJSONBody redacts a JSON document, in place when it is not valid.
func (r *Redactor) redactJSONBody(body []byte) ([]byte, int) {
	if out, n, err := r.redactJSON(make([]byte, 0, len(body)), body); err == nil {
		return out, n
	}
	lenient := func(b []byte) ([]byte, int) { return r.redactJSONLenient(b, true) }
	out, n := lenient(body)
	return settle(out, n, lenient)
}

// looksJSON reports whether body starts, white space aside, like a JSON
// object, array or string: a body of another announced type that is JSON.
func looksJSON(body []byte) bool {
	i := skipJSONSpace(body, 0)
	return i < len(body) && (body[i] == '{' || body[i] == '[' || body[i] == '"')
}

// redactRecords redacts JSON records ended (lines) or started (json-seq)
// by sep, keeping every separator and line break.
func (r *Redactor) redactRecords(body []byte, sep byte) ([]byte, int) {
	var out []byte
	total := 0
	changed := false
	for rest := body; len(rest) > 0; {
		rec, tail, found := bytes.Cut(rest, []byte{sep})
		var red []byte
		var n int
		if len(bytes.TrimSpace(rec)) == 0 {
			red = rec
		} else {
			// Keep the white space around the record, redact the rest.
			lo := len(rec) - len(bytes.TrimLeft(rec, " \t\r\n"))
			hi := len(bytes.TrimRight(rec, " \t\r\n"))
			red, n = r.redactJSONBody(rec[lo:hi])
			if n > 0 || !bytes.Equal(red, rec[lo:hi]) {
				red = append(append(append([]byte(nil), rec[:lo]...), red...), rec[hi:]...)
				changed = true
			} else {
				red = rec
			}
			total += n
		}
		out = append(out, red...)
		if found {
			out = append(out, sep)
		}
		rest = tail
	}
	if !changed {
		return body, 0
	}
	return out, total
}

// redactText redacts a text body with the value rules and, for the JSON
// it may hold (a JSON error body sent as text/plain, JSON quoted in a
// message), the lenient JSON rule, in place.
func (r *Redactor) redactText(body []byte) ([]byte, int) {
	return r.redactJSONLenient(body, false)
}

// redactBinary redacts a binary body in place of a copy: same length.
func (r *Redactor) redactBinary(body []byte) ([]byte, int) {
	iv := valueSpans(r, body, nil, true)
	if len(iv) == 0 {
		return body, 0
	}
	iv = mergeSpans(iv)
	out := bytes.Clone(body)
	n := 0
	for _, m := range iv {
		changed := false
		for i := m.lo; i < m.hi; i++ {
			changed = changed || out[i] != binMask
			out[i] = binMask
		}
		if changed {
			n++ // a span already all mask bytes ("token=*") is no mask
		}
	}
	if n == 0 {
		return body, 0
	}
	return out, n
}

// valueSpans appends the spans of b the value rules match.
func valueSpans(r *Redactor, b []byte, iv []span, bin bool) []span {
	iv = scanMasksMode(r, b, 0, iv, bin)
	return patternSpans(r.patterns, b, iv)
}

// replaceSpans returns b with the spans in iv replaced by Mask, and their
// number once merged; b itself when there are none.
func replaceSpans(b []byte, iv []span) ([]byte, int) {
	if len(iv) == 0 {
		return b, 0
	}
	iv = mergeSpans(iv)
	out := make([]byte, 0, len(b)+len(iv)*len(Mask))
	return appendMasked(out, b, iv, false), len(iv)
}

// matchesMode reports whether a value rule matches in s, read as a binary
// body when bin.
func matchesMode[T text](r *Redactor, s T, bin bool) bool {
	st := scanState{probe: true, bin: bin}
	for i, n2 := 0, len(s)-2; i < n2; i++ {
		if g := r.first[s[i]] & r.follow[s[i+1]] & r.third[s[i+2]]; g != 0 {
			if iv := matchAt(r, &st, s, i, g, nil); len(iv) > 0 {
				return true
			}
		}
	}
	for _, re := range r.patterns {
		if b, ok := any(s).([]byte); ok && re.Match(b) || !ok && re.MatchString(string(s)) {
			return true
		}
	}
	return false
}
