package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/media"
	"github.com/mcpbridge/mcpbridge/bridge/result"
)

// truncated is the result of an answer longer than MaxResponseBytes, of
// which prefix was read: a JSON array keeps the items that arrived whole
// (still valid JSON), shaped by the whitelist entry's fields and maxItems;
// for an entry that shapes, any other JSON keeps the values that arrived
// whole, shaped, or shows nothing; anything else is cut at a safe point
// with a marker.
// It is never an invalid JSON fragment, and it declares no
// structuredContent unless the shaper can make a conforming one (and none
// at all unless structured: the caller takes none).
func (c *Catalog) truncated(t *Tool, resp *http.Response, prefix []byte, structured bool) *mcp.CallToolResult {
	mt := result.MediaType(c.redactor, resp.Header.Get("Content-Type"))
	limit := c.opts.MaxResponseBytes
	isJSON := media.Classify(mt) == media.JSON || mt == ""
	if isJSON {
		if items, ok := arrayPrefix(prefix); ok {
			if raw, err := json.Marshal(items); err == nil {
				if red, err := c.redactor.RedactJSON(nil, raw); err == nil {
					note := fmt.Sprintf("Truncated answer: the upstream sent more than %d bytes (--max-response-bytes); the first %d items are above, the rest were left out.", limit, len(items))
					if content, ok := shapedContent(t, red, note); ok {
						return c.structureTruncated(t, &mcp.CallToolResult{Content: content}, structured)
					}
				}
			}
		}
	}
	if isJSON && t.shape.keeps() {
		// The whitelist keeps only some of this tool's answer: the raw
		// prefix would show what it leaves out. The values that arrived
		// whole, their containers closed, are shaped like a whole answer;
		// a prefix that cannot be is not shown.
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(
			"Truncated answer: the upstream sent more than %d bytes (--max-response-bytes); none of it is shown, as the part that arrived could not be shaped to the fields this tool keeps.", limit)}}}
		if whole, ok := completePrefix(prefix); ok {
			if red, err := c.redactor.RedactJSON(nil, whole); err == nil {
				note := fmt.Sprintf("Truncated answer: the upstream sent more than %d bytes (--max-response-bytes); the values that arrived whole are above, the rest were left out.", limit)
				if content, ok := shapedContent(t, red, note); ok {
					res.Content = content
				}
			}
		}
		return c.structureTruncated(t, res, structured)
	}
	var res *mcp.CallToolResult
	if k := media.Classify(mt); mt != "" && k != media.JSON && k != media.JSONLines && k != media.XML && k != media.Form && k != media.Text {
		// The first bytes of an image or an archive are of no use as text.
		res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(
			"Truncated answer: the upstream sent more than %d bytes of %s (--max-response-bytes); none of it is shown.", limit, mt)}}}
	} else {
		red, _ := c.redactor.RedactBody(mt, prefix)
		// No part of a secret at the end, whatever the end holds (TailGuard
		// is a fixed amount: trimming what looked like a secret's start
		// told an agent whether its guess was one), then a word boundary.
		red = red[:max(0, len(red)-c.redactor.TailGuard())]
		text := safeCut(red)
		res = &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: string(text) + " …(truncated)"},
			&mcp.TextContent{Text: fmt.Sprintf("Truncated answer: the upstream sent more than %d bytes (--max-response-bytes); the text above stops after %d of them.", limit, len(text))},
		}}
	}
	return c.structureTruncated(t, res, structured)
}

// shapedContent is the content of the whole part of a cut JSON answer,
// red (redacted): its text, shaped by the whitelist entry's fields and
// maxItems as a whole answer is (Shaper.Shape), the shaping note if any,
// then note. It is false when the entry's shaping could not read red.
func shapedContent(t *Tool, red []byte, note string) ([]mcp.Content, bool) {
	content := []mcp.Content{&mcp.TextContent{Text: string(red)}}
	if t.shape != nil {
		shaped, shapeNote, ok := t.shape.reshape(red)
		if !ok {
			return nil, false
		}
		content[0] = &mcp.TextContent{Text: string(shaped)}
		if shapeNote != "" {
			content = append(content, &mcp.TextContent{Text: shapeNote})
		}
	}
	return append(content, &mcp.TextContent{Text: note}), true
}

// structureTruncated gives res, a cut answer's result, the
// structuredContent the shaper can make conform (for a part of the answer,
// often its fallback {}), when the caller takes one and the tool declares
// an output schema.
func (c *Catalog) structureTruncated(t *Tool, res *mcp.CallToolResult, structured bool) *mcp.CallToolResult {
	if structured && t.output.Raw() != nil {
		c.shaper.StructureTruncated(t.def.Name, &t.output, res)
	}
	return res
}

// arrayPrefix decodes the items of a JSON array that arrived whole.
func arrayPrefix(prefix []byte) ([]json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, false
	}
	items := []json.RawMessage{}
	for dec.More() {
		var item json.RawMessage
		if err := dec.Decode(&item); err != nil {
			break // the item the limit cut
		}
		items = append(items, item)
	}
	return items, true
}

// completePrefix gives the part of a JSON object or array cut short that
// arrived whole: prefix up to the end of its last complete value (a
// member's key without its value is left out, and so is a number the cut
// may have shortened), with the containers still open closed after it.
func completePrefix(prefix []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	type level struct{ obj, key bool } // key: an object expecting a key
	var stack []level
	end, closers := -1, ""
	record := func() {
		end = int(dec.InputOffset())
		b := make([]byte, 0, len(stack))
		for i := len(stack) - 1; i >= 0; i-- {
			if stack[i].obj {
				b = append(b, '}')
			} else {
				b = append(b, ']')
			}
		}
		closers = string(b)
	}
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].obj {
			stack[n-1].key = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if len(stack) == 0 {
			if d, ok := tok.(json.Delim); !ok || (d != '{' && d != '[') {
				return nil, false // a scalar: nothing to keep
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, level{obj: true, key: true})
			case '[':
				stack = append(stack, level{})
			default:
				stack = stack[:len(stack)-1]
				valueDone()
			}
		case string:
			if n := len(stack); stack[n-1].obj && stack[n-1].key {
				stack[n-1].key = false
				continue
			}
			valueDone()
		case json.Number:
			if int(dec.InputOffset()) >= len(prefix) {
				return finish(prefix, end, closers)
			}
			valueDone()
		default:
			valueDone()
		}
		record()
		if len(stack) == 0 {
			break // whole: not cut after all
		}
	}
	return finish(prefix, end, closers)
}

func finish(prefix []byte, end int, closers string) ([]byte, bool) {
	if end < 0 {
		return nil, false
	}
	return append(prefix[:end:end], closers...), true
}

// safeCut ends redacted text before its last word, which the limit may
// have cut inside (half a secret would not match a rule), and at a UTF-8
// boundary. The last word is the last run of non-space bytes; in text
// without spaces (compact JSON, a query string), the last run of bytes a
// token is made of.
func safeCut(b []byte) []byte {
	if i := bytes.LastIndexFunc(b, unicode.IsSpace); i > 0 {
		b = b[:i]
	} else {
		i := len(b)
		for i > 0 && tokenByte(b[i-1]) {
			i--
		}
		b = b[:i]
	}
	for len(b) > 0 && !utf8.Valid(b) {
		b = b[:len(b)-1]
	}
	return b
}

// tokenByte reports whether c may be part of a key or token, as written
// plain, base64-, URL- or JSON-escaped.
func tokenByte(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("+/=_-.~%\\", c) >= 0
}
