package bridge_test

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

const credSpec = `openapi: 3.0.3
info: {title: creds, version: "1"}
paths:
  /echo:
    get:
      operationId: echo
      parameters:
        - {name: q, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
`

// TestUpstreamCredentials checks each credential kind reaches the upstream
// and never the client, even when the upstream echoes it back.
func TestUpstreamCredentials(t *testing.T) {
	var got *http.Request
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(r.Context())
		w.Header().Set("Content-Type", "text/plain")
		// A careless upstream that echoes what it received.
		io.WriteString(w, "you sent "+r.URL.RawQuery+" "+r.Header.Get("Authorization")+" "+r.Header.Get("X-Api-Key")+" "+r.Header.Get("Cookie"))
	}))
	defer up.Close()
	res, err := specloader.LoadData(t.Context(), []byte(credSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		creds  bridge.Credentials
		check  func(r *http.Request) bool
		secret string
	}{
		{"bearer", bridge.Credentials{BearerToken: "tok-1234567890"}, func(r *http.Request) bool {
			return r.Header.Get("Authorization") == "Bearer tok-1234567890"
		}, "tok-1234567890"},
		{"basic", bridge.Credentials{BasicUser: "ann", BasicPassword: "pw-secret-99"}, func(r *http.Request) bool {
			u, p, ok := r.BasicAuth()
			return ok && u == "ann" && p == "pw-secret-99"
		}, base64.StdEncoding.EncodeToString([]byte("ann:pw-secret-99"))},
		{"header key", bridge.Credentials{Headers: map[string]string{"X-API-Key": "hk-abcdef123"}}, func(r *http.Request) bool {
			return r.Header.Get("X-Api-Key") == "hk-abcdef123"
		}, "hk-abcdef123"},
		{"query key", bridge.Credentials{Query: map[string]string{"api_key": "qk-abcdef123"}}, func(r *http.Request) bool {
			return r.URL.Query().Get("api_key") == "qk-abcdef123" && r.URL.Query().Get("q") == "x"
		}, "qk-abcdef123"},
		{"cookie key", bridge.Credentials{Cookies: map[string]string{"sid": "ck-abcdef123"}}, func(r *http.Request) bool {
			c, err := r.Cookie("sid")
			return err == nil && c.Value == "ck-abcdef123"
		}, "ck-abcdef123"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Credentials: tt.creds})
			if err != nil {
				t.Fatal(err)
			}
			cs := connect(t, b)
			r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"q": "x"}})
			if err != nil || r.IsError {
				t.Fatalf("call: %v %+v", err, r)
			}
			if got == nil || !tt.check(got) {
				t.Errorf("upstream did not receive the %s credential: %+v", tt.name, got)
			}
			text := r.Content[0].(*mcp.TextContent).Text
			if strings.Contains(text, tt.secret) {
				t.Errorf("credential echoed to the client: %q", text)
			}
		})
	}
}
