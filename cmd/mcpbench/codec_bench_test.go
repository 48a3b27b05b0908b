package main

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkResultCodec is the smallest reproduction of why a result with
// structuredContent costs more than text alone, in go-sdk's own types and
// nothing of mcpbridge: one 1 MiB JSON answer as a text block, as
// structuredContent, or both (MCP's recommended shape), marshaled as a
// server does and unmarshaled as go-sdk's client does (structuredContent
// into map[string]any; a text block into one string).
//
//	go test ./cmd/mcpbench -run '^$' -bench ResultCodec -benchmem
func BenchmarkResultCodec(b *testing.B) {
	body := searchJSON(1<<20, 2)
	for _, shape := range []struct {
		name             string
		text, structured bool
	}{{"text", true, false}, {"structured", false, true}, {"both", true, true}} {
		res := &mcp.CallToolResult{Content: []mcp.Content{}}
		if shape.text {
			res.Content = append(res.Content, &mcp.TextContent{Text: string(body)})
		}
		if shape.structured {
			res.StructuredContent = json.RawMessage(body)
		}
		enc, err := json.Marshal(res)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(shape.name+"/marshal", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := json.Marshal(res); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(shape.name+"/unmarshal", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var r mcp.CallToolResult
				if err := json.Unmarshal(enc, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
