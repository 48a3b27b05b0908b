package bridge_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

const requiredUndeclaredSpec = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /things:
    post:
      operationId: createThing
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name, ghost]
              properties:
                name: {type: string}
                either:
                  type: object
                  properties: {a: {type: string}, b: {type: string}}
                  oneOf: [{required: [a]}, {required: [b]}]
                child:
                  allOf:
                    - {type: object, properties: {id: {type: integer}}}
                    - {type: object, required: [id]}
      responses: {"200": {description: ok}}
`

// TestRequiredUndeclaredProperty: a body schema whose required lists a
// property its properties do not declare. The tool demanded the name
// with nothing describing it (a bare entry in required, which Gemini
// refuses outright) and the refusal said only `"body.ghost" is
// required`. The property is now declared, accepting any value, with a
// description saying so; it stays required; the refusal says any value
// is accepted; a value of any type is sent upstream as given. Required
// names that a oneOf branch or an allOf sibling states about declared
// properties are left alone.
func TestRequiredUndeclaredProperty(t *testing.T) {
	var got atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(string(b))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(up.Close)
	cat := specCatalog(t, requiredUndeclaredSpec, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	cs := connect(t, cat)
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	for _, tl := range list.Tools {
		if tl.Name == "createThing" {
			b, _ := json.Marshal(tl.InputSchema)
			json.Unmarshal(b, &in)
		}
	}
	body := in["properties"].(map[string]any)["body"].(map[string]any)
	props := body["properties"].(map[string]any)
	ghost, ok := props["ghost"].(map[string]any)
	if !ok {
		t.Fatalf("ghost not declared: %v", body)
	}
	if d, _ := ghost["description"].(string); !strings.Contains(d, "any value") || len(ghost) != 1 {
		t.Errorf("ghost = %v, want only a description saying any value is accepted", ghost)
	}
	if req, _ := json.Marshal(body["required"]); string(req) != `["name","ghost"]` {
		t.Errorf("required = %s, want name and ghost kept", req)
	}
	either := props["either"].(map[string]any)
	if p := either["properties"].(map[string]any); len(p) != 2 {
		t.Errorf("the oneOf constraint changed either's properties: %v", p)
	}
	if s, _ := json.Marshal(props["child"]); strings.Contains(string(s), "any value") {
		t.Errorf("an allOf sibling's required entry was declared again: %s", s)
	}

	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "createThing", Arguments: map[string]any{"body": map[string]any{"name": "n"}}})
	if err != nil || !r.IsError {
		t.Fatalf("call without ghost: %v %+v; want an error result", err, r)
	}
	if text := r.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `"body.ghost" is required`) || !strings.Contains(text, "any value is accepted") {
		t.Errorf("refusal %q does not say what to send", text)
	}
	for _, v := range []any{"x", 7, []any{1, map[string]any{"a": true}}, nil} {
		r, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "createThing", Arguments: map[string]any{"body": map[string]any{"name": "n", "ghost": v}}})
		if err != nil || r.IsError {
			t.Fatalf("call with ghost %v: %v %+v", v, err, r)
		}
		want, _ := json.Marshal(v)
		var sent map[string]json.RawMessage
		json.Unmarshal([]byte(got.Load().(string)), &sent)
		if string(sent["ghost"]) != string(want) {
			t.Errorf("sent %s, want ghost %s", got.Load(), want)
		}
	}
}

// TestRequiredUndeclaredAdditional: a required name that only the
// object's additionalProperties schema describes is declared with that
// schema, so its value is still checked; declaring it as any value
// widened the tool (a string passed where the spec asks an integer).
func TestRequiredUndeclaredAdditional(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /counts:
    post:
      operationId: setCounts
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name, extra]
              properties:
                name: {type: string}
              additionalProperties: {type: integer}
      responses: {"200": {description: ok}}
`
	var calls atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(up.Close)
	cat := specCatalog(t, spec, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	cs := connect(t, cat)
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b []byte
	for _, tl := range list.Tools {
		if tl.Name == "setCounts" {
			b, _ = json.Marshal(tl.InputSchema)
		}
	}
	var in struct {
		Properties struct {
			Body struct {
				Properties map[string]map[string]any `json:"properties"`
			} `json:"body"`
		} `json:"properties"`
	}
	json.Unmarshal(b, &in)
	if extra := in.Properties.Body.Properties["extra"]; extra["type"] != "integer" {
		t.Errorf("extra = %v, want the additionalProperties schema (type integer): %s", extra, b)
	}
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "setCounts", Arguments: map[string]any{"body": map[string]any{"name": "n", "extra": "x"}}})
	if err != nil || !r.IsError || calls.Load() != 0 {
		t.Errorf("extra as a string: %v, isError %v, %d upstream calls; want a refusal before the upstream", err, r != nil && r.IsError, calls.Load())
	}
	r, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "setCounts", Arguments: map[string]any{"body": map[string]any{"name": "n", "extra": 3}}})
	if err != nil || r.IsError || calls.Load() != 1 {
		t.Errorf("extra as an integer: %v %+v; want it sent", err, r)
	}
}
