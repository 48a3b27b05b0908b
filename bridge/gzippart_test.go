package bridge_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// TestMultipartFormAnswerGzipPart: a multipart/form-data answer reaches
// the agent as a blob; a part of it that is gzip labelled as the JSON it
// holds is inflated and redacted (and compressed again). The blob used to
// be redacted without its boundary, as one text, and the sanitizer did not
// look into gzip labelled as JSON: the agent inflated the part and read the
// upstream token it echoed, a password and an AWS key.
func TestMultipartFormAnswerGzipPart(t *testing.T) {
	const token = "upstream-T0ken-123456"
	secretJSON := `{"password":"hunter2","aws":"AKIAIOSFODNN7EXAMPLE","echo":"Bearer ` + token + `"}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		io.WriteString(zw, secretJSON)
		zw.Close()
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		pw, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Disposition": {`form-data; name="pet"`}, "Content-Type": {"application/json"}})
		pw.Write(z.Bytes())
		mw.Close()
		w.Header().Set("Content-Type", "multipart/form-data; boundary="+mw.Boundary())
		w.Write(buf.Bytes())
	}))
	defer up.Close()
	res, err := specloader.LoadData(t.Context(), []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /form: {get: {operationId: form, responses: {"200": {description: ok}}}}
`), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Credentials: bridge.Credentials{BearerToken: token}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := connect(t, b).CallTool(t.Context(), &mcp.CallToolParams{Name: "form", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Content) != 1 {
		t.Fatalf("%d contents, want the blob", len(r.Content))
	}
	er, ok := r.Content[0].(*mcp.EmbeddedResource)
	if !ok || er.Resource.MIMEType != "multipart/form-data" {
		t.Fatalf("got %#v, want a multipart/form-data blob", r.Content[0])
	}
	blob := er.Resource.Blob
	start, end := bytes.Index(blob, []byte("\r\n\r\n")), bytes.LastIndex(blob, []byte("\r\n--"))
	if start < 0 || end < start {
		t.Fatalf("blob %q is not the multipart answer", blob)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob[start+4 : end]))
	if err != nil {
		t.Fatalf("part is not gzip any more: %v", err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"hunter2", "AKIAIOSFODNN7EXAMPLE", token} {
		if strings.Contains(string(plain), s) {
			t.Errorf("%q reached the agent inside the gzip part: %s", s, plain)
		}
	}
}
