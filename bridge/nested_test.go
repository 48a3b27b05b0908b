package bridge_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/request"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// nestedSpec has the shapes real APIs nest: a form-style query array of
// objects (AWS's Filter), a deepObject array (Stripe's expand[]), a
// form-urlencoded body of deepObject properties (Stripe's metadata and line
// items) and a path parameter holding a path (GitHub's contents/{path}).
const nestedSpec = `openapi: 3.0.3
info: {title: nested, version: "1"}
paths:
  /search:
    get:
      operationId: search
      parameters:
        - name: Filter
          in: query
          schema:
            type: array
            items:
              type: object
              properties:
                Name: {type: string}
                Values: {type: array, items: {type: string}}
        - {name: expand, in: query, style: deepObject, explode: true, schema: {type: array, items: {type: string}}}
      responses: {"200": {description: ok}}
  /charges:
    post:
      operationId: createCharge
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                metadata: {type: object, additionalProperties: {type: string}}
                items:
                  type: array
                  items:
                    type: object
                    properties:
                      price: {type: string}
                      tax_rates: {type: array, items: {type: string}}
            encoding:
              metadata: {style: deepObject, explode: true}
              items: {style: deepObject, explode: true}
      responses: {"200": {description: ok}}
  /repos/{owner}/{repo}/contents/{path}:
    get:
      operationId: getContent
      parameters:
        - {name: owner, in: path, required: true, schema: {type: string}}
        - {name: repo, in: path, required: true, schema: {type: string}}
        - {name: path, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
`

// nestedRecorder is an upstream that keeps what each request sent.
type nestedRecorder struct {
	mu   sync.Mutex
	reqs []string // "METHOD URI body"
}

func (rec *nestedRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, strings.TrimSpace(r.Method+" "+r.RequestURI+" "+string(body)))
	rec.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte("{}"))
}

func (rec *nestedRecorder) take() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	r := rec.reqs
	rec.reqs = nil
	return r
}

