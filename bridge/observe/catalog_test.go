package observe_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

const spec = `openapi: 3.0.3
info: {title: observe, version: "1"}
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: color, in: query, schema: {type: string, enum: [red, green]}}
      responses: {"200": {description: ok}}
  /items:
    post:
      operationId: createItem
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string}
                password: {type: string}
      responses: {"201": {description: created}}
  /flaky:
    get:
      operationId: flaky
      responses: {"200": {description: ok}}
  /missing:
    get:
      operationId: missing
      responses: {"404": {description: not found}}
`

// itemBody is what the upstream answers for an item.
const itemBody = `{"id":"a1","name":"widget"}`

// newRuntime serves the spec above, against an httptest upstream, through
// mws. The upstream client retries quickly: /flaky answers 503 to every
// other request, so a call to flaky takes two attempts.
func newRuntime(t *testing.T, mws ...bridge.Middleware) *bridge.Runtime {
	t.Helper()
	var flaky atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, itemBody)
	})
	mux.HandleFunc("POST /items", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		io.WriteString(w, `{"id":"b2"}`)
	})
	mux.HandleFunc("GET /flaky", func(w http.ResponseWriter, r *http.Request) {
		if flaky.Add(1)%2 == 1 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	mux.HandleFunc("GET /missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such thing", http.StatusNotFound)
	})
	up := httptest.NewServer(mux)
	t.Cleanup(up.Close)
	res, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{
		BaseURL: up.URL,
		Client:  upstream.New(upstream.Options{RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return bridge.NewRuntime(cat, mws...)
}

// call runs one call and fails the test on a protocol error.
func call(t *testing.T, rt *bridge.Runtime, c *bridge.Call) *bridge.Outcome {
	t.Helper()
	out, err := rt.Call(t.Context(), c)
	if err != nil {
		t.Fatalf("Call(%s): %v", c.Tool, err)
	}
	return out
}

func args(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
