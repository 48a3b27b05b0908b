package result_test

import (
	"bytes"
	"net/http"
	"net/url"
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

// TestMultipartFileNamesRedacted: a part's file name, which names its
// resource, is the upstream's answer too: one that echoes the credential
// (as sent, or percent-encoded in RFC 2231's filename*) must not carry it
// to the client in the resource's URI, which stays a URI.
func TestMultipartFileNamesRedacted(t *testing.T) {
	const secret = "sk-live-configured-1234567890"
	red, err := sanitizer.New(sanitizer.Rules{Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	s := &result.Shaper{Redactor: red, Log: zap.NewNop()}
	body := "--b\r\nContent-Type: application/json\r\n\r\n{\"a\":1}\r\n" +
		"--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"report " + secret + ".pdf\"\r\n\r\n%PDF\r\n" +
		"--b\r\nContent-Type: text/csv\r\nContent-Disposition: attachment; filename*=UTF-8''" + url.PathEscape(secret) + "%2Ecsv\r\n\r\na,b\r\n--b--\r\n"
	res := s.Shape(result.Tool{Name: "t"}, 200, http.Header{"Content-Type": {"multipart/mixed; boundary=b"}}, []byte(body))
	if len(res.Content) != 3 {
		t.Fatalf("%d blocks, want 3", len(res.Content))
	}
	if leaked(res, secret) {
		t.Error("the credential reached the client")
	}
	for _, c := range res.Content[1:] {
		uri := c.(*mcp.EmbeddedResource).Resource.URI
		if u, err := url.Parse(uri); err != nil || strings.ContainsAny(uri, " []") || !strings.HasPrefix(u.Path, "/response/part/") {
			t.Errorf("resource URI %q: not a URI naming the part (%v)", uri, err)
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
			if bytes.Contains(x.Resource.Blob, []byte(secret)) || strings.Contains(x.Resource.Text, secret) ||
				strings.Contains(x.Resource.URI, secret) || strings.Contains(x.Resource.MIMEType, secret) {
				return true
			}
		}
	}
	return false
}
