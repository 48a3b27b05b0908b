// Package result shapes an upstream answer into a CallToolResult: JSON as
// compact text plus structuredContent when the tool declares an output
// schema the answer satisfies, text as text, images and audio as such,
// multipart answers as one block per part, anything else as an embedded
// resource. Every textual body passes through the redactor first. One media
// classifier ([media.Classify]) decides, the same one the request side uses.
package result

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge/media"
	"github.com/mcpbridge/mcpbridge/bridge/schema"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// maxErrorText bounds the upstream body quoted in an error result.
const maxErrorText = 8 << 10

// Shaper turns upstream answers into results. Redactor and Log are
// required. A Shaper must not be copied after first use.
type Shaper struct {
	Redactor *sanitizer.Redactor
	Log      *zap.Logger

	warned sync.Map // tool name → struct{}: an output mismatch was logged at WARN
}

// Tool is what shaping needs to know of the tool that was called.
type Tool struct {
	Name   string       // for resource URIs and logs
	Output *schema.Lazy // the output schema; nil or empty: none
	// Headers are the response headers a successful answer shows beside
	// its body, when the upstream sent them (canonical names).
	Headers []string
	// Reshape, when set, shapes a redacted JSON answer (the whitelist's
	// fields and maxItems): it returns the shaped JSON and a note saying
	// what was left out ("" when nothing), or ok false to keep the answer.
	Reshape func(red []byte) (shaped []byte, note string, ok bool)
}

// Shape maps an upstream response to a CallToolResult. Statuses >= 400,
// and redirects that were not followed, are IsError results. A successful
// result of a tool with an output schema always carries structuredContent
// that validates against it (see [Shaper.structure]).
func (s *Shaper) Shape(t Tool, status int, header http.Header, body []byte) *mcp.CallToolResult {
	res, red := s.shape(t, status, header, body)
	if !res.IsError && red != nil && t.Reshape != nil {
		if shaped, note, ok := t.Reshape(red); ok {
			red = shaped
			res.Content = []mcp.Content{&mcp.TextContent{Text: string(shaped)}}
			if note != "" {
				res.Content = append(res.Content, &mcp.TextContent{Text: note})
			}
		}
	}
	if !res.IsError && t.Output != nil && t.Output.Raw() != nil {
		s.structure(t, res, red, len(body) == 0, false)
	}
	if !res.IsError && status < 300 && len(t.Headers) > 0 {
		if tc := s.headerText(t.Headers, header, len(body) == 0); tc != nil {
			res.Content = append(res.Content, tc)
		}
	}
	return res
}

// maxHeaderText bounds one header value shown to the agent, and all of
// them together (4x).
const maxHeaderText = 1 << 10

// linkURL is one URL of a Link header (RFC 8288: <URI>; params).
var linkURL = regexp.MustCompile(`<[^<>]*>`)

// headerText is a text block with the response headers of names that the
// answer carries ("Response headers:" and one "Name: value" line each), or
// nil when it carries none. Values are cut to visible UTF-8 of at most
// 1 KiB, redacted like the answer; the URLs of a Link header have their
// query redacted by key as a Location is (a signed page URL's token).
// Location is left out of an empty answer, whose text names it already.
func (s *Shaper) headerText(names []string, header http.Header, empty bool) *mcp.TextContent {
	var b strings.Builder
	for _, name := range names {
		vs := header.Values(name)
		if len(vs) == 0 || empty && name == "Location" {
			continue
		}
		v := strings.Join(vs, ", ")
		switch {
		case s.Redactor.IsSensitiveKey(name):
			// X-Csrf-Token, X-Session-Token: masked whole, as a JSON
			// member of that name is.
			v = sanitizer.Mask
		case name == "Link":
			v = linkURL.ReplaceAllStringFunc(truncateUTF8(v, 4*maxHeaderText), func(u string) string {
				return "<" + s.location(u[1:len(u)-1]) + ">"
			})
			v = s.Redactor.RedactString(strings.Map(visible, strings.ToValidUTF8(v, "\uFFFD")))
		case name == "Location" || name == "Content-Location":
			v = s.location(v)
		default:
			v = s.Redactor.RedactString(strings.Map(visible, strings.ToValidUTF8(truncateUTF8(v, maxHeaderText), "\uFFFD")))
		}
		if b.Len()+len(name)+len(v) > 4*maxHeaderText {
			break
		}
		if b.Len() == 0 {
			b.WriteString("Response headers:")
		}
		b.WriteString("\n" + name + ": " + v)
	}
	if b.Len() == 0 {
		return nil
	}
	return &mcp.TextContent{Text: b.String()}
}

