package bridge_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/schema"
)

// deepSpec is a spec whose operations nest their schemas n levels deep
// without a $ref: an items chain, a nullable allOf chain with a
// discriminator (the most JSON per schema level), a properties chain,
// each as body and as (object) answer.
func deepSpec(n int) string {
	chain := func(open, leaf, close string) string {
		return strings.Repeat(open, n) + leaf + strings.Repeat(close, n)
	}
	items := chain(`{"type":"array","items":`, `{"type":"string"}`, `}`)
	allOf := chain(`{"nullable":true,"discriminator":{"propertyName":"k"},"oneOf":[{"type":"object"}],"allOf":[`, `{"type":"object","properties":{"k":{"type":"string"}}}`, `]}`)
	props := chain(`{"type":"object","properties":{"a":`, `{"type":"string"}`, `}}`)
	op := func(id, s string) string {
		return `{"post":{"operationId":"` + id + `","requestBody":{"content":{"application/json":{"schema":` + s + `}}},` +
			`"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object","properties":{"r":` + s + `}}}}}}}}`
	}
	return `{"openapi":"3.0.3","info":{"title":"deep","version":"1"},"paths":{` +
		`"/ok":{"get":{"operationId":"ok","responses":{"200":{"description":"ok"}}}},` +
		`"/items":` + op("items", items) + `,"/allof":` + op("allof", allOf) + `,"/props":` + op("props", props) + `}}`
}

// TestDeepSchemaListable: schemas nested 3,000 levels deep (not through a
// $ref) made a tools/list nested past go-sdk's limit of 1,000, which its
// client refused whole, for every tool. They are cut at build time: every
// tool lists, a deep argument is still checked and sent.
func TestDeepSchemaListable(t *testing.T) {
	up, _, calls := echoUpstream(t)
	b := specCatalog(t, deepSpec(3000), bridge.Options{BaseURL: up.URL, Client: up.Client(), MaxOutputSchemaBytes: -1, OutputSchema: "strict"})
	cs := connect(t, b)
	// go-sdk's client drops a message it cannot decode: without a
	// deadline the list would wait forever.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if len(res.Tools) != 5 { // and ping
		t.Fatalf("%d tools, want 5", len(res.Tools))
	}
	for _, tool := range res.Tools {
		in, _ := json.Marshal(tool.InputSchema)
		out, _ := json.Marshal(tool.OutputSchema)
		if d := max(schema.Depth(in), schema.Depth(out)); d > 500 {
			t.Errorf("%s: schema nested %d deep", tool.Name, d)
		}
		if tool.Name != "ok" && tool.Name != "ping" && !strings.Contains(string(in), "not described further") {
			t.Errorf("%s: no note on the cut", tool.Name)
		}
	}
	for _, tc := range []struct{ tool, args string }{
		{"items", `{"body":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`},
		{"props", `{"body":` + strings.Repeat(`{"a":`, 40) + `{}` + strings.Repeat("}", 40) + `}`},
		{"allof", `{"body":{"k":"v"}}`},
	} {
		r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
		if err != nil || r.IsError {
			t.Errorf("%s: %v %+v", tc.tool, err, r.Content[0])
		}
	}
	if calls.Load() != 3 {
		t.Errorf("upstream called %d times, want 3", calls.Load())
	}
	// A wrong type within the kept levels is still refused.
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "props", Arguments: json.RawMessage(`{"body":{"a":{"a":3}}}`)})
	if err != nil || !r.IsError {
		t.Errorf("wrong type: %v %+v", err, r)
	}
}
