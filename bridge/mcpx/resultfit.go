package mcpx

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/result"
)

// fitLimit is the largest encoded result sent whole: maxResultBytes (a
// variable for tests, which need not encode megabytes), or twice a
// --max-response-bytes raised past it (resultLimit).
var fitLimit = maxResultBytes

// resultLimit is the largest encoded result sent whole with the upstream
// body limit maxResponse: fitLimit, or, for a limit an operator raised
// past what the TypeScript SDK takes, room for such an answer twice (as
// text and as structuredContent), as before the escaping was counted.
func resultLimit(maxResponse int64) int {
	return max(fitLimit, int(min(maxResponse, 1<<40))*2+64<<10)
}

// maxBytes is the largest encoding of r sent whole.
func (r *callResult) maxBytes() int {
	if r.limit > 0 {
		return r.limit
	}
	return fitLimit
}

// fitSlack is the room fit leaves for the marks of a cut (the marker and
// the note saying so), and minCutText the least of a text block worth
// sending cut.
const (
	fitSlack   = 1 << 10
	minCutText = 4 << 10
)

// fit is the result made to encode within r's limit, for one whose
// encoding takes size bytes, more. Escaped as JSON, a control character, an
// invalid UTF-8 byte, <, > and & take 6 bytes each, so an answer within
// --max-response-bytes can encode to six times its size, past what MCP
// clients accept in one message (the TypeScript SDK's stdio client closes
// the connection beyond 10 MiB). In turn: a text block repeating
// structuredContent goes (as adapt drops one it counts too large), the
// largest text block is cut (redacted text: the cut keeps no part of a
// secret the whole did not), and failing both the answer is not sent, an
// error result says why. The result itself is left as it is.
func (r *callResult) fit(size int) *callResult {
	res := *r.CallToolResult
	res.Content = slices.Clone(res.Content)
	limit := r.maxBytes()
	out := &callResult{CallToolResult: &res, taker: r.taker, limit: limit, fitted: true}
	if raw, _ := res.StructuredContent.(json.RawMessage); len(raw) > 0 && len(res.Content) > 0 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok && tc.Text == string(raw) {
			note := structuredOnlyNote(len(raw))
			size += contentLen(note) - contentLen(tc)
			res.Content[0] = note
			if size <= limit {
				return out
			}
		}
	}
	big, bigLen := -1, 0
	for i, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			if n := contentLen(tc); n > bigLen {
				big, bigLen = i, n
			}
		}
	}
	if budget := limit - (size - bigLen) - fitSlack; big >= 0 && budget >= minCutText {
		tc := res.Content[big].(*mcp.TextContent)
		kept := cutEncoded(tc.Text, budget)
		res.Content[big] = &mcp.TextContent{Text: kept + " …(truncated)", Meta: tc.Meta, Annotations: tc.Annotations}
		res.Content = append(res.Content, &mcp.TextContent{Text: fmt.Sprintf("Truncated answer: escaped as JSON (where a control character, an invalid UTF-8 byte, <, > and & take 6 bytes each) the result would pass %d MiB, more than MCP clients such as the TypeScript SDK accept in one message; the text above stops after %d of its %d bytes.", limit>>20, len(kept), len(tc.Text))})
		return out
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("The answer was not sent: encoded as JSON the result takes %d bytes (a control character, an invalid UTF-8 byte, <, > and & take 6 bytes each), more than the %d MiB MCP clients such as the TypeScript SDK accept in one message. Narrow the request.", size, limit>>20)}}
	res.StructuredContent = nil
	res.IsError = true
	if _, has := res.Meta[result.MetaKey]; has {
		res.Meta = maps.Clone(res.Meta)
		delete(res.Meta, result.MetaKey)
	}
	return out
}

// contentLen is the length of a text block's encoding.
func contentLen(tc *mcp.TextContent) int {
	b, err := tc.MarshalJSON()
	if err != nil {
		return 0
	}
	return len(b)
}

// cutEncoded is the longest prefix of s (whole runes) that takes at most
// budget bytes as a JSON string's contents, as encoding/json writes them
// (HTML characters escaped); each rune is counted at its longest escape.
func cutEncoded(s string, budget int) string {
	n := 0
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		e := w
		switch {
		case r == utf8.RuneError && w == 1, r < 0x20 && r != '\n' && r != '\r' && r != '\t',
			r == '<', r == '>', r == '&', r == '\u2028', r == '\u2029':
			e = 6
		case r == '"', r == '\\', r == '\n', r == '\r', r == '\t':
			e = 2
		}
		if n+e > budget {
			return s[:i]
		}
		n += e
		i += w
	}
	return s
}
