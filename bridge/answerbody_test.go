package bridge_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// answerSpec is one GET operation whose answer the test upstream sends as
// ?ct= says, with the body ?b= gives.
const answerSpec = `openapi: 3.0.3
info: {title: answers, version: "1"}
paths:
  /answer:
    get:
      operationId: getAnswer
      parameters:
        - {name: ct, in: query, schema: {type: string}}
        - {name: b, in: query, schema: {type: string}}
        - {name: b64, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
`

// answerUpstream answers with the Content-Type and body its query names
// (b, or b64 decoded for bytes that are not UTF-8).
func answerUpstream(t *testing.T) *bridge.Runtime {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ct := r.URL.Query().Get("ct"); ct != "" {
			w.Header().Set("Content-Type", ct)
		} else {
			w.Header()["Content-Type"] = nil // no Content-Type at all
		}
		body := []byte(r.URL.Query().Get("b"))
		if b64 := r.URL.Query().Get("b64"); b64 != "" {
			body, _ = base64.StdEncoding.DecodeString(b64)
		}
		w.Write(body)
	}))
	t.Cleanup(up.Close)
	return bridge.NewRuntime(specCatalog(t, answerSpec, bridge.Options{BaseURL: up.URL, Client: up.Client()}))
}

// callAnswer calls getAnswer and returns its result.
func callAnswer(t *testing.T, rt *bridge.Runtime, ct, body string) *mcp.CallToolResult {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"ct": ct, "b": body})
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "getAnswer", Args: args})
	if err != nil || out.Kind != bridge.OK {
		t.Fatalf("%s %q: %v %+v", ct, body, err, out)
	}
	return out.Result
}

// resultText is the text of a result's first block ("" when it has none).
func resultText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// TestJSONInMarkupRedacted: JSON held in an XML element, a CDATA section
// or an HTML script (Next.js's __NEXT_DATA__, a page's inline config, a
// SOAP field carrying a JSON document) has its sensitive members masked,
// as the same JSON sent as text/plain has. Only the element and attribute
// rules read markup before: every secret below reached the agent.
func TestJSONInMarkupRedacted(t *testing.T) {
	rt := answerUpstream(t)
	for _, tc := range []struct{ ct, body, leak string }{
		{"text/html", `<html><script id="__NEXT_DATA__" type="application/json">{"props":{"apiKey":"leak-1"}}</script></html>`, "leak-1"},
		{"text/html; charset=utf-8", `<script>window.cfg = {"client_secret": "leak-2", "n": 1};</script>`, "leak-2"},
		{"text/html", `<pre>{"password":"leak-3"}</pre>`, "leak-3"},
		{"application/xml", `<r><payload>{"session_token":"leak-4","id":7}</payload></r>`, "leak-4"},
		{"application/soap+xml", `<r><p><![CDATA[{"access_token": "leak-5"}]]></p></r>`, "leak-5"},
		{"text/xml", `<r><p>{"db_password": 12345678}</p></r>`, "12345678"},
	} {
		got := resultText(callAnswer(t, rt, tc.ct, tc.body))
		if strings.Contains(got, tc.leak) || !strings.Contains(got, "[REDACTED]") {
			t.Errorf("%s %s: the agent got %s", tc.ct, tc.body, got)
		}
	}
	// What is not a sensitive member stays.
	if got := resultText(callAnswer(t, rt, "text/html", `<script>var x = {"id": 7, "name": "n"};</script><p>"a": b</p>`)); got != `<script>var x = {"id": 7, "name": "n"};</script><p>"a": b</p>` {
		t.Errorf("html without secrets changed: %s", got)
	}
}

// TestCSVSensitiveColumnsRedacted: a table whose header names a sensitive
// column (a users export's password or api_key) has that column's values
// masked, quoted or not, over a line break inside quotes, in CSV, in a
// semicolon-separated CSV and in TSV; other columns stay as sent. They all
// reached the agent before (CSV was read as plain text: value rules only).
func TestCSVSensitiveColumnsRedacted(t *testing.T) {
	rt := answerUpstream(t)
	for _, tc := range []struct{ ct, body, want string }{
		{"text/csv", "id,email,api_key,password\r\n1,a@b.c,k-leak-1,\"pw, \"\"leak\"\"\n2\"\r\n2,d@e.f,k-leak-2,\r\n",
			"id,email,api_key,password\r\n1,a@b.c,[REDACTED],\"[REDACTED]\"\r\n2,d@e.f,[REDACTED],\r\n"},
		{"text/csv; charset=utf-8", "user;Password\nbob;leak-3\n", "user;Password\nbob;[REDACTED]\n"},
		{"application/csv", "\"name\",\"client_secret\"\n\"x\",\"leak-4\"", "\"name\",\"client_secret\"\n\"x\",\"[REDACTED]\""},
		{"text/tab-separated-values", "user\tsession_token\tn\nbob\tleak-5\t3\n", "user\tsession_token\tn\nbob\t[REDACTED]\t3\n"},
		{"text/csv", "id,name,max_tokens\n1,a,100\n", "id,name,max_tokens\n1,a,100\n"},
	} {
		if got := resultText(callAnswer(t, rt, tc.ct, tc.body)); got != tc.want {
			t.Errorf("%s %q:\n got %q\nwant %q", tc.ct, tc.body, got, tc.want)
		}
	}
}

