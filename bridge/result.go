package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// maxErrorText bounds the upstream body quoted in an error result.
const maxErrorText = 8 << 10

// result maps an upstream response to a CallToolResult. Every body passes
// through the redactor; JSON is passed on compact.
func (b *Bridge) result(t *tool, resp *http.Response, body []byte) *mcp.CallToolResult {
	status := resp.StatusCode
	ct := resp.Header.Get("Content-Type")
	mediaType, params, _ := mime.ParseMediaType(ct)
	mediaType = strings.ToLower(mediaType)

	if status >= 400 {
		b.log.Info("upstream error status", zap.String("tool", t.def.Name), zap.Int("status", status))
		msg := (&UpstreamStatusError{Status: status}).Error()
		if text := b.bodyText(mediaType, body); text != "" {
			if len(text) > maxErrorText {
				text = truncateUTF8(text, maxErrorText) + "…(truncated)"
			}
			msg += ": " + text
		}
		return errorResult(msg)
	}
	if len(body) == 0 {
		return textResult(fmt.Sprintf("HTTP %d %s (empty body)", status, http.StatusText(status)))
	}
	switch {
	case isJSONType(mediaType) || mediaType == "" && json.Valid(body):
		red, err := b.redactor.RedactJSON(make([]byte, 0, len(body)), body)
		if err != nil {
			// Declared JSON that is not: pass it on as (redacted) text.
			b.log.Info("upstream sent invalid JSON", zap.String("tool", t.def.Name), zap.Int("status", status))
			return textResult(b.redactor.RedactString(string(body)))
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(red)}}}
		if t.output.raw != nil && len(red) > 0 && red[0] == '{' {
			var v map[string]any
			out, err := t.output.resolved()
			if err == nil {
				err = json.Unmarshal(red, &v)
			}
			if err == nil {
				if err := out.Validate(v); err == nil {
					res.StructuredContent = json.RawMessage(red)
				} else if ce := b.log.Check(zap.DebugLevel, "response does not match the output schema"); ce != nil {
					ce.Write(zap.String("tool", t.def.Name), zap.String("reason", err.Error()))
				}
			}
		}
		return res
	case strings.HasPrefix(mediaType, "multipart/") && mediaType != "multipart/form-data":
		if content, ok := b.multipartContent(t, params, body); ok {
			return &mcp.CallToolResult{Content: content}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "mcpbridge://" + t.def.Name + "/response", MIMEType: mediaType, Blob: body,
		}}}}
	case strings.HasPrefix(mediaType, "image/"):
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: body, MIMEType: mediaType}}}
	case strings.HasPrefix(mediaType, "audio/"):
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: body, MIMEType: mediaType}}}
	case isTextType(mediaType) || mediaType == "" && utf8.Valid(body):
		return textResult(b.redactor.RedactString(string(body)))
	default:
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI:      "mcpbridge://" + t.def.Name + "/response",
			MIMEType: mediaType,
			Blob:     body,
		}}}}
	}
}

// bodyText renders an error body for the agent: redacted, compact JSON or
// redacted text; binary bodies are summarized.
func (b *Bridge) bodyText(mediaType string, body []byte) string {
	if len(body) == 0 {
		return ""
	}
	if isJSONType(mediaType) || json.Valid(body) {
		if red, err := b.redactor.RedactJSON(nil, body); err == nil {
			return string(red)
		}
	}
	if isTextType(mediaType) || utf8.Valid(body) {
		return b.redactor.RedactString(strings.TrimSpace(string(body)))
	}
	return fmt.Sprintf("(%d bytes of %s)", len(body), mediaType)
}

func isTextType(mt string) bool {
	return strings.HasPrefix(mt, "text/") || mt == "application/xml" || strings.HasSuffix(mt, "+xml") ||
		mt == "application/javascript" || mt == "application/x-www-form-urlencoded" || mt == "application/yaml" || mt == "application/x-yaml"
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

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func errorResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// toolError turns a call failure into an IsError result with a safe
// message and logs the detail.
func (b *Bridge) toolError(t *tool, err error, start time.Time) *mcp.CallToolResult {
	var argErr *ArgumentError
	switch {
	case errors.As(err, &argErr):
		b.log.Debug("bad tool arguments", zap.String("tool", t.def.Name), zap.String("reason", b.redactor.RedactString(err.Error())))
		return errorResult(b.redactor.RedactString(err.Error()))
	case errors.Is(err, ErrUpstreamUnavailable), errors.Is(err, ErrResponseTooLarge):
		b.log.Warn("tool call failed", zap.String("tool", t.def.Name), zap.String("reason", b.redactor.RedactString(err.Error())), zap.Duration("took", time.Since(start)))
		return errorResult(err.Error())
	default:
		b.log.Error("tool call failed", zap.String("tool", t.def.Name), zap.String("error", b.redactor.RedactString(err.Error())))
		return errorResult("internal error while calling " + t.label)
	}
}
