package bridge_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

const shapeSpec = `openapi: 3.0.3
info: {title: shape, version: "1"}
paths:
  /repos:
    get:
      operationId: listRepos
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  total: {type: integer}
                  items:
                    type: array
                    items:
                      type: object
                      properties:
                        name: {type: string}
                        owner: {type: object, properties: {login: {type: string}, id: {type: integer}}}
                        description: {type: string}
`

// TestResponseShaping checks fields and maxItems: the answer keeps only the
// listed paths, arrays are capped, a note says what was left out, the
// output schema follows, and structuredContent matches the shaped text.
func TestResponseShaping(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"total":3,"items":[{"name":"a","owner":{"login":"x","id":1},"description":"long"},{"name":"b","owner":{"login":"y","id":2}},{"name":"c"}]}`))
	}))
	defer up.Close()
	res, err := specloader.LoadData(t.Context(), []byte(shapeSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := whitelist.Parse(strings.NewReader("tools:\n  - operationId: listRepos\n    fields: [total, \"items[].name\", \"items[].owner.login\"]\n    maxItems: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := policy.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, cat)
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "listRepos"})
	if err != nil || r.IsError {
		t.Fatalf("call: %v %+v", err, r)
	}
	want := `{"items":[{"name":"a","owner":{"login":"x"}},{"name":"b","owner":{"login":"y"}}],"total":3}`
	if got := r.Content[0].(*mcp.TextContent).Text; got != want {
		t.Errorf("shaped text:\n got %s\nwant %s", got, want)
	}
	if len(r.Content) != 2 || !strings.Contains(r.Content[1].(*mcp.TextContent).Text, "1 items of items left out (maxItems)") ||
		!strings.Contains(r.Content[1].(*mcp.TextContent).Text, "items[].description") {
		t.Errorf("note: %+v", r.Content)
	}
	sc, _ := json.Marshal(r.StructuredContent)
	if diff := cmp.Diff(want, string(sc)); diff != "" {
		t.Errorf("structuredContent (-want +got):\n%s", diff)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(tools.Tools[0].OutputSchema)
	if strings.Contains(string(out), `"description":{`) || strings.Contains(string(out), `"id":{`) || !strings.Contains(string(out), `"login"`) {
		t.Errorf("output schema does not follow the shaping: %s", out)
	}
}

const shapeStrictSpec = `openapi: 3.0.3
info: {title: shape, version: "1"}
paths:
  /items:
    get:
      operationId: listItems
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                required: [items, total]
                properties:
                  total: {type: integer}
                  items:
                    type: array
                    minItems: 3
                    items: {$ref: "#/components/schemas/Item"}
components:
  schemas:
    Item:
      type: object
      required: [id, name]
      additionalProperties: false
      properties:
        id: {type: integer}
        name: {type: string}
        children: {type: array, minItems: 3, items: {$ref: "#/components/schemas/Item"}}
`

// shapeCall serves spec's first operation shaped by wl, with output
// schemas in mode, against an upstream answering answer, and calls it.
func shapeCall(t *testing.T, spec, wl, mode, answer string) *mcp.CallToolResult {
	t.Helper()
	return shapeCallWith(t, spec, wl, answer, bridge.Options{OutputSchema: mode})
}

// shapeCallWith is shapeCall with opts (BaseURL and Client are set).
func shapeCallWith(t *testing.T, spec, wl, answer string, opts bridge.Options) *mcp.CallToolResult {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answer))
	}))
	defer up.Close()
	res, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := whitelist.Parse(strings.NewReader(wl))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := policy.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	opts.BaseURL, opts.Client = up.URL, up.Client()
	cat, err := bridge.New(ops, opts)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, cat)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	name := tools.Tools[0].Name
	if name == "ping" {
		name = tools.Tools[1].Name
	}
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestShapingStrictSchemaFollows: an answer that conforms to the spec's
// (strict) output schema still conforms once shaped. maxItems below a
// declared minItems, and fields that leave out a required member of a
// $ref'd (here self-referring) schema, used to turn it into an error
// result ("does not match this tool's output schema").
func TestShapingStrictSchemaFollows(t *testing.T) {
	answer := `{"total":3,"items":[{"id":1,"name":"a","children":[{"id":4,"name":"d"},{"id":5,"name":"e"},{"id":6,"name":"f"}]},{"id":2,"name":"b"},{"id":3,"name":"c"}]}`
	for _, tc := range []struct{ name, wl, want string }{
		{"maxItems", "tools:\n  - operationId: listItems\n    maxItems: 2\n",
			`{"items":[{"children":[{"id":4,"name":"d"},{"id":5,"name":"e"}],"id":1,"name":"a"},{"id":2,"name":"b"}],"total":3}`},
		{"fields", "tools:\n  - operationId: listItems\n    fields: [total, \"items[].name\", \"items[].children[].name\"]\n",
			`{"items":[{"children":[{"name":"d"},{"name":"e"},{"name":"f"}],"name":"a"},{"name":"b"},{"name":"c"}],"total":3}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := shapeCall(t, shapeStrictSpec, tc.wl, "strict", answer)
			if r.IsError {
				t.Fatalf("a conforming answer, shaped, is an error result: %+v", r.Content[len(r.Content)-1])
			}
			sc, _ := json.Marshal(r.StructuredContent)
			if string(sc) != tc.want || r.Meta["mcpbridge/structuredContent"] != nil {
				t.Errorf("structuredContent %s (meta %v), want %s", sc, r.Meta, tc.want)
			}
		})
	}
}

