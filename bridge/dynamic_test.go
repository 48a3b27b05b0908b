package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

func dynamicCatalog(t *testing.T, mode string, up *httptest.Server) *bridge.Catalog {
	t.Helper()
	res, err := specloader.Load(t.Context(), "../testdata/specs/petstore.3.0.yaml", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Tools: mode})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func textOf(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if len(r.Content) == 0 {
		t.Fatalf("empty result")
	}
	return r.Content[0].(*mcp.TextContent).Text
}

// TestDynamicMode checks that dynamic mode lists three meta-tools and ping,
// that search ranks and pages, that describe gives the exact schema the
// per-operation tool would have, and that call_operation reaches the
// upstream through the middleware chain as the operation itself.
func TestDynamicMode(t *testing.T) {
	var hits atomic.Int32
	var lastPath atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		lastPath.Store(r.URL.Path + "?" + r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[{"id":1,"name":"rex","photoUrls":[]}]`))
	}))
	defer up.Close()
	full := dynamicCatalog(t, bridge.ToolsAll, up)
	dyn := dynamicCatalog(t, bridge.ToolsDynamic, up)
	var seen []string
	mw := func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			seen = append(seen, c.Tool)
			return next.Invoke(ctx, c)
		})
	}
	srv := mcpx.New(bridge.NewRuntime(dyn, mw), mcpx.Options{}).MCP()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff([]string{"call_operation", "describe_operation", "ping", "search_operations"}, names); diff != "" {
		t.Errorf("listed tools (-want +got):\n%s", diff)
	}
	for _, tl := range lt.Tools {
		if tl.Name == "call_operation" && (tl.Annotations.ReadOnlyHint || tl.Annotations.DestructiveHint == nil || !*tl.Annotations.DestructiveHint) {
			t.Errorf("call_operation is not the most cautious of a set with DELETE operations: %+v", tl.Annotations)
		}
	}

	call := func(name string, args any) *mcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return r
	}
	var found struct {
		Results    []struct{ Name, Summary, Operation string }
		Total      int
		NextCursor string
	}
	if err := json.Unmarshal([]byte(textOf(t, call("search_operations", map[string]any{"query": "find pets by status"}))), &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Results) == 0 || found.Results[0].Name != "findPetsByStatus" || found.Results[0].Operation != "GET /pet/findByStatus" {
		t.Errorf("best match for 'find pets by status': %+v", found.Results)
	}
	// Paging: one result a page walks every match once.
	seenNames := map[string]bool{}
	cursor := ""
	for page := 0; page < 50; page++ {
		args := map[string]any{"query": "pet", "limit": 1}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var p struct {
			Results    []struct{ Name string }
			Total      int
			NextCursor string
		}
		if err := json.Unmarshal([]byte(textOf(t, call("search_operations", args))), &p); err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Results {
			if seenNames[r.Name] {
				t.Errorf("page %d repeats %s", page, r.Name)
			}
			seenNames[r.Name] = true
		}
		if cursor = p.NextCursor; cursor == "" {
			if len(seenNames) != p.Total {
				t.Errorf("paged through %d results; total says %d", len(seenNames), p.Total)
			}
			break
		}
	}
	if len(seenNames) < 5 {
		t.Errorf("only %d operations match 'pet'", len(seenNames))
	}

	var desc struct {
		Name        string
		InputSchema json.RawMessage
	}
	if err := json.Unmarshal([]byte(textOf(t, call("describe_operation", map[string]any{"name": "findPetsByStatus"}))), &desc); err != nil {
		t.Fatal(err)
	}
	var want json.RawMessage
	for _, d := range full.OperationDefs() {
		if d.Name == "findPetsByStatus" {
			want = d.InputSchema.(json.RawMessage)
		}
	}
	if string(desc.InputSchema) != string(want) {
		t.Errorf("describe_operation schema differs from the tool's:\n got %s\nwant %s", desc.InputSchema, want)
	}

	seen = nil
	r := call("call_operation", map[string]any{"name": "findPetsByStatus", "arguments": map[string]any{"status": []any{"sold"}}})
	if r.IsError || hits.Load() != 1 || !strings.Contains(lastPath.Load().(string), "/pet/findByStatus?status=sold") {
		t.Errorf("call_operation: %s, upstream hits %d, last %v", textOf(t, r), hits.Load(), lastPath.Load())
	}
	if diff := cmp.Diff([]string{"findPetsByStatus"}, seen); diff != "" {
		t.Errorf("middleware saw (-want +got):\n%s", diff)
	}
	// The operation's own validation applies.
	if r := call("call_operation", map[string]any{"name": "getPetById", "arguments": map[string]any{"petId": "x"}}); !r.IsError {
		t.Errorf("invalid arguments through call_operation were accepted")
	}
	if r := call("call_operation", map[string]any{"name": "nope"}); !r.IsError || !strings.Contains(textOf(t, r), "search_operations") {
		t.Errorf("unknown operation: %+v", r)
	}
	if r := call("describe_operation", map[string]any{"name": "ping"}); !r.IsError {
		t.Errorf("describe_operation described a built-in")
	}
	if hits.Load() != 1 {
		t.Errorf("upstream hits %d; want 1", hits.Load())
	}
}

// TestSearchQueryBounded: a query longer than 1 KiB or with more than 32
// distinct words is refused with a specific reason, before any ranking (a
// 600 KB query of repeated words took 2 GB and 30 s on 1,200 operations);
// repeated words count once.
func TestSearchQueryBounded(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	defer up.Close()
	rt := bridge.NewRuntime(dynamicCatalog(t, bridge.ToolsDynamic, up))
	search := func(q string) *bridge.Outcome {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"query": q})
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: "search_operations", Args: args})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("w%d", i))
	}
	for _, tc := range []struct{ q, want string }{
		{strings.Repeat("zq ", 400), "at most 1024 characters"},
		{strings.Join(many, " "), "40 distinct words, at most 32"},
	} {
		out := search(tc.q)
		if out.Kind != bridge.BadArguments || !strings.Contains(textOf(t, out.Result), tc.want) {
			t.Errorf("query of %d bytes: %v %q; want bad_arguments %q", len(tc.q), out.Kind, textOf(t, out.Result), tc.want)
		}
	}
	if out := search(strings.Repeat("pet ", 250)); out.Kind != bridge.OK || !strings.Contains(textOf(t, out.Result), "Pet") {
		t.Errorf("a repeated word: %v %s", out.Kind, textOf(t, out.Result))
	}
}

// searchPage runs search_operations with args and decodes its page.
func searchPage(t *testing.T, rt *bridge.Runtime, args string) (page struct {
	Results    []struct{ Name string }
	Total      int
	NextCursor string
}) {
	t.Helper()
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "search_operations", Args: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	if out.Kind != bridge.OK {
		t.Fatalf("%s: %v %s", args, out.Kind, textOf(t, out.Result))
	}
	if err := json.Unmarshal([]byte(textOf(t, out.Result)), &page); err != nil {
		t.Fatal(err)
	}
	return page
}

// TestSearchCursorPastEnd: a cursor past the results, however large, gives
// an empty page and no nextCursor, never a negative one (offset+limit
// overflowed) that the tool then refuses as not its own.
func TestSearchCursorPastEnd(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	defer up.Close()
	rt := bridge.NewRuntime(dynamicCatalog(t, bridge.ToolsDynamic, up))
	key, _, _ := strings.Cut(searchPage(t, rt, `{"query":"pet","limit":1}`).NextCursor, ".")
	for _, off := range []string{"9223372036854775807", "9223372036854775800", "1000"} {
		cur := key + "." + off
		p := searchPage(t, rt, `{"query":"pet","limit":50,"cursor":"`+cur+`"}`)
		if len(p.Results) != 0 || p.NextCursor != "" || p.Total == 0 {
			t.Errorf("cursor %s: %d results, total %d, nextCursor %q; want none and no cursor", cur, len(p.Results), p.Total, p.NextCursor)
		}
	}
}

// TestSearchLimitAsFloat: a limit written 1.0 or 1e0 is an integer to JSON
// Schema, so validation accepts it; the page must then hold 1 result, not
// the default 10.
func TestSearchLimitAsFloat(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	defer up.Close()
	rt := bridge.NewRuntime(dynamicCatalog(t, bridge.ToolsDynamic, up))
	for _, limit := range []string{"1", "1.0", "1e0", `"1"`} {
		p := searchPage(t, rt, `{"query":"pet","limit":`+limit+`}`)
		if len(p.Results) != 1 || !strings.HasSuffix(p.NextCursor, ".1") {
			t.Errorf("limit %s: %d results, nextCursor %q; want 1 and one for offset 1", limit, len(p.Results), p.NextCursor)
		}
	}
}

// TestCallOperationRefusalCounted: a call_operation whose own arguments name
// no operation (an unknown name, a built-in, malformed arguments) still goes
// through the middleware chain, as call_operation, so that metrics and the
// usage record count it like any other refused call; the upstream is not
// called.
func TestCallOperationRefusalCounted(t *testing.T) {
	var hits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer up.Close()
	type seenCall struct {
		tool string
		kind bridge.ErrorKind
	}
	var seen []seenCall
	mw := func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			out, err := next.Invoke(ctx, c)
			if out != nil {
				seen = append(seen, seenCall{c.Tool, out.Kind})
			}
			return out, err
		})
	}
	rt := bridge.NewRuntime(dynamicCatalog(t, bridge.ToolsDynamic, up), mw)
	for _, args := range []string{`{"name":"nope"}`, `{"name":"ping"}`, `{"name":"getPetById","extra":1}`, `{"arguments":{}}`} {
		seen = nil
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: "call_operation", Args: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Kind != bridge.BadArguments || !out.Result.IsError {
			t.Errorf("%s: %v; want bad_arguments", args, out.Kind)
		}
		if diff := cmp.Diff([]seenCall{{"call_operation", bridge.BadArguments}}, seen, cmp.AllowUnexported(seenCall{})); diff != "" {
			t.Errorf("%s: the middleware saw (-want +got):\n%s", args, diff)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("upstream called %d times", hits.Load())
	}
}

// TestSearchCursorStale: a cursor belongs to the operations it paged
// through. After a reload changes them, the next page would silently skip
// or repeat results: the tool refuses the cursor instead, saying why. A
// reload to the same operations keeps it valid.
func TestSearchCursorStale(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	defer up.Close()
	res, err := specloader.Load(t.Context(), "../testdata/specs/petstore.3.0.yaml", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	catalog := func(ops []whitelist.Operation) *bridge.Catalog {
		c, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Tools: bridge.ToolsDynamic})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	rt := bridge.NewRuntime(catalog(ops))
	first := searchPage(t, rt, `{"query":"","limit":2}`)
	if first.NextCursor == "" {
		t.Fatal("no second page")
	}
	next := `{"query":"","limit":2,"cursor":"` + first.NextCursor + `"}`
	rt.Swap(catalog(ops)) // the same operations: the cursor holds
	second := searchPage(t, rt, next)
	if len(second.Results) != 2 || second.Results[0].Name == first.Results[0].Name {
		t.Errorf("the second page after a reload to the same operations: %+v", second.Results)
	}
	rt.Swap(catalog(ops[1:])) // one operation fewer: the pages shift
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "search_operations", Args: json.RawMessage(next)})
	if err != nil {
		t.Fatal(err)
	}
	if text := textOf(t, out.Result); !out.Result.IsError || !strings.Contains(text, "cursor") || !strings.Contains(text, "changed") {
		t.Errorf("a cursor from before the operations changed: isError=%v %s; want it refused, saying why", out.Result.IsError, text)
	}
}

// TestCallOperationExactNames: call_operation's arguments are read as its
// input schema says, "name" and "arguments" exactly and once. encoding/json
// took "NAME" for "name" (and "Arguments" for "arguments"), the later one
// winning, so a call that the host showed for approval as
// {"name":"getPetById",...} deleted a pet: JavaScript and Python read
// "NAME" as a key of its own. Such calls are refused; the upstream is not
// called.
func TestCallOperationExactNames(t *testing.T) {
	var got atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Method + " " + r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":1,"name":"rex","photoUrls":[]}`)
	}))
	defer up.Close()
	rt := bridge.NewRuntime(dynamicCatalog(t, bridge.ToolsDynamic, up))
	for _, tc := range []struct{ args, want string }{
		{`{"name":"getPetById","arguments":{"petId":1},"NAME":"deletePet"}`, `unknown field "NAME" (names are case-sensitive: "name")`},
		{`{"Name":"deletePet","arguments":{"petId":1}}`, `unknown field "Name"`},
		{`{"name":"getPetById","name":"deletePet","arguments":{"petId":1}}`, `field "name" given twice`},
		{`{"name":"getPetById","arguments":{"petId":1},"ARGUMENTS":{"petId":2}}`, `unknown field "ARGUMENTS"`},
		{`{"name":7}`, `"name" is a number`},
		{`{"name":""}`, `"name" is empty`},
		{`[1]`, `got an array, not an object`},
		{`{"arguments":{}}`, `want {"name": string, "arguments": object}`},
	} {
		got.Store("")
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: "call_operation", Args: json.RawMessage(tc.args)})
		if err != nil {
			t.Fatal(err)
		}
		if text := textOf(t, out.Result); out.Kind != bridge.BadArguments || !strings.Contains(text, tc.want) || got.Load() != "" {
			t.Errorf("%s: %v %q, upstream saw %q; want bad_arguments saying %s, no upstream call", tc.args, out.Kind, text, got.Load(), tc.want)
		}
	}
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "call_operation", Args: json.RawMessage(`{"name":"getPetById","arguments":{"petId":1}}`)})
	if err != nil || out.Result.IsError || got.Load() != "GET /pet/1" {
		t.Errorf("a well-formed call: %v %v, upstream saw %q", err, out.Result, got.Load())
	}
}
