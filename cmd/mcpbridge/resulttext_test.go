package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResultTextDefault runs the real program over stdio and pins which
// blocks a successful answer with structuredContent carries, per client,
// in the default configuration (--result-text known): Claude Code, which
// hands its model structuredContent and drops the text, gets no duplicate
// text block; any other client gets both; --result-text always gives
// everyone both, and MCPBRIDGE_STRUCTURED_CLIENTS replaces the list.
// Claude Desktop ("claude-ai"), which shows its model the content alone, is
// listed the tools without output schemas and gets the answer as text
// alone, drifted or not, as a success; MCPBRIDGE_CONTENT_CLIENTS and
// --content-client replace that list.
//
// An answer that breaks the output schema (structuredContent reduced or
// replaced by {}) reaches such a client as an error result with the whole
// answer as text, since it would show its model the partial object alone;
// other clients get it as before: success, the partial structuredContent,
// the whole answer as text.
func TestResultTextDefault(t *testing.T) {
	const (
		answer     = `{"id":7,"name":"rex"}`
		driftArray = `[1,2,3]`
		driftType  = `{"id":"seven","name":"rex","extra":true}`
	)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/drift/array":
			fmt.Fprint(w, driftArray)
		case "/drift/type":
			fmt.Fprint(w, driftType)
		default:
			fmt.Fprint(w, answer)
		}
	}))
	t.Cleanup(up.Close)
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(spec, []byte(`openapi: 3.0.3
info: {title: shape, version: "1"}
paths:
  /pets/{id}:
    get:
      operationId: getPet
      parameters: [{name: id, in: path, required: true, schema: {type: integer}}]
      responses: {"200": {$ref: "#/components/responses/Pet"}}
  /drift/{kind}:
    get:
      operationId: getDrift
      parameters: [{name: kind, in: path, required: true, schema: {type: string}}]
      responses: {"200": {$ref: "#/components/responses/Pet"}}
components:
  responses:
    Pet:
      description: ok
      content:
        application/json:
          schema: {type: object, properties: {id: {type: integer}, name: {type: string}}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"serve", "--spec", spec, "--upstream", up.URL, "--all-operations", "--cache-dir", t.TempDir()}
	for _, c := range []struct {
		name, client string
		env          string
		args         []string
		wantText     bool
		textOnly     bool // no output schema listed, no structuredContent
	}{
		{"unknown client", "e2e", "", nil, true, false},
		{"claude-code", "claude-code", "", nil, false, false},
		{"claude-code behind mcp-remote", "claude-code (via mcp-remote 0.1.29)", "", nil, false, false},
		{"claude-code, always", "claude-code", "", []string{"--result-text", "always"}, true, false},
		{"listed by env", "e2e", "MCPBRIDGE_STRUCTURED_CLIENTS=other,e2e", nil, false, false},
		{"claude-code, not listed by env", "claude-code", "MCPBRIDGE_STRUCTURED_CLIENTS=other", nil, true, false},
		{"codex", "codex-mcp-client", "", nil, false, false},
		{"codex, always", "codex-mcp-client", "", []string{"--result-text", "always"}, true, false},
		{"codex, no structured clients", "codex-mcp-client", "", []string{"--structured-client", ""}, true, false},
		{"vs code", "Visual Studio Code", "", nil, false, false},
		{"claude-ai", "claude-ai", "", nil, true, true},
		{"claude-ai behind mcp-remote", "claude-ai (via mcp-remote 0.1.29)", "", nil, true, true},
		{"claude-ai, always", "claude-ai", "", []string{"--result-text", "always"}, true, false},
		{"claude-ai, auto", "claude-ai", "", []string{"--result-text", "auto"}, true, true},
		{"claude-ai, no content clients", "claude-ai", "", []string{"--content-client", ""}, true, false},
		{"kimi-code", "kimi-code", "", nil, true, true},
		{"gemini cli", "gemini-cli-mcp-client", "", nil, true, true},
		{"content client by env", "e2e", "MCPBRIDGE_CONTENT_CLIENTS=other,e2e", nil, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				k, v, _ := strings.Cut(c.env, "=")
				t.Setenv(k, v)
			}
			cs, _ := startBridgeAs(t, c.client, &testWriter{t: t}, append(append([]string(nil), base...), c.args...)...)
			for tool, err := range cs.Tools(t.Context(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				if tool.Name != "getPet" && tool.Name != "getDrift" {
					continue // the bridge's own ping has no output schema
				}
				if listed := tool.OutputSchema != nil; listed == c.textOnly {
					t.Errorf("%s: output schema listed %v, want %v", tool.Name, listed, !c.textOnly)
				}
			}
			r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "getPet", Arguments: map[string]any{"id": 7}})
			if err != nil || r.IsError {
				t.Fatalf("call: %v %+v", err, r)
			}
			var want any
			json.Unmarshal([]byte(answer), &want) //nolint:errcheck // constant
			if c.textOnly {
				want = nil
			}
			if !reflect.DeepEqual(r.StructuredContent, want) {
				t.Errorf("structuredContent = %v, want %v", r.StructuredContent, want)
			}
			texts := textBlocks(r)
			for _, text := range texts {
				if text != answer {
					t.Errorf("text %q, want %q", text, answer)
				}
			}
			if got := len(texts) == 1; got != c.wantText || len(texts) > 1 {
				t.Errorf("%d text blocks, want the text: %v", len(texts), c.wantText)
			}
			for _, kind := range []struct{ path, body string }{{"array", driftArray}, {"type", driftType}} {
				r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "getDrift", Arguments: map[string]any{"kind": kind.path}})
				if err != nil {
					t.Fatalf("drift %s: %v", kind.path, err)
				}
				all := textBlocks(r)
				whole := slices.Contains(all, kind.body)
				if !whole {
					t.Errorf("drift %s: no text block carries the whole answer %s: %q", kind.path, kind.body, all)
				}
				// c.wantText is false exactly for the clients that read
				// structuredContent only.
				if c.textOnly {
					if r.IsError || r.StructuredContent != nil || len(all) != 1 {
						t.Errorf("drift %s: isError %v, structuredContent %v, texts %q; want success with the answer as its one text", kind.path, r.IsError, r.StructuredContent, all)
					}
				} else if sconly := !c.wantText; sconly {
					if !r.IsError || r.StructuredContent != nil {
						t.Errorf("drift %s: isError %v, structuredContent %v; want an error result with the answer as text only", kind.path, r.IsError, r.StructuredContent)
					}
				} else if r.IsError || r.StructuredContent == nil {
					t.Errorf("drift %s: isError %v, structuredContent %v; want success with a partial structuredContent", kind.path, r.IsError, r.StructuredContent)
				}
			}
		})
	}
}

// textBlocks is the text of r's text blocks.
func textBlocks(r *mcp.CallToolResult) []string {
	var out []string
	for _, b := range r.Content {
		if tc, ok := b.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return out
}
