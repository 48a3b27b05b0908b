package bridge_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// hostPropertyKey is what Anthropic's Messages API demands of every
// top-level input_schema property key; one key outside it fails every
// request of a Claude Code or Claude Desktop session with a 400
// ("tools.N.custom.input_schema.properties: Property keys should match
// pattern '^[a-zA-Z0-9_.-]{1,64}$'").
var hostPropertyKey = regexp.MustCompile(`^[a-zA-Z0-9_.-]{1,64}$`)

const argNamesSpec = `openapi: 3.0.3
info: {title: argnames, version: "1"}
paths:
  /calls/{call id}:
    get:
      operationId: listCalls
      parameters:
        - {name: "call id", in: path, required: true, schema: {type: string}}
        - {name: "StartTime<", in: query, description: "Calls started on or before.", schema: {type: string}}
        - {name: "StartTime>", in: query, schema: {type: string}}
        - {name: "StartTime_lt", in: query, schema: {type: string}}
        - {name: "ids[]", in: query, schema: {type: array, items: {type: integer}}}
        - {name: "$top", in: query, schema: {type: integer}}
        - {name: "名前", in: query, schema: {type: string}}
        - {name: "X-Trace.Id", in: header, schema: {type: string}}
        - {name: "aVeryLongParameterNameThatGoesOnAndOnAndOnBeyondTheSixtyFourCharacterLimit", in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
`

// TestArgumentNamesHostsAccept: every argument name is a property key the
// hosts accept, a parameter whose spec name is not gets a legal one (a
// legal spec name keeping its own), its description says what it is sent
// as, and a call by the new names sends the spec's names on the wire.
func TestArgumentNamesHostsAccept(t *testing.T) {
	up, got, _ := echoUpstream(t)
	c := specCatalog(t, argNamesSpec, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	cs := connect(t, c)
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	for _, tool := range list.Tools {
		if tool.Name != "listCalls" {
			continue
		}
		raw, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(raw, &in); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for k := range in.Properties {
		if !hostPropertyKey.MatchString(k) {
			t.Errorf("property key %q: hosts refuse the whole tool list over it", k)
		}
		names = append(names, k)
	}
	slices.Sort(names)
	wantArgs := []string{"StartTime_gt", "StartTime_lt", "StartTime_lt__query", "X-Trace.Id", "aVeryLongParameterNameThatGoesOnAndOnAndOnBeyondTheSixt_f178f186", "call_id", "ids", "param", "top"}
	if !slices.Equal(names, wantArgs) {
		t.Fatalf("argument names %q, want %q", names, wantArgs)
	}
	if d := in.Properties["StartTime_lt__query"].Description; d != `Sent as the query parameter "StartTime<". Calls started on or before.` {
		t.Errorf("StartTime< description %q", d)
	}
	if d := in.Properties["StartTime_lt"].Description; strings.Contains(d, "Sent as") {
		t.Errorf("a parameter keeping its own name is described as renamed: %q", d)
	}
	if !slices.Equal(in.Required, []string{"call_id"}) {
		t.Errorf("required %q, want [call_id]", in.Required)
	}

	args := map[string]any{
		"call_id": "c1", "StartTime_lt__query": "2020", "StartTime_gt": "2021", "StartTime_lt": "a",
		"ids": []any{1, 2}, "top": 5, "param": "x", "X-Trace.Id": "t",
		"aVeryLongParameterNameThatGoesOnAndOnAndOnBeyondTheSixt_f178f186": "z",
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "listCalls", Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	r := got.Load()
	wantURI := "/calls/c1?StartTime%3C=2020&StartTime%3E=2021&StartTime_lt=a&ids%5B%5D=1&ids%5B%5D=2&%24top=5&%E5%90%8D%E5%89%8D=x&aVeryLongParameterNameThatGoesOnAndOnAndOnBeyondTheSixtyFourCharacterLimit=z"
	if r.URL.RequestURI() != wantURI {
		t.Errorf("upstream got\n %s\nwant\n %s", r.URL.RequestURI(), wantURI)
	}
	if h := r.Header.Get("X-Trace.Id"); h != "t" {
		t.Errorf("X-Trace.Id header %q", h)
	}

	// The spec's own spelling is not an argument (the schema says so).
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "listCalls", Arguments: map[string]any{"call_id": "c1", "StartTime<": "2020"}})
	if err != nil || !res.IsError {
		t.Fatalf("call by the spec's name: %v %+v", err, res)
	}
}
