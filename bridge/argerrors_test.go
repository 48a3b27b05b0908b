package bridge_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

const argSpec = `openapi: 3.0.3
info: {title: args, version: "1"}
paths:
  /items:
    post:
      operationId: addItem
      parameters:
        - {name: limit, in: query, required: true, schema: {type: integer, minimum: 1}}
        - {name: dryRun, in: query, schema: {type: boolean}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              properties:
                count: {type: number}
                name: {type: string, minLength: 2}
      responses: {"200": {description: ok}}
`

// TestArgumentMessages calls a tool with bad and coercible arguments and
// checks what the agent reads, and what the upstream receives.
func TestArgumentMessages(t *testing.T) {
	var got []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got = append(got, r.URL.RawQuery+" "+string(body))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	defer up.Close()
	res, err := specloader.LoadData(t.Context(), []byte(argSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	if err != nil {
		t.Fatal(err)
	}
	rt := bridge.NewRuntime(cat)
	tests := []struct {
		args     string
		want     string // the result's text
		upstream string // what the upstream received, "" for nothing
	}{
		{`{"limit": "ten"}`, `invalid arguments: "limit" must be an integer >= 1, got "ten"`, ""},
		{`{"limit": 0}`, `invalid arguments: "limit" must be an integer >= 1, got 0`, ""},
		{`{}`, `invalid arguments: "limit" is required (an integer >= 1)`, ""},
		{`{"limit": 1, "dryrun": true}`, `invalid arguments: unknown argument "dryrun" (did you mean "dryRun"?); the tool takes "body", "dryRun", "limit"`, ""},
		{`{"limit": 1, "body": {"name": "x"}}`, `invalid arguments: "body.name" must be a string of at least 2 characters, got "x" (1 character)`, ""},
		{`{"limit": 1, "body": {"nmae": "xy"}}`, `invalid arguments: "body" has no property "nmae" (did you mean "name"?); it takes "count", "name"`, ""},
		{`{"limit": 1, "body": {"count": {"a": [1]}}}`, `invalid arguments: "body.count" must be a number, got {"a":[1]}`, ""},
		// Coercible strings are accepted and sent typed.
		{`{"limit": "2", "dryRun": "true", "body": {"count": "1.5"}}`, `{"ok":true}`, `limit=2&dryRun=true {"count":1.5}`},
		// A coercible string next to a real problem: the problem is reported.
		{`{"limit": "2", "dryRun": "maybe"}`, `invalid arguments: "dryRun" must be a boolean, got "maybe"`, ""},
		// What the agent sent is quoted as it sent it: no \u0026 for &.
		{`{"limit": "1&admin=<x>"}`, `invalid arguments: "limit" must be an integer >= 1, got "1&admin=<x>"`, ""},
	}
	for _, tt := range tests {
		got = nil
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: "addItem", Args: json.RawMessage(tt.args), Caller: bridge.Local})
		if err != nil {
			t.Fatalf("%s: %v", tt.args, err)
		}
		text := out.Result.Content[0].(*mcp.TextContent).Text
		if text != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.args, text, tt.want)
		}
		if wantErr := tt.upstream == ""; out.Result.IsError != wantErr || (wantErr && out.Kind != bridge.BadArguments) {
			t.Errorf("%s: isError %v, kind %s", tt.args, out.Result.IsError, out.Kind)
		}
		if tt.upstream == "" && len(got) > 0 {
			t.Errorf("%s: the upstream was called: %q", tt.args, got)
		}
		if tt.upstream != "" && (len(got) != 1 || got[0] != tt.upstream) {
			t.Errorf("%s: upstream got %q, want %q", tt.args, got, tt.upstream)
		}
	}
}
