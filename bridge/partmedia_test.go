package bridge_test

import (
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// sent is what an upstream received: the request URI, the Content-Type
// and the body, a multipart boundary replaced by BOUNDARY.
type sent struct{ URI, ContentType, Body string }

// wireUpstream records the last request's URI, Content-Type and body.
func wireUpstream(t *testing.T) (*httptest.Server, func() sent) {
	t.Helper()
	var mu sync.Mutex
	var last sent
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s := sent{r.URL.RequestURI(), r.Header.Get("Content-Type"), string(b)}
		if _, params, err := mime.ParseMediaType(s.ContentType); err == nil && params["boundary"] != "" {
			s.ContentType = strings.ReplaceAll(s.ContentType, params["boundary"], "BOUNDARY")
			s.Body = strings.ReplaceAll(s.Body, params["boundary"], "BOUNDARY")
		}
		mu.Lock()
		last = s
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(up.Close)
	return up, func() sent {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// wireCases calls tool with each case's arguments and compares what the
// upstream received.
func wireCases(t *testing.T, spec, tool string, cases []wireCase) {
	t.Helper()
	up, last := wireUpstream(t)
	rt := bridge.NewRuntime(specCatalog(t, spec, bridge.Options{BaseURL: up.URL, Client: up.Client()}))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: tool, Args: []byte(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			if out.Kind != bridge.OK {
				t.Fatalf("kind %v: %s", out.Kind, out.Result.Content[0].(*mcp.TextContent).Text)
			}
			if diff := cmp.Diff(tc.want, last()); diff != "" {
				t.Errorf("upstream request mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

type wireCase struct {
	name, args string
	want       sent
}

// part is one multipart/form-data part as mime/multipart writes it.
func part(disposition, contentType, body string) string {
	s := "--BOUNDARY\r\nContent-Disposition: form-data; " + disposition + "\r\n"
	if contentType != "" {
		s += "Content-Type: " + contentType + "\r\n"
	}
	return s + "\r\n" + body + "\r\n"
}

const multipartForm = "multipart/form-data; boundary=BOUNDARY"

// TestMultipartBase64WithMediaType: an OAS 3.1 string with
// contentEncoding base64 and a media type (contentMediaType, or the
// Encoding Object's contentType) is a file the agent sends as base64: the
// part holds the decoded bytes, labelled with that type. Without a media
// type the base64 text is sent as it is.
func TestMultipartBase64WithMediaType(t *testing.T) {
	const spec = `openapi: 3.1.0
info: {title: parts, version: "1"}
paths:
  /upload:
    post:
      operationId: upload
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                icon: {type: string, contentEncoding: base64, contentMediaType: image/png}
                blob: {type: string, contentEncoding: base64}
                scan: {type: string, contentEncoding: base64}
                note: {type: string, contentEncoding: base64}
            encoding:
              scan: {contentType: image/tiff}
              note: {contentType: text/plain}
      responses: {"200": {description: ok}}
`
	wireCases(t, spec, "upload", []wireCase{
		{"contentMediaType", `{"body":{"icon":"iVBORw0KGgo="}}`, sent{"/upload", multipartForm,
			part(`name="icon"; filename="icon"`, "image/png", "\x89PNG\r\n\x1a\n") + "--BOUNDARY--\r\n"}},
		{"file object", `{"body":{"icon":{"content":"aGk=","filename":"i.png"}}}`, sent{"/upload", multipartForm,
			part(`name="icon"; filename="i.png"`, "image/png", "hi") + "--BOUNDARY--\r\n"}},
		{"encoding contentType", `{"body":{"scan":"aGVsbG8="}}`, sent{"/upload", multipartForm,
			part(`name="scan"; filename="scan"`, "image/tiff", "hello") + "--BOUNDARY--\r\n"}},
		{"no media type", `{"body":{"blob":"aGk=","note":"aGk="}}`, sent{"/upload", multipartForm,
			part(`name="blob"`, "", "aGk=") + part(`name="note"`, "", "aGk=") + "--BOUNDARY--\r\n"}},
	})
}
