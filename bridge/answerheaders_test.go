package bridge_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// TestAnswerHeadersShown: a successful answer shows its agent the response
// headers the spec documents for the operation, and Link, in a text block
// after the answer. Before, no header reached the agent: a GitHub list
// came without its Link to the next page, so the agent could not know
// there was one. Headers that are transport, cookies or named like a
// configured credential stay hidden, and values are redacted.
func TestAnswerHeadersShown(t *testing.T) {
	const key = "k3y-0f-the-upstream-9f8e7d6c5b4a"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Add("Link", `<https://api.example.com/items?page=2&access_token=tok-abcdef123456>; rel="next"`)
		h.Add("Link", `<https://api.example.com/items?page=9>; rel="last"`)
		h.Set("X-Total-Count", "412")
		h.Set("X-Session-Token", "opaque-session-value")
		h.Set("X-Echo", "your key is "+key)
		h.Set("X-Api-Key", key)                    // documented, but a credential header
		h.Set("Set-Cookie", "session=s3cr3t")      // documented, never shown
		h.Set("X-Undocumented", "not in the spec") // not documented
		if r.URL.Path == "/empty" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusNotFound)
		}
		w.Write([]byte(`{"items":[1,2,3]}`))
	}))
	defer up.Close()
	spec := `openapi: 3.0.3
info: {title: headers, version: "1"}
paths:
  /items:
    get:
      operationId: listItems
      responses:
        "200":
          description: ok
          headers:
            x-total-count: {schema: {type: integer}}
            X-Echo: {schema: {type: string}}
            X-Session-Token: {schema: {type: string}}
            X-Api-Key: {schema: {type: string}}
            Set-Cookie: {schema: {type: string}}
          content:
            application/json:
              schema: {type: object, properties: {items: {type: array, items: {type: integer}}}}
        "404": {description: missing, headers: {X-Total-Count: {schema: {type: integer}}}}
  /fail:
    get:
      operationId: fail
      responses: {"200": {description: ok, headers: {X-Total-Count: {schema: {type: integer}}}}}
  /empty:
    get:
      operationId: empty
      responses: {"204": {description: none}}
`
	b := specCatalog(t, spec, bridge.Options{BaseURL: up.URL, Client: up.Client(), Credentials: bridge.Credentials{Headers: map[string]string{"X-Api-Key": key}}})
	cs := connect(t, b)
	call := func(name string) *mcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	r := call("listItems")
	if r.IsError || len(r.Content) != 2 {
		t.Fatalf("listItems: %d blocks, isError %v; want the answer and the headers", len(r.Content), r.IsError)
	}
	if got := r.Content[0].(*mcp.TextContent).Text; got != `{"items":[1,2,3]}` {
		t.Errorf("the first block is %q; want the answer alone", got)
	}
	got := r.Content[1].(*mcp.TextContent).Text
	for _, want := range []string{
		"Response headers:\n",
		"Link: <https://api.example.com/items?page=2&access_token=",
		`rel="next", <https://api.example.com/items?page=9>; rel="last"`,
		"\nX-Total-Count: 412",
		"\nX-Echo: your key is ",
		"\nX-Session-Token: [REDACTED]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("headers block lacks %q:\n%s", want, got)
		}
	}
	for _, leak := range []string{key, "opaque-session-value", "tok-abcdef123456", "s3cr3t", "Set-Cookie", "X-Api-Key", "X-Undocumented", "Content-Type"} {
		if strings.Contains(got, leak) {
			t.Errorf("headers block shows %q:\n%s", leak, got)
		}
	}
	if r.StructuredContent == nil {
		t.Error("structuredContent lost")
	}
	// An error keeps its one block; an empty answer gets the Link only.
	if r := call("fail"); !r.IsError || len(r.Content) != 1 {
		t.Errorf("fail: %d blocks, isError %v; want one error block", len(r.Content), r.IsError)
	}
	if r := call("empty"); len(r.Content) != 2 || !strings.HasPrefix(r.Content[1].(*mcp.TextContent).Text, "Response headers:\nLink: ") || strings.Contains(r.Content[1].(*mcp.TextContent).Text, "X-Total-Count") {
		t.Errorf("empty: %+v; want the status line and the Link header alone", r.Content)
	}
}
