package bridge_test

import (
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// amplifySpec has every place where an agent-chosen object key is written
// again for each value below it: a form-exploded query object, a
// deepObject query parameter, a cookie, form-urlencoded (content and
// styled) and multipart bodies with free-form properties, and an XML body.
const amplifySpec = `openapi: 3.0.3
info: {title: amplify, version: "1"}
paths:
  /q:
    get:
      operationId: query
      parameters:
        - {name: object, in: query, style: form, explode: true, schema: {type: object}}
        - {name: deep, in: query, style: deepObject, explode: true, schema: {type: object}}
      responses: {"200": {description: ok}}
  /form:
    post:
      operationId: form
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object}
      responses: {"200": {description: ok}}
  /styled:
    post:
      operationId: styled
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, properties: {meta: {type: object}}}
            encoding:
              meta: {style: deepObject, explode: true}
      responses: {"200": {description: ok}}
  /multipart:
    post:
      operationId: multipart
      requestBody:
        content:
          multipart/form-data:
            schema: {type: object}
      responses: {"200": {description: ok}}
  /xml:
    post:
      operationId: xml
      requestBody:
        content:
          application/xml:
            schema: {type: object, xml: {name: doc}}
      responses: {"200": {description: ok}}
`

// TestEncodedSizeLimit: arguments of ~100 KB whose one object key (50,000
// characters) sits over an array of 2,000 items would make every nested
// encoding write the key 2,000 times, hundreds of MB; the call is refused
// as bad arguments naming the limit, nothing reaches the upstream, and the
// bridge allocates a few MB for it, not the whole request. Honest nested
// values of the same size still go.
func TestEncodedSizeLimit(t *testing.T) {
	rec := &nestedRecorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	// No URL cap (MaxURLBytes): the honest query is 150 KB, which the
	// encoding limit under test lets through.
	rt := bridge.NewRuntime(specCatalog(t, amplifySpec, bridge.Options{BaseURL: srv.URL, Client: srv.Client(), MaxURLBytes: -1}))

	items := make([]any, 2000)
	for i := range items {
		items[i] = 1
	}
	// honest: 2,000 short keys each over a short array, ~100 KB too.
	honest := map[string]any{}
	for i := range 2000 {
		honest["k"+strings.Repeat("x", i%20)+strconv.Itoa(i)] = []any{"v1", "v2", "v3"}
	}
	for _, tc := range []struct{ tool, arg string }{
		{"query", "object"}, {"query", "deep"}, {"form", "body"}, {"styled", "body"}, {"multipart", "body"}, {"xml", "body"},
	} {
		wrap := func(v map[string]any) map[string]any {
			if tc.tool == "styled" {
				return map[string]any{tc.arg: map[string]any{"meta": v}}
			}
			return map[string]any{tc.arg: v}
		}
		t.Run(tc.tool+"/"+tc.arg, func(t *testing.T) {
			key := strings.Repeat("/", 50_000) // escaped, three times longer
			if tc.tool == "xml" {
				key = strings.Repeat("k", 50_000) // an element name
			}
			args, err := json.Marshal(wrap(map[string]any{key: items}))
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: tc.tool, Args: args})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if out.Kind != bridge.BadArguments || out.Result == nil || !out.Result.IsError {
				t.Fatalf("outcome %v (%s), want bad arguments", out.Kind, out.Detail)
			}
			text := out.Result.Content[0].(*mcp.TextContent).Text
			if !strings.Contains(text, "would pass") || !strings.Contains(text, "bytes") {
				t.Errorf("message %.300q does not name the limit", text)
			}
			if got := rec.take(); len(got) != 0 {
				t.Errorf("the upstream got %d requests", len(got))
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
				t.Errorf("the call allocated %d MB (arguments %d KB)", alloc>>20, len(args)>>10)
			}

			args, err = json.Marshal(wrap(honest))
			if err != nil {
				t.Fatal(err)
			}
			out, err = rt.Call(t.Context(), &bridge.Call{Tool: tc.tool, Args: args})
			if err != nil {
				t.Fatal(err)
			}
			if out.Kind != bridge.OK {
				t.Fatalf("honest arguments of %d KB: outcome %v (%s)", len(args)>>10, out.Kind, out.Detail)
			}
			if got := rec.take(); len(got) != 1 {
				t.Errorf("the upstream got %d requests, want 1", len(got))
			}
		})
	}
}

// TestLongArgumentMessage: a bad-arguments message that quotes what the
// agent sent (here an object key of 50,000 characters that is no XML
// element name) is cut in the middle to ~2 KB, its start and end kept.
func TestLongArgumentMessage(t *testing.T) {
	srv := httptest.NewServer(&nestedRecorder{})
	t.Cleanup(srv.Close)
	cat := specCatalog(t, amplifySpec, bridge.Options{BaseURL: srv.URL, Client: srv.Client()})
	args, err := json.Marshal(map[string]any{"body": map[string]any{"1" + strings.Repeat("é", 25_000): "v"}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := bridge.NewRuntime(cat).Call(t.Context(), &bridge.Call{Tool: "xml", Args: args})
	if err != nil {
		t.Fatal(err)
	}
	if out.Kind != bridge.BadArguments {
		t.Fatalf("outcome %v, want bad arguments", out.Kind)
	}
	text := out.Result.Content[0].(*mcp.TextContent).Text
	if len(text) > 2200 || !strings.Contains(text, "bytes left out]") || !strings.HasPrefix(text, `invalid argument "body"`) || !strings.HasSuffix(text, `is not an XML element name`) || !utf8.ValidString(text) {
		t.Errorf("message of %d bytes: %.200q … %q", len(text), text, text[max(0, len(text)-100):])
	}
}
