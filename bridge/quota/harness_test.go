package quota_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

const spec = `openapi: 3.0.3
info: {title: quota, version: "1"}
paths:
  /echo:
    get:
      operationId: echo
      parameters:
        - {name: q, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
`

// upstream answers every request and counts them.
type upstream struct {
	srv  *httptest.Server
	hits atomic.Int64
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// catalog is the echo tool (and the built-in ping) calling u.
func catalog(t *testing.T, u *upstream) *bridge.Catalog {
	t.Helper()
	res, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: u.srv.URL, Client: u.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// call runs the tool for caller and returns the outcome.
func call(t *testing.T, rt *bridge.Runtime, tool string, caller *bridge.Identity) *bridge.Outcome {
	t.Helper()
	return callCtx(t, t.Context(), rt, tool, caller)
}

func callCtx(t *testing.T, ctx context.Context, rt *bridge.Runtime, tool string, caller *bridge.Identity) *bridge.Outcome {
	t.Helper()
	c := &bridge.Call{Tool: tool, Caller: caller, Transport: "http"}
	if tool != bridge.PingToolName {
		c.Args = []byte(`{"q":"` + secretArg + `"}`)
	}
	out, err := rt.Call(ctx, c)
	if err != nil {
		t.Fatalf("Call(%s): %v", tool, err)
	}
	return out
}

// secretArg is the argument value every call sends; no log may hold it.
const secretArg = "secret-arg-value"

// text is the first text block of the outcome's result.
func text(o *bridge.Outcome) string {
	if o.Result == nil || len(o.Result.Content) == 0 {
		return ""
	}
	if tc, ok := o.Result.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// eventually polls cond every 10ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
