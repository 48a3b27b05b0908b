package bridge_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

const allowKeysSpec = `openapi: 3.0.3
info: {title: tokens, version: "1"}
paths:
  /tokens:
    post:
      operationId: createToken
      responses: {"201": {description: ok}}
  /tokens/current:
    get:
      operationId: showToken
      responses: {"200": {description: ok}}
`

// TestRedactAllowKeys: a tool whose whitelist entry has redact.allowKeys
// returns the token member, another tool answering the same does not, and
// in both the configured credential and secret patterns are masked; the
// relaxation is logged at startup and survives the tool cache.
func TestRedactAllowKeys(t *testing.T) {
	const cred = "cred-4a8a08f09d37b73795649038408b5f33"
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	answer := `{"token":"pat-visible-0123456789","password":"pw-hidden-1","echo":"` + cred + `","jwt":"` + jwt + `","nested":{"token":"` + cred + `"}}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, answer)
	}))
	t.Cleanup(up.Close)
	res, err := specloader.LoadData(t.Context(), []byte(allowKeysSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := whitelist.Parse(strings.NewReader("tools:\n  - operationId: createToken\n    redact: {allowKeys: [token]}\n  - operationId: showToken\n"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := pol.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zap.InfoLevel)
	opts := bridge.Options{BaseURL: up.URL, Client: up.Client(), Credentials: bridge.Credentials{BearerToken: cred}, Logger: zap.New(core)}
	b, err := bridge.New(ops, opts)
	if err != nil {
		t.Fatal(err)
	}
	entries := logs.FilterMessageSnippet("redaction relaxed").All()
	if len(entries) != 1 || entries[0].ContextMap()["tool"] != "createToken" || !strings.Contains(strings.Join(toStrings(entries[0].ContextMap()["keys"]), ","), "token") {
		t.Errorf("startup log: %v; want one INFO naming createToken and [token]", entries)
	}
	snap, err := b.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	fromCache, err := bridge.NewFromSnapshot(snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	for name, cat := range map[string]*bridge.Catalog{"built": b, "from the tool cache": fromCache} {
		cs := connect(t, cat)
		call := func(tool string) string {
			r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool})
			if err != nil || r.IsError {
				t.Fatalf("%s: %s: %v %+v", name, tool, err, r)
			}
			return r.Content[0].(*mcp.TextContent).Text
		}
		relaxed, strict := call("createToken"), call("showToken")
		if !strings.Contains(relaxed, `"token":"pat-visible-0123456789"`) {
			t.Errorf("%s: createToken (allowKeys: [token]) masked its token: %s", name, relaxed)
		}
		if strings.Contains(strict, "pat-visible") {
			t.Errorf("%s: showToken (no allowKeys) shows the token: %s", name, strict)
		}
		for _, text := range []string{relaxed, strict} {
			for _, s := range []string{cred, "pw-hidden-1", "eyJhbGciOiJIUzI1NiJ9"} {
				if strings.Contains(text, s) {
					t.Errorf("%s: %q survived: %s", name, s, text)
				}
			}
		}
	}
}

func toStrings(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		var out []string
		for _, e := range x {
			s, _ := e.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}
