package mcpx_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// hintsSpec has one operation per method, and three GET operations the
// whitelist gives other hints or no summary.
const hintsSpec = `openapi: 3.0.3
info: {title: hints, version: "1"}
paths:
  /things:
    get: {operationId: listThings, summary: List things, responses: {"200": {description: ok}}}
    post: {operationId: createThing, summary: Create a thing, responses: {"201": {description: ok}}}
  /things/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    put: {operationId: replaceThing, summary: Replace a thing, responses: {"200": {description: ok}}}
    delete: {operationId: deleteThing, summary: Delete a thing, responses: {"204": {description: ok}}}
    patch: {operationId: patchThing, responses: {"200": {description: ok}}}
  /closed:
    get: {operationId: closedThing, summary: Read the closed world, responses: {"200": {description: ok}}}
  /writes:
    get: {operationId: writesThing, summary: Writes on GET, responses: {"200": {description: ok}}}
`

const hintsWhitelist = `tools:
  - operationId: listThings
  - operationId: createThing
    annotations: {destructiveHint: true}
  - operationId: replaceThing
  - operationId: deleteThing
  - operationId: patchThing
  - operationId: closedThing
    title: Closed
    annotations: {openWorldHint: false}
  - operationId: writesThing
    annotations: {readOnlyHint: false, idempotentHint: false}
`

// syncBuffer is a bytes.Buffer for a LoggingTransport, which writes from
// the session's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// teeTransport copies every HTTP response body it reads into a buffer.
type teeTransport struct{ to *syncBuffer }

func (tt teeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(resp.Body, tt.to), resp.Body}
	}
	return resp, err
}

// listAnswer is the raw result of the tools/list answer among the messages
// received (answerWith).
func (b *syncBuffer) listAnswer(t *testing.T) map[string]any {
	t.Helper()
	return b.answerWith(t, "tools")
}

