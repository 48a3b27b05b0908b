package mcpx

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/result"
)

// The values of [Options.ResultText]: when a result that carries its JSON
// answer as structuredContent also carries it as a text block.
const (
	// TextAlways sends both, as MCP asks "for backwards compatibility":
	// hosts differ in which one they give the model (Claude Desktop and
	// Cursor read content; Claude Code and VS Code read structuredContent
	// when it is there), so both serve every host. The default.
	TextAlways = "always"
	// TextAuto sends the text block only to clients on a protocol revision
	// without structuredContent (before 2025-06-18). For deployments whose
	// clients read structuredContent; it halves the bytes of large answers.
	TextAuto = "auto"
)

// structuredSince is the first protocol revision with structuredContent.
const structuredSince = "2025-06-18"

// ValidResultText reports whether v is a ResultText value ("" is always).
func ValidResultText(v string) bool { return v == "" || v == TextAlways || v == TextAuto }

// adapt fits a tool result to the revision the caller negotiated:
//
//   - a client before 2025-06-18 knows nothing of structuredContent, so it
//     gets none (its text block carries the whole answer in every mode);
//   - in [TextAuto] mode, a newer client gets no text block duplicating a
//     structuredContent that is the whole answer (a reduced or replaced
//     one, see result.MetaKey, keeps its text).
//
// An unknown revision ("") counts as a new one.
func (s *Server) adapt(version string, res *mcp.CallToolResult) {
	if res == nil || res.StructuredContent == nil {
		return
	}
	if version != "" && version < structuredSince {
		res.StructuredContent = nil
		if res.Meta != nil {
			delete(res.Meta, result.MetaKey)
			if len(res.Meta) == 0 {
				res.Meta = nil
			}
		}
		return
	}
	if res.IsError || len(res.Content) == 0 {
		return
	}
	if _, partial := res.Meta[result.MetaKey]; partial {
		return
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	raw, isRaw := res.StructuredContent.(json.RawMessage)
	if !ok || !isRaw || tc.Text != string(raw) {
		return
	}
	rest := res.Content[1:] // a shaping note, say, stays
	switch {
	case s.resultText == TextAuto:
		res.Content = append(make([]mcp.Content, 0, len(rest)), rest...)
	case len(raw)*maxEscape > maxResultBytes && len(raw)+escapedLen(tc.Text) > maxResultBytes:
		// Sent twice, the answer would make a message the TypeScript SDK's
		// stdio client refuses (it closes the connection): once is enough.
		note := &mcp.TextContent{Text: fmt.Sprintf("The answer (%d bytes of JSON) is in structuredContent only: with a second copy as text the result would pass %d MiB, more than MCP clients such as the TypeScript SDK accept in one message. Narrow the request to get it as text too.", len(raw), maxResultBytes>>20)}
		res.Content = append([]mcp.Content{note}, rest...)
	}
}

// maxResultBytes bounds a result that carries its answer twice: under the
// official TypeScript SDK's 10 MiB stdio message cap, with room for the
// envelope and the other blocks.
const maxResultBytes = 9 << 20

// maxEscape bounds len(raw)+escapedLen(text) over len(raw) for a text
// equal to raw: a byte escapes to at most 6 (\u00XX). Under it, escapedLen
// (a pass over the answer) need not run.
const maxEscape = 7

// escapedLen is the length of s as a JSON string's contents (go-sdk
// writes without HTML escaping).
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5 // \u00XX
		}
	}
	return n
}
