package bridge_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

const objectClashSpec = `openapi: 3.1.0
info: {title: clash, version: "1"}
paths:
  /free:
    get:
      operationId: freeform
      parameters:
        - {name: f, in: query, style: form, explode: true, schema: {type: object, additionalProperties: true}}
        - {name: limit, in: query, schema: {type: integer, maximum: 10}}
        - {name: co, in: cookie, style: form, explode: true, schema: {type: object, additionalProperties: true}}
        - {name: theme, in: cookie, schema: {type: string, enum: [dark, light]}}
      responses: {"200": {description: ok}}
    post:
      operationId: formpost
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                a: {type: string}
                extra: {type: object, additionalProperties: true}
            encoding:
              extra: {style: form, explode: true}
      responses: {"200": {description: ok}}
`

// TestObjectMemberNamedLikeParameter: an exploded free-form object may not
// write a pair named like another query parameter or form property, which
// the upstream would read in its place (or get past its schema).
func TestObjectMemberNamedLikeParameter(t *testing.T) {
	up, got, calls := echoUpstream(t)
	rt := bridge.NewRuntime(specCatalog(t, objectClashSpec, bridge.Options{BaseURL: up.URL, Client: up.Client()}))
	for _, tc := range []struct{ tool, args, want string }{
		{"freeform", `{"f":{"limit":"999"},"limit":5}`, `query parameter "limit"`},
		{"freeform", `{"f":{"limit":"999"}}`, `query parameter "limit"`},
		{"freeform", `{"f":{"LIMIT[]":"999"}}`, `query parameter "LIMIT[]"`},
		{"formpost", `{"body":{"a":"1","extra":{"a":"2"}}}`, `form field "a"`},
		{"freeform", `{"co":{"theme":"evil"},"theme":"dark"}`, `cookie parameter "theme"`},
	} {
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: tc.tool, Args: []byte(tc.args)})
		if err != nil {
			t.Fatal(err)
		}
		text := out.Result.Content[0].(*mcp.TextContent).Text
		if out.Kind != bridge.BadArguments || !strings.Contains(text, tc.want) {
			t.Errorf("%s %s: got kind %v, %q; want bad_arguments mentioning %q", tc.tool, tc.args, out.Kind, text, tc.want)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the upstream was called %d times", n)
	}
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "freeform", Args: []byte(`{"f":{"x":"1"},"limit":5}`)})
	if err != nil || out.Kind != bridge.OK {
		t.Fatalf("ordinary keys refused: %v %+v", err, out)
	}
	if q := got.Load().URL.RawQuery; q != "x=1&limit=5" {
		t.Errorf("upstream query %q", q)
	}
}