// TestNestedStylePlumbing checks that Options.NestedStyle and a whitelist
// entry's nestedStyle and allowSlashes reach the requests.
func TestNestedStylePlumbing(t *testing.T) {
	res, err := specloader.LoadData(t.Context(), []byte(nestedSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := &nestedRecorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	search := `{"Filter":[{"Name":"tag:env","Values":["prod","dev"]}],"expand":["customer"]}`
	charge := `{"body":{"metadata":{"order_id":"6735"},"items":[{"price":"price_1","tax_rates":["txr_1"]}]}}`
	content := `{"owner":"o","repo":"r","path":"docs/a b.md"}`
	tests := []struct {
		name      string
		style     request.NestedStyle
		whitelist string
		calls     map[string]string // tool → arguments
		want      []string
	}{
		{
			name:  "default brackets",
			calls: map[string]string{"search": search, "createCharge": charge, "getContent": content},
			want: []string{
				"GET /search?Filter%5B0%5D%5BName%5D=tag%3Aenv&Filter%5B0%5D%5BValues%5D%5B0%5D=prod&Filter%5B0%5D%5BValues%5D%5B1%5D=dev&expand%5B0%5D=customer",
				"POST /charges items%5B0%5D%5Bprice%5D=price_1&items%5B0%5D%5Btax_rates%5D%5B0%5D=txr_1&metadata%5Border_id%5D=6735",
				"GET /repos/o/r/contents/docs%2Fa%20b.md",
			},
		},
		{
			name:  "options dots",
			style: request.NestedDots,
			calls: map[string]string{"search": search, "createCharge": charge},
			want: []string{
				"GET /search?Filter.1.Name=tag%3Aenv&Filter.1.Values.1=prod&Filter.1.Values.2=dev&expand.1=customer",
				"POST /charges items.1.price=price_1&items.1.tax_rates.1=txr_1&metadata%5Border_id%5D=6735",
			},
		},
		{
			name:  "whitelist overrides options; allowSlashes",
			style: request.NestedDots,
			whitelist: "tools:\n  - {operationId: search, nestedStyle: brackets-empty}\n  - {operationId: createCharge, nestedStyle: json}\n" +
				"  - {operationId: getContent, allowSlashes: [path]}\n",
			calls: map[string]string{"search": search, "createCharge": charge, "getContent": content},
			want: []string{
				"GET /search?Filter%5B0%5D%5BName%5D=tag%3Aenv&Filter%5B0%5D%5BValues%5D%5B%5D=prod&Filter%5B0%5D%5BValues%5D%5B%5D=dev&expand%5B%5D=customer",
				"POST /charges items=%5B%7B%22price%22%3A%22price_1%22%2C%22tax_rates%22%3A%5B%22txr_1%22%5D%7D%5D&metadata%5Border_id%5D=6735",
				"GET /repos/o/r/contents/docs/a%20b.md",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pol := whitelist.All()
			if tc.whitelist != "" {
				if pol, err = whitelist.Parse(strings.NewReader(tc.whitelist)); err != nil {
					t.Fatal(err)
				}
			}
			ops, err := pol.Select(res.Doc)
			if err != nil {
				t.Fatal(err)
			}
			b, err := bridge.New(ops, bridge.Options{BaseURL: srv.URL, Client: srv.Client(), NestedStyle: tc.style})
			if err != nil {
				t.Fatal(err)
			}
			rt := bridge.NewRuntime(b)
			var got []string
			for _, tool := range []string{"search", "createCharge", "getContent"} {
				args, ok := tc.calls[tool]
				if !ok {
					continue
				}
				out, err := rt.Call(t.Context(), &bridge.Call{Tool: tool, Args: json.RawMessage(args)})
				if err != nil {
					t.Fatal(err)
				}
				if out.Kind != bridge.OK {
					t.Fatalf("%s: outcome %v: %s", tool, out.Kind, out.Detail)
				}
				got = append(got, rec.take()...)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("requests mismatch (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("dot segments still refused", func(t *testing.T) {
		pol, err := whitelist.Parse(strings.NewReader("tools:\n  - {operationId: getContent, allowSlashes: [path]}\n"))
		if err != nil {
			t.Fatal(err)
		}
		ops, err := pol.Select(res.Doc)
		if err != nil {
			t.Fatal(err)
		}
		b, err := bridge.New(ops, bridge.Options{BaseURL: srv.URL, Client: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		out, err := bridge.NewRuntime(b).Call(t.Context(), &bridge.Call{Tool: "getContent", Args: json.RawMessage(`{"owner":"o","repo":"r","path":"a/../../../admin"}`)})
		if err != nil || out.Kind != bridge.BadArguments {
			t.Errorf("got %v, %+v; want bad_arguments", err, out)
		}
		if reqs := rec.take(); len(reqs) > 0 {
			t.Errorf("the upstream received %q", reqs)
		}
	})
	t.Run("unknown style fails New", func(t *testing.T) {
		ops, err := whitelist.All().Select(res.Doc)
		if err != nil {
			t.Fatal(err)
		}
		_, err = bridge.New(ops, bridge.Options{BaseURL: srv.URL, NestedStyle: "rails"})
		if err == nil || !strings.Contains(err.Error(), `nested style "rails"`) {
			t.Errorf("New error = %v, want one about the nested style", err)
		}
	})
}

// neverRejectSets is how many argument sets each tool gets: rich ones
// (optional and nested properties filled, with varying choices) and a
// minimal one (required arguments only).
const neverRejectSets = 4

// TestNeverRejectsSchemaValidArguments is the property "the bridge never
// rejects at call time what its own input schema accepts": for every tool
// of every corpus spec, arguments generated from the tool's input schema
// (and checked against it, as the bridge checks them) must reach the
// upstream as exactly one request, with no bad_arguments outcome. Every
// tool runs with the default nested style; except GitHub's, those with
// query parameters or a form or multipart body run with the other styles
// too.
// The generator is the oracle's (oracle_gen_test.go).
func TestNeverRejectsSchemaValidArguments(t *testing.T) {
	var mu sync.Mutex
	var total neverRejectStats
	t.Run("specs", func(t *testing.T) {
		for _, name := range corpusFiles(t) {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				corpusSkipUnderRace(t, name)
				styles := request.NestedStyles()
				if name == "github-api.3.0.json" {
					styles = styles[:1]
				}
				st := neverRejectSpec(t, name, styles)
				mu.Lock()
				total.add(st)
				mu.Unlock()
			})
		}
	})
	t.Logf("never reject: %d tools (%d without valid arguments), %d calls, %d reached the upstream as one request, %d failures",
		total.tools, total.noArgs, total.calls, total.ok, len(total.failures))
}

type neverRejectStats struct {
	tools, calls, ok, noArgs int
	failures                 []string
}

func (s *neverRejectStats) add(o neverRejectStats) {
	s.tools += o.tools
	s.calls += o.calls
	s.ok += o.ok
	s.noArgs += o.noArgs
	s.failures = append(s.failures, o.failures...)
}

func neverRejectSpec(t *testing.T, name string, styles []request.NestedStyle) neverRejectStats {
	var st neverRejectStats
	res, err := corpusLoad(t, name)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		calls++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()
	taken := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := calls
		calls = 0
		return n
	}
	// One catalog per style; arguments are generated once per tool (input
	// schemas do not depend on the style) and sent through each.
	var rts []*bridge.Runtime
	var defs []*mcp.Tool
	var sensitive []bool // the tool has query parameters or a form or multipart body
	for _, style := range styles {
		b, err := bridge.New(ops, bridge.Options{BaseURL: srv.URL, Client: srv.Client(), NestedStyle: style, Timeout: time.Minute})
		if err != nil {
			t.Fatalf("bridge.New: %v", err)
		}
		rts = append(rts, bridge.NewRuntime(b))
		defs = b.OperationDefs()
		if sensitive == nil {
			for _, tool := range b.Tools()[:b.Len()] {
				sensitive = append(sensitive, nestedSensitive(tool.Plan()))
			}
		}
	}
	st.tools = len(defs)
	for ti, def := range defs {
		sets, err := neverRejectArgs(def)
		if err != nil {
			t.Fatal(err)
		}
		if len(sets) == 0 {
			st.noArgs++
			continue
		}
		for si, rt := range rts {
			if si > 0 && !sensitive[ti] {
				break // the other styles would send the same request
			}
			for _, args := range sets {
				st.calls++
				out, err := rt.Call(t.Context(), &bridge.Call{Tool: def.Name, Args: args})
				n := taken()
				var why string
				switch {
				case err != nil:
					why = "protocol error: " + err.Error()
				case out.Kind == bridge.BadArguments:
					why = "bad_arguments: " + neverRejectText(out.Result)
				case n != 1:
					why = fmt.Sprintf("%d upstream requests (outcome %v: %s)", n, out.Kind, out.Detail)
				}
				if why == "" {
					st.ok++
					continue
				}
				f := fmt.Sprintf("%s %s (nested %s): %s\n    arguments: %.400s", name, def.Name, styles[si], why, args)
				st.failures = append(st.failures, f)
				t.Error(f)
			}
		}
	}
	t.Logf("%s: %d tools, %d calls, %d one request each, %d tools without valid arguments", name, st.tools, st.calls, st.ok, st.noArgs)
	return st
}

// nestedSensitive reports whether a plan's requests depend on the nested
// style: query parameters, form and multipart bodies.
func nestedSensitive(p *request.Plan) bool {
	for _, prm := range p.Params {
		if prm.Spec.In == request.InQuery {
			return true
		}
	}
	return p.Body != nil && (p.Body.Kind == request.KindForm || p.Body.Kind == request.KindMultipart)
}

// neverRejectArgs generates up to neverRejectSets distinct argument sets
// the tool's input schema accepts.
func neverRejectArgs(def *mcp.Tool) ([]json.RawMessage, error) {
	raw, err := json.Marshal(def.InputSchema)
	if err != nil {
		return nil, err
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, err
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(raw, &js); err != nil {
		return nil, err
	}
	resolved, err := js.Resolve(nil)
	if err != nil {
		return nil, err
	}
	var out []json.RawMessage
	for attempt := 0; attempt < 24 && len(out) < neverRejectSets; attempt++ {
		rich := len(out) < neverRejectSets-1
		args, err := genArgs(schema, attempt, rich)
		if err != nil {
			continue
		}
		data, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		var norm map[string]any
		if err := json.Unmarshal(data, &norm); err != nil {
			return nil, err
		}
		if resolved.Validate(norm) != nil || slices.ContainsFunc(out, func(d json.RawMessage) bool { return string(d) == string(data) }) {
			continue
		}
		out = append(out, data)
	}
	return out, nil
}

func neverRejectText(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var text string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	return text
}
