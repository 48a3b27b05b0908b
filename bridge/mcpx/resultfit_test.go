package mcpx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/result"
	"github.com/mcpbridge/mcpbridge/transport/handoff"
)

// TestCallResultFitsMessage: whatever an upstream answers within
// --max-response-bytes, the tools/call result stays a message MCP clients
// accept (the TypeScript SDK's stdio client closes the connection past
// 10 MiB). Escaped as JSON, a NUL, an invalid UTF-8 byte, <, > and & take
// 6 bytes each: a 4 MiB text/plain answer of NULs was a 25 MB message, and
// a 1 MiB JSON answer of <s, sent as text and as structuredContent, 12 MB.
// The answer is cut (a text), sent once (a text repeating
// structuredContent), or refused as an error result (a structuredContent
// too large alone), never sent whole.
func TestCallResultFitsMessage(t *testing.T) {
	// The limit made small: encoding megabytes under the race detector
	// takes minutes. The escaping is the same.
	if got := resultLimit(4 << 20); got != maxResultBytes {
		t.Errorf("limit with the default 4 MiB answers: %d, want %d", got, maxResultBytes)
	}
	if got := resultLimit(32 << 20); got < 64<<20 {
		t.Errorf("limit with 32 MiB answers: %d, want room for two copies", got)
	}
	defer func(limit int) { fitLimit = limit }(fitLimit)
	fitLimit = 64 << 10
	const past = 12 << 10 // 6 x past > fitLimit
	jsonLt := `{"id":1,"name":"` + strings.Repeat("<", past/2) + `"}`
	bigLt := `{"id":1,"name":"` + strings.Repeat("<", past) + `"}`
	meta := mcp.Meta{mcp.MetaKeyServerInfo: map[string]any{"name": "mcpbridge"}}
	for _, tc := range []struct {
		name  string
		res   *mcp.CallToolResult
		isErr bool
		text  string // a text block holds it
		sc    bool   // structuredContent kept
	}{
		{"NULs as text", &mcp.CallToolResult{Meta: meta, Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("\x00", past)}}}, false, "…(truncated)", false},
		{"markup as text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("<b>&</b>", past/4)}}}, false, "<b>&</b>", false},
		{"invalid UTF-8 as text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("\xff", past)}}}, false, "…(truncated)", false},
		{"text beside {}", &mcp.CallToolResult{Meta: mcp.Meta{result.MetaKey: map[string]any{"replaced": true}},
			Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("\x1b", past)}}, StructuredContent: json.RawMessage(`{}`)}, false, "…(truncated)", true},
		{"text repeating structuredContent", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: jsonLt}}, StructuredContent: json.RawMessage(jsonLt)}, false, "structuredContent only", true},
		{"structuredContent alone", &mcp.CallToolResult{Meta: meta, Content: []mcp.Content{}, StructuredContent: json.RawMessage(bigLt)}, true, "not sent", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// An operator who raised --max-response-bytes gets it whole.
			raised := &callResult{CallToolResult: tc.res, limit: resultLimit(int64(6 * past))}
			if wire := encodeLikeJSONRPC(t, raised); bytes.Contains(wire, []byte("…(truncated)")) || bytes.Contains(wire, []byte("not sent")) {
				t.Errorf("with a raised limit the result was cut: %.200s", wire)
			}
			for _, taker := range []*handoff.Taker{nil, handoff.NewTaker()} {
				wire := encodeLikeJSONRPC(t, &callResult{CallToolResult: tc.res, taker: taker})
				if taker != nil {
					if parts, handed := taker.Take(wire); handed {
						wire = bytes.Join(parts, nil)
					}
				}
				if len(wire) > fitLimit {
					t.Fatalf("the result encodes to %d bytes, more than %d", len(wire), fitLimit)
				}
				var got mcp.CallToolResult
				if err := json.Unmarshal(wire, &got); err != nil {
					t.Fatalf("decoding the result: %v", err)
				}
				if got.IsError != tc.isErr {
					t.Errorf("isError %v, want %v", got.IsError, tc.isErr)
				}
				if (got.StructuredContent != nil) != tc.sc {
					t.Errorf("structuredContent %v, want present %v", got.StructuredContent != nil, tc.sc)
				}
				var texts []string
				for _, c := range got.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						texts = append(texts, tc.Text)
					}
				}
				if all := strings.Join(texts, "\n"); !strings.Contains(all, tc.text) {
					t.Errorf("the text blocks hold no %q: %.300s", tc.text, all)
				}
				if tc.res.Meta != nil && got.Meta[mcp.MetaKeyServerInfo] == nil && tc.res.Meta[mcp.MetaKeyServerInfo] != nil {
					t.Errorf("_meta %v lost the server's identity", got.Meta)
				}
			}
		})
	}
}