// TestShapingNoteDistinct: the note names each left-out field once, not
// once per array item.
func TestShapingNoteDistinct(t *testing.T) {
	r := shapeCall(t, shapeStrictSpec, "tools:\n  - operationId: listItems\n    fields: [total, \"items[].name\"]\n", "tolerant",
		`{"total":3,"items":[{"id":1,"name":"a"},{"id":2,"name":"b"},{"id":3,"name":"c"}]}`)
	if len(r.Content) != 2 {
		t.Fatalf("content: %+v", r.Content)
	}
	if got, want := r.Content[1].(*mcp.TextContent).Text, "Shaped answer: fields not kept by the whitelist's fields: items[].id."; got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}

// TestShapingTruncated: an answer cut at --max-response-bytes is shaped
// too. The items of an array that arrived whole went out as the upstream
// sent them, members the whitelist's fields leave out included.
func TestShapingTruncated(t *testing.T) {
	var items []string
	for i := range 40 {
		items = append(items, fmt.Sprintf(`{"id":%d,"name":"n%d","internal":"not for the agent"}`, i, i))
	}
	r := shapeCallWith(t, shapeSpec, "tools:\n  - operationId: listRepos\n    fields: [name]\n    maxItems: 2\n",
		"["+strings.Join(items, ",")+"]", bridge.Options{MaxResponseBytes: 400, Truncate: true})
	if r.IsError || len(r.Content) != 3 {
		t.Fatalf("result: %+v", r.Content)
	}
	if got, want := r.Content[0].(*mcp.TextContent).Text, `[{"name":"n0"},{"name":"n1"}]`; got != want {
		t.Errorf("text %s, want %s", got, want)
	}
	if got := r.Content[1].(*mcp.TextContent).Text; !strings.Contains(got, "items of the answer left out (maxItems)") || !strings.Contains(got, "internal") {
		t.Errorf("shaping note: %q", got)
	}
	if got := r.Content[2].(*mcp.TextContent).Text; !strings.Contains(got, "Truncated answer") {
		t.Errorf("truncation note: %q", got)
	}
}

// A cut object answer of a tool whose whitelist keeps some fields: the
// raw prefix showed the members the whitelist leaves out. The values that
// arrived whole are shaped instead; structuredContent, if any, conforms.
func TestShapingTruncatedObject(t *testing.T) {
	var items []string
	for i := range 40 {
		items = append(items, fmt.Sprintf(`{"name":"n%d","description":"internal %d"}`, i, i))
	}
	answer := `{"total":40,"items":[` + strings.Join(items, ",") + `]}`
	r := shapeCallWith(t, shapeSpec, "tools:\n  - operationId: listRepos\n    fields: [total, \"items[].name\"]\n",
		answer, bridge.Options{MaxResponseBytes: 400, Truncate: true})
	if r.IsError {
		t.Fatalf("result: %+v", r.Content)
	}
	var all strings.Builder
	for _, c := range r.Content {
		all.WriteString(c.(*mcp.TextContent).Text)
	}
	if strings.Contains(all.String(), "internal") {
		t.Errorf("a left-out member reached the agent: %s", all.String())
	}
	first := r.Content[0].(*mcp.TextContent).Text
	var v struct {
		Total int `json:"total"`
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(first), &v); err != nil || v.Total != 40 || len(v.Items) < 3 || v.Items[0].Name != "n0" {
		t.Errorf("shaped text %s (%v); want total 40 and the whole items' names", first, err)
	}
	if !strings.Contains(all.String(), "Truncated answer") {
		t.Errorf("no truncation note: %s", all.String())
	}
	// A prefix that cannot be shaped (not JSON after all) shows none of it.
	r = shapeCallWith(t, shapeSpec, "tools:\n  - operationId: listRepos\n    fields: [total]\n",
		`{"total" 1, "description":"internal`+strings.Repeat("x", 500)+`"}`, bridge.Options{MaxResponseBytes: 400, Truncate: true})
	for _, c := range r.Content {
		if tx := c.(*mcp.TextContent).Text; strings.Contains(tx, "internal") {
			t.Errorf("unshapeable prefix shown: %s", tx)
		}
	}
}
