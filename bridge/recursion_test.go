package bridge_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

const recursiveChoiceSpec = `openapi: 3.0.3
info: {title: tree, version: "1"}
paths:
  /nodes:
    post:
      operationId: putNode
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Node"}
      responses: {"200": {description: ok}}
components:
  schemas:
    Node:
      oneOf:
        - type: object
          properties:
            c: {$ref: "#/components/schemas/Node"}
            k: {type: string, enum: [a]}
        - type: object
          properties:
            c: {$ref: "#/components/schemas/Node"}
            k: {type: string, enum: [b]}
`

// TestRecursiveChoiceDepth: arguments for a schema that refers to itself
// through oneOf are refused past 12 levels, before the validator (whose
// work doubles with every level: 22 levels took 39 s) sees them; shallower
// ones are validated and sent as usual.
func TestRecursiveChoiceDepth(t *testing.T) {
	up, _, calls := echoUpstream(t)
	rt := bridge.NewRuntime(specCatalog(t, recursiveChoiceSpec, bridge.Options{BaseURL: up.URL, Client: up.Client()}))
	nest := func(n int, leaf string) string {
		return `{"body":` + strings.Repeat(`{"k":"a","c":`, n) + `{"k":"` + leaf + `"}` + strings.Repeat("}", n) + `}`
	}
	// Without k both alternatives match every level: the one-pass checker
	// alone would try 2^30 paths.
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "putNode", Args: []byte(`{"body":` + strings.Repeat(`{"c":`, 30) + `{}` + strings.Repeat("}", 30) + `}`)})
	if err != nil {
		t.Fatal(err)
	}
	if text := out.Result.Content[0].(*mcp.TextContent).Text; out.Kind != bridge.BadArguments || !strings.Contains(text, "at most 12 levels") {
		t.Errorf("30 levels: %v %q", out.Kind, text)
	}
	out, err = rt.Call(t.Context(), &bridge.Call{Tool: "putNode", Args: []byte(nest(5, "a"))})
	if err != nil || out.Kind != bridge.OK {
		t.Fatalf("5 levels: %v %+v", err, out)
	}
	if calls.Load() != 1 {
		t.Errorf("upstream called %d times, want 1", calls.Load())
	}
}
