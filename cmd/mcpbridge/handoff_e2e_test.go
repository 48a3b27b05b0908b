package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHandedOffEndToEnd: large lists and answers, which stdio and
// stateless HTTP hand past go-sdk's encoding (transport/handoff), reach a
// go-sdk client as they do over stateful HTTP, where go-sdk encodes them:
// the same tools, the answer's text equal to the upstream body (compacted
// when it came pretty-printed), structuredContent equal to it.
func TestHandedOffEndToEnd(t *testing.T) {
	var items []string
	for i := range 3000 {
		items = append(items, fmt.Sprintf(`{"id":%d,"name":"item <%d> & co","note":"quote \" and \\ here, é"}`, i, i))
	}
	compact := `{"items":[` + strings.Join(items, ",") + `]}`
	pretty := "{\n  \"items\": [\n    " + strings.Join(items, ",\n    ") + "\n  ]\n}"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("pretty") == "1" {
			fmt.Fprint(w, pretty)
			return
		}
		fmt.Fprint(w, compact)
	}))
	defer up.Close()

	var spec strings.Builder
	spec.WriteString(`openapi: 3.0.3
info: {title: handoff, version: "1"}
paths:
  /big:
    get:
      operationId: getBig
      parameters: [{name: pretty, in: query, schema: {type: string}}]
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {type: object, properties: {items: {type: array, items: {type: object}}}}}}
`)
	for i := range 60 { // a tools/list well over the hand-off threshold
		fmt.Fprintf(&spec, "  /x%d:\n    get:\n      operationId: extra%d\n      description: %q\n      responses: {\"200\": {description: ok}}\n", i, i, strings.Repeat("Words <b>and</b> more & more. ", 12))
	}
	path := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(path, []byte(spec.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--spec", path, "--all-operations", "--upstream", up.URL, "--no-cache"}

	sessions := map[string]*mcp.ClientSession{}
	sessions["stdio"], _ = startBridge(t, args...)
	authed := &http.Client{Transport: bearer{"client-key-1", http.DefaultTransport}}
	for _, mode := range []string{"stateless", "stateful"} {
		extra := []string{"--api-key", "client-key-1"}
		if mode == "stateful" {
			extra = append(extra, "--stateful")
		}
		base := startHTTPBridge(t, append(append([]string{}, args...), extra...)...)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "handoff", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: authed}, nil)
		if err != nil {
			t.Fatalf("%s: connect: %v", mode, err)
		}
		t.Cleanup(func() { cs.Close() })
		sessions["http "+mode] = cs
	}

	var want map[string]any
	if err := json.Unmarshal([]byte(compact), &want); err != nil {
		t.Fatal(err)
	}
	encode := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	ref := map[string]string{}
	for _, name := range []string{"http stateful", "stdio", "http stateless"} { // the reference first
		cs := sessions[name]
		list, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatalf("%s: tools/list: %v", name, err)
		}
		if n := len(encode(list.Tools)); len(list.Tools) < 61 || n < 32<<10 {
			t.Fatalf("%s: %d tools, %d bytes: too small to be handed off", name, len(list.Tools), n)
		}
		got := map[string]string{"list": encode(list.Tools)}
		for _, p := range []string{"0", "1"} {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "getBig", Arguments: map[string]any{"pretty": p}})
			if err != nil || res.IsError {
				t.Fatalf("%s pretty=%s: %v %+v", name, p, err, res)
			}
			if text := res.Content[0].(*mcp.TextContent).Text; text != compact {
				t.Errorf("%s pretty=%s: text is not the (compacted) upstream body: %.80q…", name, p, text)
			}
			if sc, ok := res.StructuredContent.(map[string]any); !ok || !reflect.DeepEqual(sc, want) {
				t.Errorf("%s pretty=%s: structuredContent differs from the upstream body", name, p)
			}
			// The blocks; go-sdk adds _meta's serverInfo and resultType on
			// the newest revision, which stateful HTTP does not negotiate.
			got["call "+p] = encode([]any{res.Content, res.StructuredContent, res.IsError})
		}
		if name == "http stateful" {
			ref = got
			continue
		}
		for k, v := range got {
			if v != ref[k] {
				i := 0
				for i < len(v) && i < len(ref[k]) && v[i] == ref[k][i] {
					i++
				}
				t.Errorf("%s: %s differs from stateful HTTP's (not handed off) at byte %d: %.200q vs %.200q", name, k, i, v[max(0, i-50):min(len(v), i+150)], ref[k][max(0, i-50):min(len(ref[k]), i+150)])
			}
		}
	}
}
