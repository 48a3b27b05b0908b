package result_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge/result"
	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// TestEveryBodyRedacted checks that the configured credential echoed in an
// answer never reaches the client, whatever the media type.
func TestEveryBodyRedacted(t *testing.T) {
	const secret = "sk-live-configured-1234567890"
	red, err := sanitizer.New(sanitizer.Rules{Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	s := &result.Shaper{Redactor: red, Log: zap.NewNop()}
	for _, ct := range []string{"application/json", "text/plain", "application/x-ndjson", "application/yaml", "application/xml",
		"image/png", "audio/mpeg", "application/octet-stream", "", "application/pdf", "application/x-www-form-urlencoded"} {
		body := []byte("\x89PNG\r\n header " + secret + " trailer")
		if strings.Contains(ct, "json") {
			body = []byte(`{"echo":"` + secret + `"}`)
		}
		for _, status := range []int{200, 500} {
			h := http.Header{}
			if ct != "" {
				h.Set("Content-Type", ct)
			}
			res := s.Shape(result.Tool{Name: "t"}, status, h, body)
			if leaked(res, secret) {
				t.Errorf("%q status %d: the credential reached the client", ct, status)
			}
		}
	}
}

func leaked(res *mcp.CallToolResult, secret string) bool {
	for _, c := range res.Content {
		switch x := c.(type) {
		case *mcp.TextContent:
			if strings.Contains(x.Text, secret) {
				return true
			}
		case *mcp.ImageContent:
			if bytes.Contains(x.Data, []byte(secret)) {
				return true
			}
		case *mcp.AudioContent:
			if bytes.Contains(x.Data, []byte(secret)) {
				return true
			}
		case *mcp.EmbeddedResource:
			if bytes.Contains(x.Resource.Blob, []byte(secret)) || strings.Contains(x.Resource.Text, secret) {
				return true
			}
		}
	}
	return false
}
