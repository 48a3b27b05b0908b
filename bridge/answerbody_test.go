package bridge_test

import (
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
      responses: {"200": {description: ok}}
`

// answerUpstream answers with the Content-Type and body its query names.
func answerUpstream(t *testing.T) *bridge.Runtime {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ct := r.URL.Query().Get("ct"); ct != "" {
			w.Header().Set("Content-Type", ct)
		} else {
			w.Header()["Content-Type"] = nil // no Content-Type at all
		}
		w.Write([]byte(r.URL.Query().Get("b")))
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