// answerWith is the raw result of the first answer holding key among the
// messages received: lines a LoggingTransport wrote ("read: " and the message) or
// response bodies a teeTransport copied (JSON, or SSE "data: " lines).
func (b *syncBuffer) answerWith(t *testing.T, key string) map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "read: "); ok {
			line = rest
		} else if rest, ok := strings.CutPrefix(line, "data: "); ok {
			line = rest
		}
		var msg struct {
			Result map[string]any `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Result[key] != nil {
			return msg.Result
		}
	}
	t.Fatalf("no answer with %q among the messages read:\n%s", key, b.buf.String())
	return nil
}

// TestToolsListShape pins each tool's title and annotations as a client
// receives them, per protocol revision, in memory and over stateless
// streamable HTTP: the title once, top-level from 2025-06-18 on and in
// annotations.title before; no false readOnlyHint or idempotentHint (MCP's
// default), every other hint kept as built (a true destructiveHint or
// openWorldHint, a read-only tool's idempotentHint); nothing else of a tool
// changed, the shared definitions untouched, and go-sdk's decoding of what
// arrives giving each tool the meaning it had (issue 11).
func TestToolsListShape(t *testing.T) {
	up := newUpstream(t)
	res, err := specloader.LoadData(t.Context(), []byte(hintsSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := whitelist.Parse(strings.NewReader(hintsWhitelist))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := pol.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpx.New(bridge.NewRuntime(cat), mcpx.Options{}).MCP()
	h := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(h.Close)

	type shape struct {
		title string         // the tool's display title
		hints map[string]any // its annotations, title aside (nil: none)
	}
	want := map[string]shape{
		"listThings":   {"List things", map[string]any{"readOnlyHint": true, "idempotentHint": true}},
		"createThing":  {"Create a thing", map[string]any{"destructiveHint": true}},
		"replaceThing": {"Replace a thing", map[string]any{"destructiveHint": false, "idempotentHint": true}},
		"deleteThing":  {"Delete a thing", map[string]any{"destructiveHint": true, "idempotentHint": true}},
		"patchThing":   {"", map[string]any{"destructiveHint": false}},
		"closedThing":  {"Closed", map[string]any{"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}},
		"writesThing":  {"Writes on GET", nil},
		"ping":         {"Bridge health", map[string]any{"readOnlyHint": true, "idempotentHint": true, "openWorldHint": true}},
	}
	// What go-sdk's client makes of it, with MCP's defaults applied.
	type meaning struct{ ReadOnly, Destructive, Idempotent, OpenWorld bool }
	wantMeaning := map[string]meaning{
		"listThings":   {ReadOnly: true, Idempotent: true, OpenWorld: true},
		"createThing":  {Destructive: true, OpenWorld: true},
		"replaceThing": {Idempotent: true, OpenWorld: true},
		"deleteThing":  {Destructive: true, Idempotent: true, OpenWorld: true},
		"patchThing":   {OpenWorld: true},
		"closedThing":  {ReadOnly: true, Idempotent: true},
		"writesThing":  {Destructive: true, OpenWorld: true},
		"ping":         {ReadOnly: true, Idempotent: true, OpenWorld: true},
	}
	for _, version := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		for _, via := range []string{"memory", "http"} {
			t.Run(version+"/"+via, func(t *testing.T) {
				// The bytes received: over HTTP the response bodies (a
				// LoggingTransport would hide the negotiated revision from
				// the streamable client, which then sends none), in memory
				// the messages read.
				wire := &syncBuffer{}
				var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: h.URL, HTTPClient: &http.Client{Transport: teeTransport{wire}}}
				if via == "memory" {
					ct, st := mcp.NewInMemoryTransports()
					ss, err := srv.Connect(t.Context(), st, nil)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { ss.Close() })
					tr = &mcp.LoggingTransport{Transport: ct, Writer: wire}
				}
				c := mcp.NewClient(&mcp.Implementation{Name: "shape", Version: "1"}, nil)
				cs, err := c.Connect(t.Context(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				lt, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				old := version < "2025-06-18"
				raw := wire.listAnswer(t)
				if version >= "2026-07-28" && raw["resultType"] != "complete" {
					t.Errorf("resultType = %v, want complete (go-sdk's own fields survive the shaping)", raw["resultType"])
				}
				tools, _ := raw["tools"].([]any)
				if len(tools) != len(want) {
					t.Fatalf("%d tools, want %d: %v", len(tools), len(want), tools)
				}
				for _, rt := range tools {
					got, _ := rt.(map[string]any)
					name, _ := got["name"].(string)
					w, ok := want[name]
					if !ok {
						t.Fatalf("unexpected tool %q", name)
					}
					// The title in the one place this revision reads it.
					var ann map[string]any
					if a, ok := got["annotations"]; ok {
						ann, _ = a.(map[string]any)
						if len(ann) == 0 {
							t.Errorf("%s: empty annotations sent: %v", name, a)
						}
					}
					wantAnn := map[string]any{}
					for k, v := range w.hints {
						wantAnn[k] = v
					}
					wantTop := map[string]any{}
					if w.title != "" {
						if old {
							wantAnn["title"] = w.title
						} else {
							wantTop["title"] = w.title
						}
					}
					if len(wantAnn) == 0 {
						wantAnn = nil
					}
					if diff := cmp.Diff(wantAnn, ann); diff != "" {
						t.Errorf("%s: annotations (-want +got):\n%s", name, diff)
					}
					gotTop := map[string]any{}
					if v, ok := got["title"]; ok {
						gotTop["title"] = v
					}
					if diff := cmp.Diff(wantTop, gotTop); diff != "" {
						t.Errorf("%s: top-level title (-want +got):\n%s", name, diff)
					}
					// Everything else exactly as the catalog defines it.
					tool, ok := cat.Lookup(name)
					if !ok {
						t.Fatalf("%s: not in the catalog", name)
					}
					def := *tool.Def()
					def.Title, def.Annotations = "", nil
					b, err := json.Marshal(&def)
					if err != nil {
						t.Fatal(err)
					}
					var wantRest map[string]any
					if err := json.Unmarshal(b, &wantRest); err != nil {
						t.Fatal(err)
					}
					delete(got, "title")
					delete(got, "annotations")
					if diff := cmp.Diff(wantRest, got); diff != "" {
						t.Errorf("%s: the rest of the tool (-want +got):\n%s", name, diff)
					}
				}
				for _, tl := range lt.Tools {
					a := tl.Annotations
					if a == nil {
						a = &mcp.ToolAnnotations{}
					}
					m := meaning{ReadOnly: a.ReadOnlyHint, Idempotent: a.IdempotentHint, OpenWorld: a.OpenWorldHint == nil || *a.OpenWorldHint}
					if !a.ReadOnlyHint {
						m.Destructive = a.DestructiveHint == nil || *a.DestructiveHint
					}
					if diff := cmp.Diff(wantMeaning[tl.Name], m); diff != "" {
						t.Errorf("%s as go-sdk decodes it (-want +got):\n%s", tl.Name, diff)
					}
					title := tl.Title
					if old {
						title = a.Title
					}
					if title != want[tl.Name].title {
						t.Errorf("%s: decoded title %q, want %q", tl.Name, title, want[tl.Name].title)
					}
				}
			})
		}
	}
	// The definitions every session shares still carry both titles and
	// every hint (the REST facade and describe_operation read them).
	for _, name := range []string{"listThings", "deleteThing", "ping"} {
		tool, _ := cat.Lookup(name)
		d := tool.Def()
		if d.Annotations == nil || d.Annotations.Title != d.Title || d.Title == "" {
			t.Errorf("%s: shared definition changed: title %q, annotations %+v", name, d.Title, d.Annotations)
		}
		if !d.Annotations.IdempotentHint {
			t.Errorf("%s: shared definition lost idempotentHint: %+v", name, d.Annotations)
		}
	}
}