// shape is Shape without structuredContent; red is the redacted JSON
// answer, nil when the answer is not JSON.
func (s *Shaper) shape(t Tool, status int, header http.Header, body []byte) (res *mcp.CallToolResult, red []byte) {
	ct := header.Get("Content-Type")
	mediaType, params := parseContentType(ct)
	if safe := safeMediaType(s.Redactor, ct, mediaType); safe != mediaType {
		mediaType, params = safe, nil
	}
	kind := media.Classify(mediaType)
	body = utf8Body(kind, mediaType, params, body) // charset.go

	if status == http.StatusNotModified {
		// The answer to a conditional request the agent made (an
		// If-None-Match or If-Modified-Since argument; the bridge sends
		// none of its own): the copy it named is current. A success, not
		// a redirect.
		msg := "HTTP 304 Not Modified: the resource has not changed since the version the request named"
		if etag := header.Get("ETag"); etag != "" {
			msg += " (ETag: " + s.Redactor.RedactString(strings.Map(visible, strings.ToValidUTF8(truncateUTF8(etag, 256), "\uFFFD"))) + ")"
		}
		return Text(msg), nil
	}
	if status >= 300 && status < 400 {
		// A redirect the client did not follow (another origin, or too
		// many hops): not a success, and the agent learns where it pointed
		// only as an origin (the rest of the location may carry secrets).
		msg := fmt.Sprintf("upstream answered HTTP %d %s, a redirect that was not followed", status, http.StatusText(status))
		if loc, err := url.Parse(header.Get("Location")); err == nil && loc.Host != "" {
			where := loc.Host // a scheme-relative //host
			if loc.Scheme != "" {
				where = loc.Scheme + "://" + loc.Host
			}
			msg += " (to " + s.Redactor.RedactString(where) + "; the bridge follows at most 5 redirects, and only within the configured upstream's origin)"
		}
		return Error(msg), nil
	}
	if status >= 400 {
		s.Log.Info("upstream error status", zap.String("tool", t.Name), zap.Int("status", status))
		msg := fmt.Sprintf("upstream returned HTTP %d %s", status, http.StatusText(status))
		if wait, ok := retryAfter(header.Get("Retry-After"), time.Now()); ok {
			// When to try again, which the agent cannot see otherwise
			// (a 429 or 503 whose wait ran past the call's deadline,
			// a POST the bridge never retries).
			msg += " (the upstream asks to retry after " + wait + ")"
		}
		if text := s.bodyText(kind, mediaType, body); text != "" {
			if len(text) > maxErrorText {
				text = truncateUTF8(text, maxErrorText) + "…(truncated)"
			}
			msg += ": " + text
		}
		return Error(msg), nil
	}
	if len(body) == 0 {
		msg := fmt.Sprintf("HTTP %d %s (empty body)", status, http.StatusText(status))
		if loc := header.Get("Location"); loc != "" {
			// Where a created resource or a queued job is: often all the
			// answer says (redacted: it may carry a token).
			msg = fmt.Sprintf("HTTP %d %s (empty body; Location: %s)", status, http.StatusText(status), s.location(loc))
		}
		return Text(msg), nil
	}
	if kind != media.JSON {
		if actual := fileType(kind, mediaType, body); actual != "" {
			// A file labelled as text, or not labelled: shaped as what it
			// is, not as text whose every invalid byte would reach the
			// agent as U+FFFD.
			mediaType, kind = actual, media.Classify(actual)
		}
	}
	switch {
	case kind == media.JSON || mediaType == "" && json.Valid(body):
		red, err := s.Redactor.RedactJSON(make([]byte, 0, len(body)), body)
		if err != nil {
			if actual := fileType(kind, mediaType, body); actual != "" {
				// A file labelled as JSON (checked only now: valid JSON,
				// the common case, costs no extra pass over its bytes).
				return s.shape(t, status, http.Header{"Content-Type": {actual}}, body)
			}
			// Declared JSON that is not: pass it on as (redacted) text.
			s.Log.Info("upstream sent invalid JSON", zap.String("tool", t.Name), zap.Int("status", status))
			red, _ := s.Redactor.RedactBody("text/plain", body) // key-aware on broken JSON too
			return Text(string(red)), nil
		}
		// The text shares red's bytes (so does structuredContent): red is
		// a fresh buffer nothing writes to again, and a 1 MiB answer is not
		// copied once more.
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: bytesString(red)}}}, red
	case kind == media.Multipart && mediaType != "multipart/form-data":
		if content, ok := s.multipartContent(t.Name, params, body); ok {
			return &mcp.CallToolResult{Content: content}, nil
		}
		return s.blob(t.Name, mediaType, params, body), nil
	case kind == media.Image:
		// Binary bodies are scanned too: a credential echoed inside an image
		// is overwritten in place (same length).
		red, _ := s.Redactor.RedactBody(mediaType, body)
		if it := HostImageType(red); it != "" {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: red, MIMEType: it}}}, nil
		}
		// TIFF, BMP, HEIC, ICO, or bytes that are not the image their label
		// says: an attachment, not an image block a host would hand its
		// model and the model's API refuse.
		return s.blob(t.Name, mediaType, params, body), nil
	case kind == media.Audio:
		red, _ := s.Redactor.RedactBody(mediaType, body)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: red, MIMEType: mediaType}}}, nil
	case media.IsText(mediaType) || mediaType == "" && utf8.Valid(body):
		// XML, forms, YAML, ndjson...: each by its own key-aware rule.
		red, _ := s.Redactor.RedactBody(mediaType, body)
		return Text(string(red)), nil
	default:
		return s.blob(t.Name, mediaType, params, body), nil
	}
}

