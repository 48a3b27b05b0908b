package bridge_test

import (
	"bytes"
	"io"
	"mime/multipart"
	"net"
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

const resultSpec = `openapi: 3.0.3
info: {title: results, version: "1"}
paths:
  /big: {get: {operationId: big, responses: {"200": {description: ok}}}}
  /garbage: {get: {operationId: garbage, responses: {"200": {description: ok}}}}
  /reset: {get: {operationId: reset, responses: {"200": {description: ok}}}}
  /image: {get: {operationId: image, responses: {"200": {description: ok}}}}
  /binary: {get: {operationId: binary, responses: {"200": {description: ok}}}}
  /empty: {delete: {operationId: empty, responses: {"204": {description: gone}}}}
  /text: {get: {operationId: text, responses: {"200": {description: ok}}}}
  /pretty: {get: {operationId: pretty, responses: {"200": {description: ok}}}}
  /mixed: {get: {operationId: mixed, responses: {"200": {description: ok}}}}
`

var pngBytes = []byte("\x89PNG\r\n\x1a\nfake-png-payload")

// TestResults checks how each kind of upstream answer reaches the client,
// including the broken ones: none may crash the server or leak raw bytes.
func TestResults(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"data":"`+strings.Repeat("x", 2048)+`"}`)
		case "/garbage":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"unterminated": "token sk-abcdefghijklmnopqrstuvwx`)
		case "/reset":
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write(pngBytes)
		case "/binary":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write([]byte("%PDF-1.7 binary"))
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "hello, Bearer abcdefghijklmnop")
		case "/mixed":
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			for _, p := range []struct{ ct, body string }{
				{"text/plain", "main body, password hunter2 Bearer abcdefghijklmnop"},
				{"image/png", string(pngBytes)},
				{"application/json", `{"token":"t-123456789","n":1}`},
			} {
				pw, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {p.ct}})
				io.WriteString(pw, p.body)
			}
			mw.Close()
			w.Header().Set("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
			w.Write(buf.Bytes())
		case "/pretty":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "{\n  \"a\": [1, 2],\n  \"b\": \"c\"\n}\n")
		}
	}))
	defer up.Close()
	res, err := specloader.LoadData(t.Context(), []byte(resultSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), MaxResponseBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, b)
	call := func(name string) *mcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: protocol error %v (tool failures must be isError results)", name, err)
		}
		return r
	}
	text := func(r *mcp.CallToolResult) string {
		if len(r.Content) != 1 {
			return ""
		}
		if tc, ok := r.Content[0].(*mcp.TextContent); ok {
			return tc.Text
		}
		return ""
	}

	if r := call("big"); !r.IsError || !strings.Contains(text(r), "too large") {
		t.Errorf("big: isError=%v %q, want a too-large error", r.IsError, text(r))
	}
	if r := call("garbage"); r.IsError || strings.Contains(text(r), "sk-abcdefghijklmnopqrstuvwx") || !strings.Contains(text(r), "unterminated") {
		t.Errorf("garbage JSON: isError=%v %q, want redacted text", r.IsError, text(r))
	}
	if r := call("reset"); !r.IsError || !strings.Contains(text(r), "upstream unavailable") || strings.Contains(text(r), up.URL) {
		t.Errorf("reset: isError=%v %q, want a safe unavailable error", r.IsError, text(r))
	}
	if r := call("image"); len(r.Content) != 1 {
		t.Errorf("image: %d contents", len(r.Content))
	} else if img, ok := r.Content[0].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || string(img.Data) != string(pngBytes) {
		t.Errorf("image: got %#v", r.Content[0])
	}
	if r := call("binary"); len(r.Content) != 1 {
		t.Errorf("binary: %d contents", len(r.Content))
	} else if er, ok := r.Content[0].(*mcp.EmbeddedResource); !ok || er.Resource.MIMEType != "application/pdf" || string(er.Resource.Blob) != "%PDF-1.7 binary" {
		t.Errorf("binary: got %#v", r.Content[0])
	}
	if r := call("empty"); r.IsError || !strings.Contains(text(r), "204") {
		t.Errorf("empty: isError=%v %q", r.IsError, text(r))
	}
	if r := call("text"); r.IsError || text(r) != "hello, Bearer [REDACTED]" {
		t.Errorf("text: isError=%v %q", r.IsError, text(r))
	}
	if r := call("mixed"); len(r.Content) != 3 {
		t.Errorf("mixed: %d contents, want text, image and resource", len(r.Content))
	} else {
		tc, ok1 := r.Content[0].(*mcp.TextContent)
		img, ok2 := r.Content[1].(*mcp.ImageContent)
		res, ok3 := r.Content[2].(*mcp.EmbeddedResource)
		switch {
		case !ok1 || !ok2 || !ok3:
			t.Errorf("mixed: content kinds %T %T %T", r.Content[0], r.Content[1], r.Content[2])
		case tc.Text != "main body, password hunter2 Bearer [REDACTED]" || img.MIMEType != "image/png" ||
			res.Resource.Text != `{"token":"[REDACTED]","n":1}` || res.Resource.MIMEType != "application/json":
			t.Errorf("mixed: got %q, %q, %+v", tc.Text, img.MIMEType, res.Resource)
		}
	}
	if r := call("pretty"); text(r) != `{"a":[1,2],"b":"c"}` {
		t.Errorf("pretty JSON: %q, want it compacted", text(r))
	}
}
