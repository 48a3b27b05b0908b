package bridge_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// TestImageBlocksHostsAccept: an image block goes to the client only for
// PNG, JPEG, GIF and WebP bytes, named by what the bytes are. Anthropic's
// API refuses any other image type, and an image whose bytes are not the
// type it names, and that refusal fails the host's whole conversation
// (anomalyco/opencode#12519), so TIFF, BMP and mislabelled bytes come as
// an attachment (an embedded resource with the upstream's label) instead.
func TestImageBlocksHostsAccept(t *testing.T) {
	jpeg := []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00fake-jpeg")
	tiff := []byte("II*\x00\x08\x00\x00\x00fake-tiff")
	bmp := []byte("BM\x00\x00\x00\x00fake-bmp")
	png := []byte("\x89PNG\r\n\x1a\nfake-png")
	answers := map[string]struct {
		ct   string
		body []byte
	}{
		"/jpegAsPNG": {"image/png", jpeg},
		"/tiff":      {"image/tiff", tiff},
		"/bmp":       {"image/bmp", bmp},
		"/notImage":  {"image/png", []byte("<html>not an image</html>")},
		"/webp":      {"image/webp", []byte("RIFF\x10\x00\x00\x00WEBPVP8 fake")},
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/parts" {
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			for _, p := range []struct {
				ct   string
				body []byte
			}{{"text/plain", []byte("caption")}, {"image/tiff", tiff}, {"image/png", png}} {
				pw, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {p.ct}})
				pw.Write(p.body)
			}
			mw.Close()
			w.Header().Set("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
			w.Write(buf.Bytes())
			return
		}
		a := answers[r.URL.Path]
		w.Header().Set("Content-Type", a.ct)
		w.Write(a.body)
	}))
	defer up.Close()
	var spec strings.Builder
	spec.WriteString("openapi: 3.0.3\ninfo: {title: images, version: '1'}\npaths:\n")
	for _, p := range []string{"jpegAsPNG", "tiff", "bmp", "notImage", "webp", "parts"} {
		spec.WriteString("  /" + p + ": {get: {operationId: " + p + ", responses: {\"200\": {description: ok}}}}\n")
	}
	b := specCatalog(t, spec.String(), bridge.Options{BaseURL: up.URL, Client: up.Client()})
	cs := connect(t, b)
	call := func(name string) []mcp.Content {
		t.Helper()
		r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil || r.IsError {
			t.Fatalf("%s: %v %+v", name, err, r)
		}
		return r.Content
	}
	image := func(name string, c mcp.Content, wantType string, want []byte) {
		t.Helper()
		if img, ok := c.(*mcp.ImageContent); !ok || img.MIMEType != wantType || !bytes.Equal(img.Data, want) {
			t.Errorf("%s: got %#v; want an image block %s", name, c, wantType)
		}
	}
	attachment := func(name string, c mcp.Content, wantType string, want []byte) {
		t.Helper()
		if er, ok := c.(*mcp.EmbeddedResource); !ok || er.Resource.MIMEType != wantType || !bytes.Equal(er.Resource.Blob, want) {
			t.Errorf("%s: got %#v; want an attachment %s with the bytes intact", name, c, wantType)
		}
	}
	image("jpegAsPNG", call("jpegAsPNG")[0], "image/jpeg", jpeg)
	image("webp", call("webp")[0], "image/webp", answers["/webp"].body)
	attachment("tiff", call("tiff")[0], "image/tiff", tiff)
	attachment("bmp", call("bmp")[0], "image/bmp", bmp)
	attachment("notImage", call("notImage")[0], "image/png", answers["/notImage"].body)
	parts := call("parts")
	if len(parts) != 3 {
		t.Fatalf("parts: %d blocks, want 3", len(parts))
	}
	if _, ok := parts[1].(*mcp.ImageContent); ok {
		t.Errorf("parts: the TIFF part is an image block")
	}
	image("parts[2]", parts[2], "image/png", png)
}
