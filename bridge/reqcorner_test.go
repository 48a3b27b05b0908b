package bridge_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpbridge/mcpbridge/bridge"
)

const ghostPathSpec = `openapi: 3.1.0
info: {title: ghost, version: "1"}
paths:
  /items:
    get:
      operationId: ghost
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
`

// TestPathParamNotInTemplate: a path parameter the path template has no
// {name} for is left out of the tool, not demanded and then dropped.
func TestPathParamNotInTemplate(t *testing.T) {
	up, got, _ := echoUpstream(t)
	c := specCatalog(t, ghostPathSpec, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	tool, ok := c.Lookup("ghost")
	if !ok {
		t.Fatal("no ghost tool")
	}
	var in struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal(tool.Def().InputSchema.(json.RawMessage), &in); err != nil {
		t.Fatal(err)
	}
	if _, ok := in.Properties["id"]; ok || len(in.Required) != 0 {
		t.Errorf("input schema offers or demands id, which nothing sends: %+v", in)
	}
	out, err := bridge.NewRuntime(c).Call(t.Context(), &bridge.Call{Tool: "ghost", Args: []byte(`{"q":"x"}`)})
	if err != nil || out.Kind != bridge.OK {
		t.Fatalf("call without id: %v %+v", err, out)
	}
	if r := got.Load(); r.URL.RequestURI() != "/items?q=x" {
		t.Errorf("upstream got %q", r.URL.RequestURI())
	}
}
