package result_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpbridge/mcpbridge/bridge/result"
	"github.com/mcpbridge/mcpbridge/bridge/schema"
	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// testOutput builds a tool's output schema from an OpenAPI response schema
// (YAML), as the bridge does in mode.
func testOutput(t testing.TB, mode, yamlSchema string, redactable func(string) bool) *schema.Lazy {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(`openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /x:
    get:
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema:
` + yamlSchema))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := schema.BuildOutput(doc.Paths.Value("/x").Get, mode, redactable)
	if s == nil {
		t.Fatal("no output schema")
	}
	raw, err := schema.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	l := schema.NewLazy(raw)
	return &l
}

const petSchema = `                type: object
                required: [id, name]
                properties:
                  id: {type: integer}
                  name: {type: string}
                  status: {type: string, enum: [available, sold]}
                  born: {type: string, format: date}
                  api_key: {type: integer}
                  tags:
                    type: array
                    items:
                      type: object
                      properties:
                        label: {type: string}
`

func newShaper(t testing.TB) (*result.Shaper, *observer.ObservedLogs) {
	t.Helper()
	red, err := sanitizer.New(sanitizer.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	return &result.Shaper{Redactor: red, Log: zap.New(core)}, logs
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

func structured(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if r.StructuredContent == nil {
		return ""
	}
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestShapeStructured(t *testing.T) {
	s, _ := newShaper(t)
	tolerant := testOutput(t, schema.OutputTolerant, petSchema, s.Redactor.IsSensitiveKey)
	strict := testOutput(t, schema.OutputStrict, petSchema, nil)
	strictRed := testOutput(t, schema.OutputStrict, petSchema, s.Redactor.IsSensitiveKey)
	// Plaid's POST /transfer/authorization/create answers its decision
	// under "authorization", a name the sanitizer masks whole.
	strictAuth := testOutput(t, schema.OutputStrict, `                type: object
                required: [authorization]
                properties:
                  authorization:
                    type: object
                    required: [decision]
                    properties:
                      decision: {type: string, enum: [approved, declined]}
`, s.Redactor.IsSensitiveKey)
	tests := []struct {
		name    string
		out     *schema.Lazy
		status  int
		header  http.Header
		body    string
		text    string // the first content; "" means the body itself
		want    string // structuredContent; "" none
		meta    map[string]any
		noMeta  bool
		isError bool
		last    string // the last content of an error result; "" not checked
	}{
		{name: "conforming answer goes whole", out: strict, body: `{"id":1,"name":"Rex","born":"2020-01-02"}`,
			want: `{"id":1,"name":"Rex","born":"2020-01-02"}`, noMeta: true},
		{name: "tolerant: drift admitted whole", out: tolerant, body: `{"id":null,"status":"lost","extra":[1],"born":"someday"}`,
			want: `{"id":null,"status":"lost","extra":[1],"born":"someday"}`, noMeta: true},
		{name: "redacted member of a number type admitted", out: tolerant, body: `{"id":1,"api_key":123456}`,
			text: `{"id":1,"api_key":"[REDACTED]"}`, want: `{"id":1,"api_key":"[REDACTED]"}`, noMeta: true},
		// Strict: the mask in place of a sensitive member of another type
		// is the bridge's doing, not drift: the answer goes whole, not
		// reduced (api_key dropped) nor as an error result.
		{name: "strict: redacted member of a number type admitted", out: strictRed, body: `{"id":1,"name":"Rex","api_key":123456}`,
			text: `{"id":1,"name":"Rex","api_key":"[REDACTED]"}`, want: `{"id":1,"name":"Rex","api_key":"[REDACTED]"}`, noMeta: true},
		{name: "strict: redacted required object admitted", out: strictAuth, body: `{"authorization":{"decision":"approved"}}`,
			text: `{"authorization":"[REDACTED]"}`, want: `{"authorization":"[REDACTED]"}`, noMeta: true},
		{name: "tolerant: wrong scalar types reduced", out: tolerant, body: `{"id":"seven","name":"Rex","tags":[{"label":1},{"label":"a"}]}`,
			want: `{"name":"Rex","tags":[{},{"label":"a"}]}`,
			meta: map[string]any{"reduced": true, "removedCount": float64(2), "removed": []any{"/id", "/tags/0/label"}, "reason": "/id: type string, want integer or null"}},
		{name: "strict: a format JavaScript asserts", out: strict, body: `{"id":1,"name":"Rex","born":"yesterday"}`,
			want: `{"id":1,"name":"Rex"}`,
			meta: map[string]any{"reduced": true, "removedCount": float64(1), "removed": []any{"/born"}, "reason": "/born: not a valid date"}},
		{name: "strict: a missing required member cannot be reduced: an error result", out: strict, body: `{"id":1}`, isError: true},
		// The error result says where the answer breaks the schema, as a
		// reduced result's _meta does, not only that it does.
		{name: "strict: a required member of the wrong type: an error result naming it", out: strict, body: `{"id":1,"name":5}`, isError: true,
			last: "The upstream's answer (above) does not match this tool's output schema, which admits no substitute (--output-schema strict): the answer does not match the output schema (first difference: /name: type integer, want string)."},
		{name: "top level array: {}", out: tolerant, body: `[1,2]`, want: `{}`,
			meta: map[string]any{"replaced": true, "reason": "the answer is not a JSON object"}},
		{name: "the answer null: {}", out: tolerant, body: `null`, want: `{}`,
			meta: map[string]any{"replaced": true, "reason": "the answer is not a JSON object"}},
		{name: "text answer: {}", out: tolerant, header: http.Header{"Content-Type": {"text/plain"}}, body: "hello",
			want: `{}`, meta: map[string]any{"replaced": true, "reason": "the answer is not JSON"}},
		// No body is a success with nothing to say: {} is all of it, not a
		// substitute (which hosts reading structuredContent alone would get
		// as an error result).
		{name: "no body: {}", out: tolerant, status: 204, body: "", text: "HTTP 204 No Content (empty body)",
			want: `{}`, noMeta: true},
		{name: "no body, Location: {}", out: tolerant, status: 202, header: http.Header{"Location": {"/jobs/7?token=sk-live-abc123xyz"}}, body: "",
			text: "HTTP 202 Accepted (empty body; Location: /jobs/7?token=[REDACTED])", want: `{}`, noMeta: true},
		{name: "strict: no body is an error result", out: strict, status: 204, body: "", text: "HTTP 204 No Content (empty body)", isError: true},
		{name: "errors carry no structuredContent", out: tolerant, status: 404, body: `{"error":"nope"}`,
			text: `upstream returned HTTP 404 Not Found: {"error":"nope"}`, isError: true},
		{name: "no output schema: none", out: nil, body: `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, header := tt.status, tt.header
			if status == 0 {
				status = 200
			}
			if header == nil {
				header = jsonHeader
			}
			r := s.Shape(result.Tool{Name: "pet", Output: tt.out}, status, header, []byte(tt.body))
			if r.IsError != tt.isError {
				t.Errorf("IsError = %v", r.IsError)
			}
			if tt.last != "" {
				if tc, ok := r.Content[len(r.Content)-1].(*mcp.TextContent); !ok || tc.Text != tt.last {
					t.Errorf("last content = %#v, want the text %q", r.Content[len(r.Content)-1], tt.last)
				}
			}
			text := tt.text
			if text == "" {
				text = tt.body
			}
			if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != text {
				t.Errorf("first content = %#v, want the text %q", r.Content[0], text)
			}
			got := structured(t, r)
			if tt.want != "" {
				var a, b any
				_ = json.Unmarshal([]byte(got), &a)
				_ = json.Unmarshal([]byte(tt.want), &b)
				if !cmp.Equal(a, b) {
					t.Errorf("structuredContent = %s, want %s", got, tt.want)
				}
			} else if got != "" {
				t.Errorf("structuredContent = %s, want none", got)
			}
			var meta map[string]any
			if m := r.Meta[result.MetaKey]; m != nil {
				b, _ := json.Marshal(m)
				_ = json.Unmarshal(b, &meta)
			}
			switch {
			case tt.meta != nil:
				if diff := cmp.Diff(tt.meta, meta); diff != "" {
					t.Errorf("_meta mismatch (-want +got):\n%s", diff)
				}
			case meta != nil:
				t.Errorf("_meta = %v, want none", meta)
			}
		})
	}
}

// TestShapeMismatchLoggedOnce: many concurrent drifting answers of one
// tool make one WARN, with the first difference and no value.
func TestShapeMismatchLoggedOnce(t *testing.T) {
	s, logs := newShaper(t)
	out := testOutput(t, schema.OutputTolerant, petSchema, nil)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Shape(result.Tool{Name: "pet", Output: out}, 200, jsonHeader, []byte(`{"id":"secret-looking-value"}`))
			s.Shape(result.Tool{Name: "other", Output: out}, 200, jsonHeader, []byte(`{"name":5}`))
		}()
	}
	wg.Wait()
	warns := logs.FilterLevelExact(zapcore.WarnLevel).All()
	if len(warns) != 2 {
		t.Fatalf("%d WARN entries, want one per tool: %v", len(warns), warns)
	}
	for _, w := range warns {
		first, _ := w.ContextMap()["first_difference"].(string)
		if first == "" || json.Valid([]byte(first)) {
			t.Errorf("WARN without a first difference: %v", w.ContextMap())
		}
		if b, _ := json.Marshal(w.ContextMap()); strings.Contains(string(b), "secret-looking-value") {
			t.Errorf("a value was logged: %s", b)
		}
	}
	if n := logs.FilterLevelExact(zapcore.DebugLevel).Len(); n != 62 {
		t.Errorf("%d DEBUG entries, want 62 (the later mismatches)", n)
	}
}