// pngFile is a 1x1 PNG.
var pngFile = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x03\x00\x08\xfc\x02\xfe\xa7\x9a\xa0\xa0\x00\x00\x00\x00IEND\xaeB`\x82")

// TestFileLabelledAsText: a file the upstream labels as JSON or text, or
// does not label at all (nginx's default_type, a framework that calls
// every answer JSON), reaches the agent as what it is, byte for byte: an
// image as image content, a PDF or an archive as an embedded resource of
// its type. Before, a labelled one went as text with every invalid byte
// turned into U+FFFD, and an unlabelled one as a resource with no media
// type. Text with a stray invalid byte stays text.
func TestFileLabelledAsText(t *testing.T) {
	rt := answerUpstream(t)
	pdf := []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n")
	zip := []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00\xff\xfe\x00\x01")
	for _, tc := range []struct {
		ct       string
		body     []byte
		kind, mt string
	}{
		{"application/json", pngFile, "image", "image/png"},
		{"text/plain", pngFile, "image", "image/png"},
		{"", pngFile, "image", "image/png"},
		{"text/plain; charset=utf-8", pdf, "resource", "application/pdf"},
		{"application/vnd.api+json", zip, "resource", "application/zip"},
		{"", []byte{0, 1, 2, 0xff, 0xfe}, "resource", "application/octet-stream"},
		{"application/octet-stream", pngFile, "resource", "application/octet-stream"},
		{"text/csv", []byte("name,city\nbob,M\xfcnchen\n"), "text", ""},
	} {
		args, _ := json.Marshal(map[string]string{"ct": tc.ct, "b64": base64.StdEncoding.EncodeToString(tc.body)})
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: "getAnswer", Args: args})
		if err != nil || out.Kind != bridge.OK || len(out.Result.Content) != 1 {
			t.Fatalf("%q: %v %+v", tc.ct, err, out)
		}
		var kind, mt string
		var data []byte
		switch c := out.Result.Content[0].(type) {
		case *mcp.ImageContent:
			kind, mt, data = "image", c.MIMEType, c.Data
		case *mcp.EmbeddedResource:
			kind, mt, data = "resource", c.Resource.MIMEType, c.Resource.Blob
		case *mcp.TextContent:
			kind = "text"
		}
		if kind != tc.kind || mt != tc.mt || kind != "text" && !bytes.Equal(data, tc.body) {
			t.Errorf("%q %q: got %s %q (%d bytes), want %s %q", tc.ct, tc.body[:min(8, len(tc.body))], kind, mt, len(data), tc.kind, tc.mt)
		}
	}
}

// TestNotModifiedIsASuccess: 304, the answer to a conditional request the
// agent made (an If-None-Match argument), says the copy it named is
// current: a success naming the ETag, with {} as structuredContent where
// the tool declares an output schema. It was an error result calling it
// "a redirect that was not followed", which an agent would retry or
// report as a failure.
func TestNotModifiedIsASuccess(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: conditional, version: "1"}
paths:
  /doc:
    get:
      operationId: getDoc
      parameters:
        - {name: If-None-Match, in: header, schema: {type: string}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {v: {type: integer}}}
        "304": {description: unchanged}
`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v7"`)
		if r.Header.Get("If-None-Match") == `"v7"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"v":7}`))
	}))
	defer up.Close()
	rt := bridge.NewRuntime(specCatalog(t, spec, bridge.Options{BaseURL: up.URL, Client: up.Client()}))
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "getDoc", Args: []byte(`{"If-None-Match":"\"v7\""}`)})
	if err != nil {
		t.Fatal(err)
	}
	text := resultText(out.Result)
	if out.Kind != bridge.OK || out.Result.IsError || !strings.Contains(text, "304 Not Modified") || !strings.Contains(text, `ETag: "v7"`) || strings.Contains(text, "redirect") {
		t.Errorf("304: kind %v, isError %v, text %q", out.Kind, out.Result.IsError, text)
	}
	if sc, _ := json.Marshal(out.Result.StructuredContent); string(sc) != "{}" {
		t.Errorf("304: structuredContent %s, want {}", sc)
	}
}

// TestSingleByteTextDecoded: text in a single-byte legacy encoding that
// names no charset (a spreadsheet's CSV export, an old server's
// text/plain) is read as windows-1252, so "München" reaches the agent, not
// "M\ufffdnchen". UTF-8 text with a stray byte, text whose declared
// charset is UTF-8, and JSON (UTF-8 by RFC 8259) are left as they were.
func TestSingleByteTextDecoded(t *testing.T) {
	rt := answerUpstream(t)
	for _, tc := range []struct{ ct, body, want string }{
		{"text/csv", "name,city\nbob,M\xfcnchen\nzo\xeb,S\xe3o Paulo \x80 5\n", "name,city\nbob,München\nzoë,São Paulo € 5\n"},
		{"text/plain", "caf\xe9", "café"},
		{"", "caf\xe9 cr\xe8me", "café crème"},
		{"text/plain", "Zürich and M\xfcnchen", "Zürich and M\ufffdnchen"},
		{"text/plain; charset=utf-8", "M\xfcnchen", "M\ufffdnchen"},
		{"application/json", "\"M\xfcnchen\"", "\"M\ufffdnchen\""},
	} {
		args, _ := json.Marshal(map[string]string{"ct": tc.ct, "b64": base64.StdEncoding.EncodeToString([]byte(tc.body))})
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: "getAnswer", Args: args})
		if err != nil || out.Kind != bridge.OK {
			t.Fatalf("%q: %v %+v", tc.ct, err, out)
		}
		if got := strings.ToValidUTF8(resultText(out.Result), "\ufffd"); got != tc.want {
			t.Errorf("%q %q: got %q, want %q", tc.ct, tc.body, got, tc.want)
		}
	}
}