// HostImageType is the media type of body when it is an image that hosts
// hand their model as one: PNG, JPEG, GIF or WebP, recognised by its
// signature; "" for any other bytes. Anthropic's API takes only these four
// and refuses an image block whose bytes are not the type it names
// ("Type validation failed"); the refusal fails the host's request, and
// every later one of the conversation that still carries the block, not
// just the call. The type returned is what the bytes are, whatever the
// upstream's label said.
func HostImageType(body []byte) string {
	switch t := http.DetectContentType(body); t {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return t
	}
	return ""
}

// fileType is the media type of a known file format (an image, audio, a
// PDF, an archive...) that body holds when the upstream labelled it as
// text or JSON, or not at all, and it is not UTF-8 text; "" otherwise. A
// body without a label and with no recognized signature is
// application/octet-stream. Recognition is by the first bytes, as
// browsers sniff (http.DetectContentType): text that merely has a stray
// invalid byte stays text.
func fileType(kind media.Kind, mediaType string, body []byte) string {
	if mediaType != "" && kind != media.JSON && !media.IsText(mediaType) || utf8.Valid(body) {
		return ""
	}
	sniffed := media.Type(http.DetectContentType(body))
	switch {
	case strings.HasPrefix(sniffed, "text/"):
		return ""
	case sniffed == "application/octet-stream" && mediaType != "":
		return "" // no signature: the label stands
	}
	return sniffed
}

// location is a Location header fit for the agent: at most 2 KiB of
// visible UTF-8, known secrets redacted, and its query redacted by key as
// a form is (token=..., api_key=...).
func (s *Shaper) location(loc string) string {
	loc = strings.Map(visible, strings.ToValidUTF8(truncateUTF8(loc, 2048), "\uFFFD"))
	if path, query, ok := strings.Cut(loc, "?"); ok {
		red, _ := s.Redactor.RedactBody("application/x-www-form-urlencoded", []byte(query))
		loc = path + "?" + string(red)
	}
	return s.Redactor.RedactString(loc)
}

