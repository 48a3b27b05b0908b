package result_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/result"
)

const listSchema = `                type: object
                required: [total_count, items]
                properties:
                  total_count: {type: integer}
                  incomplete_results: {type: boolean}
                  items:
                    type: array
                    items:
                      type: object
                      required: [id, title, state]
                      properties:
                        id: {type: integer}
                        number: {type: integer}
                        title: {type: string}
                        state: {type: string, enum: [open, closed]}
                        body: {type: string, nullable: true}
                        labels:
                          type: array
                          items:
                            type: object
                            properties:
                              name: {type: string}
                              color: {type: string}
                        user:
                          type: object
                          properties:
                            login: {type: string}
                            id: {type: integer}
                            site_admin: {type: boolean}
`

// listAnswer is a search answer of about size bytes.
func listAnswer(size int) []byte {
	var b strings.Builder
	b.WriteString(`{"total_count":1000,"incomplete_results":false,"items":[`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"number":%d,"title":"Issue number %d needs a look","state":"open","body":"Steps to reproduce: run it with \"--flag\" and watch.","labels":[{"name":"bug","color":"d73a4a"},{"name":"help wanted","color":"008672"}],"user":{"login":"octocat","id":583231,"site_admin":false}}`, i, i+1, i)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkStructure is the output-schema step of a call: the answer is
// checked in one pass (what Shape does) or, as before, decoded and run
// through the validator.
func BenchmarkStructure(b *testing.B) {
	out := testOutput(b, "tolerant", listSchema, nil)
	s, _ := newShaper(b)
	for _, size := range []int{235, 16 << 10, 1 << 20} {
		body := listAnswer(size)
		b.Run(fmt.Sprintf("onepass/%d", size), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				r := s.Shape(result.Tool{Name: "list", Output: out}, 200, jsonHeader, body)
				if r.StructuredContent == nil {
					b.Fatal("no structuredContent")
				}
			}
		})
		b.Run(fmt.Sprintf("validator/%d", size), func(b *testing.B) {
			resolved, err := out.Resolved()
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				r := s.Shape(result.Tool{Name: "list"}, 200, jsonHeader, body)
				var m map[string]any
				if err := json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &m); err != nil {
					b.Fatal(err)
				}
				if err := resolved.Validate(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
