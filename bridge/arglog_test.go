package bridge_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// TestBadArgumentsLogNoValue: a call refused for its arguments is logged
// (debug) with the tool and the argument at fault, never the value the
// client sent, which the reason quotes: logs carry no argument values
// unless --log-arguments (the usage record's business).
func TestBadArgumentsLogNoValue(t *testing.T) {
	const secret = "hunter2-plain-password"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the upstream was called: %s", r.URL)
	}))
	t.Cleanup(up.Close)
	const src = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /login:
    get:
      operationId: login
      parameters:
        - {name: mode, in: query, required: true, schema: {type: string, enum: [fast, slow]}}
      responses: {"200": {description: ok}}
`
	res, err := specloader.LoadData(t.Context(), []byte(src), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.DebugLevel)
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, cat)
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "login", Arguments: map[string]any{"mode": secret}})
	if err != nil || !r.IsError {
		t.Fatalf("call: %v %+v; want an isError result", err, r)
	}
	if text := r.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "mode") {
		t.Errorf("the client is not told which argument is wrong: %s", text)
	}
	entries := logs.FilterMessage("bad tool arguments").All()
	if len(entries) != 1 {
		t.Fatalf("%d bad tool arguments lines, want 1", len(entries))
	}
	for _, e := range logs.All() {
		if line := fmt.Sprint(e.Message, e.ContextMap()); strings.Contains(line, secret) {
			t.Errorf("a log line carries the argument value: %s", line)
		}
	}
}

// TestRetryLogNoValue: a retried call's debug lines carry no argument value
// (a path parameter is one): the URL's path was logged on every retry.
func TestRetryLogNoValue(t *testing.T) {
	const secret = "alice.secret@corp.example"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(up.Close)
	const src = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /users/{email}:
    get:
      operationId: getUser
      parameters:
        - {name: email, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
`
	res, err := specloader.LoadData(t.Context(), []byte(src), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.DebugLevel)
	log := zap.New(core)
	client := upstream.New(upstream.Options{RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond, Logger: log})
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: client, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, cat)
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "getUser", Arguments: map[string]any{"email": secret}})
	if err != nil || !r.IsError {
		t.Fatalf("call: %v %+v; want an isError result", err, r)
	}
	if n := len(logs.FilterMessage("retrying upstream request").All()); n != 2 {
		t.Errorf("%d retry lines, want 2", n)
	}
	for _, e := range logs.All() {
		if line := fmt.Sprint(e.Message, e.ContextMap()); strings.Contains(line, secret) {
			t.Errorf("a log line carries the argument value: %s", line)
		}
	}
}