// parseContentType is the lower-case media type of a Content-Type header
// and its parameters, as mime.ParseMediaType gives them ("" when it is
// malformed). The usual JSON headers are answered without parsing (and
// without the parameters map, which only multipart answers use).
func parseContentType(ct string) (string, map[string]string) {
	switch ct {
	case "application/json", "application/json; charset=utf-8", "application/json;charset=utf-8", "application/json; charset=UTF-8":
		return "application/json", nil
	}
	mediaType, params, _ := mime.ParseMediaType(ct)
	return strings.ToLower(mediaType), params
}

// MediaType is the media type of a Content-Type the upstream sent, fit to
// pass on to the client (as a resource's or image's mimeType, in a note):
// lower case, parameters dropped, and application/octet-stream in place
// of one that is not a plain type/subtype of at most 127 characters each
// (RFC 6838) or that carries a secret the redactor knows, in any of its
// forms. An upstream's headers are its answer too: one that echoes the
// bridge's key into its Content-Type must not reach the client through
// it. "" stays "".
func MediaType(r *sanitizer.Redactor, ct string) string {
	mt, _ := parseContentType(ct)
	return safeMediaType(r, ct, mt)
}

// safeMediaType is mt (parsed from the header ct), or octet-stream when
// it is malformed or ct or mt holds a secret.
func safeMediaType(r *sanitizer.Redactor, ct, mt string) string {
	if mt == "" {
		return ""
	}
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || typ == "" || sub == "" || len(typ) > 127 || len(sub) > 127 || strings.ContainsFunc(mt, func(c rune) bool { return c <= ' ' || c >= 0x7f }) ||
		(r != nil && (r.Contains([]byte(ct)) || r.Contains([]byte(mt)))) {
		return "application/octet-stream"
	}
	return mt
}

// blob is an answer with no text reading, as an embedded resource; its
// bytes are scanned for secrets like any other body. A multipart body is
// redacted part by part, which takes its boundary: without it, its parts
// were scanned as one text, and a gzip part's secrets went through.
func (s *Shaper) blob(name, mediaType string, params map[string]string, body []byte) *mcp.CallToolResult {
	redactAs := mediaType
	if b := params["boundary"]; b != "" && strings.HasPrefix(mediaType, "multipart/") {
		if ct := mime.FormatMediaType(mediaType, map[string]string{"boundary": b}); ct != "" {
			redactAs = ct
		}
	}
	red, _ := s.Redactor.RedactBody(redactAs, body)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
		URI: "mcpbridge://" + name + "/response", MIMEType: mediaType, Blob: red,
	}}}}
}

// bodyText renders an error body for the agent: redacted, compact JSON or
// redacted text; binary bodies are summarized.
func (s *Shaper) bodyText(kind media.Kind, mediaType string, body []byte) string {
	if len(body) == 0 {
		return ""
	}
	if kind == media.JSON || json.Valid(body) {
		if red, err := s.Redactor.RedactJSON(nil, body); err == nil {
			return string(red)
		}
	}
	if media.IsText(mediaType) || (utf8.Valid(body) && !hasControl(body)) {
		red, _ := s.Redactor.RedactBody(mediaType, body)
		return strings.TrimSpace(strings.Map(visible, string(red)))
	}
	return fmt.Sprintf("(%d bytes of %s)", len(body), mediaType)
}

// hasControl reports a C0 control byte other than tab, line feed and
// carriage return, or DEL: bytes no error page means as text.
func hasControl(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
			return true
		}
	}
	return false
}

// visible replaces the control characters of an error text (a terminal
// escape sequence, a NUL) by U+FFFD, so that a client printing it on a
// terminal prints what the upstream said, not what it asked the terminal
// to do.
func visible(r rune) rune {
	if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
		return '\uFFFD'
	}
	return r
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// bytesString is b as a string without a copy; b must never change
// afterwards.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Text is a successful result holding s.
func Text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Error is an IsError result holding s.
func Error(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// retryAfter renders a Retry-After header (delay-seconds or an HTTP date)
// as a wait from now ("30s", "1h0m0s"); false when v is neither.
func retryAfter(v string, now time.Time) (string, bool) {
	d, ok := upstream.RetryAfter(v, now)
	if !ok {
		return "", false
	}
	return d.Round(time.Second).String(), true
}
