package mcpx_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/transport"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// The tests here check that an access list (whitelist allow) hides its
// tool everywhere the bridge could show it, not only in tools/list: in
// openapi://spec, in search_operations and describe_operation, and in
// resource templates and their completions. "admin" is the first API key,
// the only one the lists name; "user" and "guest" are two others.

const revealSpec = `openapi: 3.0.3
info: {title: reveal, version: "1"}
tags:
  - {name: items}
  - {name: audit, description: the audit trail}
paths:
  /items:
    get:
      operationId: listItems
      summary: List the items
      tags: [items]
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Item"}}
    post:
      operationId: createItem
      summary: Create an item
      tags: [items]
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/NewItemSecret"}
      responses: {"201": {description: created}}
  /items/{itemId}:
    get:
      operationId: getItem
      summary: Show an item
      tags: [items]
      parameters:
        - {name: itemId, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
  /audit/{entryId}:
    get:
      operationId: auditLog
      summary: Show an audit entry
      description: Reads one entry of the audit trail.
      tags: [audit]
      parameters:
        - {name: entryId, in: path, required: true, schema: {type: integer, enum: [1, 2]}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/AuditEntry"}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
  schemas:
    Item:
      type: object
      properties: {id: {type: string}}
    NewItemSecret:
      type: object
      properties: {name: {type: string}}
    AuditEntry:
      type: object
      properties: {detail: {$ref: "#/components/schemas/AuditDetail"}}
    AuditDetail:
      type: object
`

// revealWhitelist hides createItem and auditLog from every key but the
// first; auditLog is also a resource template.
const revealWhitelist = `tools:
  - operationId: listItems
    resource: {uri: "api://items"}
  - operationId: getItem
  - operationId: createItem
    allow: {keys: ["api-key:0"]}
  - operationId: auditLog
    allow: {keys: ["api-key:0"]}
    resource: {uri: "api://audit/{entryId}"}
`

// openWhitelist is revealWhitelist without the hidden operations: what
// the other keys should see.
const openWhitelist = `tools:
  - operationId: listItems
    resource: {uri: "api://items"}
  - operationId: getItem
`

var revealKeys = transport.HTTPOptions{APIKeys: []string{"k-admin", "k-user", "k-guest"}}

// revealCatalog builds revealSpec with whitelist wl in tool mode mode,
// serving openapi://spec.
func revealCatalog(t *testing.T, wl, mode string) *bridge.Catalog {
	t.Helper()
	up := newUpstream(t)
	res, err := specloader.LoadData(t.Context(), []byte(revealSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := whitelist.Parse(strings.NewReader(wl))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := pol.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Tools: mode, Spec: res.Doc})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// revealSessions connects to srv over HTTP as the admin, user and guest
// keys.
func revealSessions(t *testing.T, srv *mcp.Server) (admin, user, guest *mcp.ClientSession) {
	t.Helper()
	var out [3]*mcp.ClientSession
	for i, key := range []string{"k-admin", "k-user", "k-guest"} {
		cs, err := connectHTTP(t, srv, revealKeys, "Bearer "+key)
		if err != nil {
			t.Fatalf("connecting as %s: %v", key, err)
		}
		out[i] = cs
	}
	return out[0], out[1], out[2]
}

// readSpec reads openapi://spec as cs.
func readSpec(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: bridge.SpecURI})
	if err != nil {
		t.Fatalf("reading %s: %v", bridge.SpecURI, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("%s: %d contents, want 1", bridge.SpecURI, len(res.Contents))
	}
	return res.Contents[0].Text
}

// specOutline is what a spec document shows of the API: each path's
// methods, the component names by section, and the tag names.
type specOutline struct {
	Paths      map[string][]string
	Components map[string][]string
	Tags       []string
}

func outline(t *testing.T, text string) specOutline {
	t.Helper()
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components map[string]map[string]json.RawMessage `json:"components"`
		Tags       []struct{ Name string }               `json:"tags"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", bridge.SpecURI, err, text)
	}
	out := specOutline{Paths: map[string][]string{}, Components: map[string][]string{}}
	for p, item := range doc.Paths {
		out.Paths[p] = slices.Sorted(maps.Keys(item))
	}
	for section, entries := range doc.Components {
		out.Components[section] = slices.Sorted(maps.Keys(entries))
	}
	for _, tag := range doc.Tags {
		out.Tags = append(out.Tags, tag.Name)
	}
	return out
}

// TestAccessListsNarrowSpec: openapi://spec shows each caller only the
// operations it may call. The user's document loses createItem (its path
// item keeps GET), auditLog's whole path item, the schemas only they
// reach (transitively), and the audit tag; the security schemes stay. The
// admin, who may call everything, reads the catalog's document unchanged,
// and nobody's reading is made afresh: the user and the guest, whose lists
// allow the same operations, share one kept document.
func TestAccessListsNarrowSpec(t *testing.T) {
	cat := revealCatalog(t, revealWhitelist, bridge.ToolsAll)
	s := mcpx.New(bridge.NewRuntime(cat, bridge.Access()), mcpx.Options{})
	admin, user, guest := revealSessions(t, s.MCP())

	full := readSpec(t, admin)
	if full != string(cat.Spec()) {
		t.Errorf("the admin's document differs from the catalog's:\n got %s\nwant %s", full, cat.Spec())
	}
	want := specOutline{
		Paths:      map[string][]string{"/items": {"get", "post"}, "/items/{itemId}": {"get"}, "/audit/{entryId}": {"get"}},
		Components: map[string][]string{"schemas": {"AuditDetail", "AuditEntry", "Item", "NewItemSecret"}, "securitySchemes": {"key"}},
		Tags:       []string{"items", "audit"},
	}
	if diff := cmp.Diff(want, outline(t, full)); diff != "" {
		t.Errorf("the admin's document (-want +got):\n%s", diff)
	}

	narrow := readSpec(t, user)
	want = specOutline{
		Paths:      map[string][]string{"/items": {"get"}, "/items/{itemId}": {"get"}},
		Components: map[string][]string{"schemas": {"Item"}, "securitySchemes": {"key"}},
		Tags:       []string{"items"},
	}
	if diff := cmp.Diff(want, outline(t, narrow)); diff != "" {
		t.Errorf("the user's document (-want +got):\n%s", diff)
	}
	for _, hidden := range []string{"createItem", "auditLog", "audit", "NewItemSecret"} {
		if strings.Contains(narrow, hidden) {
			t.Errorf("the user's document names %q:\n%s", hidden, narrow)
		}
	}
	// What the user reads is what a whitelist without the hidden
	// operations serves everybody.
	open := revealCatalog(t, openWhitelist, bridge.ToolsAll)
	if !jsonEqual(t, narrow, string(open.Spec())) {
		t.Errorf("the user's document differs from the one without the hidden operations:\n got %s\nwant %s", narrow, open.Spec())
	}

	if got := readSpec(t, guest); got != narrow {
		t.Errorf("the guest's document differs from the user's:\n got %s\nwant %s", got, narrow)
	}
	for _, cs := range []*mcp.ClientSession{admin, user, guest} {
		readSpec(t, cs)
	}
	if n := s.SpecViews(); n != 1 {
		t.Errorf("%d reduced documents kept after reads by the admin, the user and the guest; want 1 (theirs, shared)", n)
	}
	key, all := cat.SpecAccess(&bridge.Identity{ID: "api-key:2"})
	if all {
		t.Fatal("SpecAccess: the guest may call every operation")
	}
	if kept := s.KeptSpecView(cat, key); string(kept) != narrow {
		t.Errorf("kept for the guest's operations: %q; want the document served", kept)
	}
}

// TestNoAccessListsSpecUnchanged: without access lists every caller reads
// the catalog's document, and nothing is reduced or kept per caller.
func TestNoAccessListsSpecUnchanged(t *testing.T) {
	cat := revealCatalog(t, openWhitelist, bridge.ToolsAll)
	s := mcpx.New(bridge.NewRuntime(cat, bridge.Access()), mcpx.Options{})
	_, user, _ := revealSessions(t, s.MCP())
	if got := readSpec(t, user); got != string(cat.Spec()) {
		t.Errorf("document served:\n got %s\nwant %s", got, cat.Spec())
	}
	if n := s.SpecViews(); n != 0 {
		t.Errorf("%d reduced documents kept without access lists; want 0", n)
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal([]byte(a), &va); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if err := json.Unmarshal([]byte(b), &vb); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return cmp.Equal(va, vb)
}

// callText calls tool as cs and returns the result's JSON encoding (the
// whole result, error flag included) and its first text.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (whole []byte, text string) {
	t.Helper()
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	whole, err = json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Content) > 0 {
		if tc, ok := r.Content[0].(*mcp.TextContent); ok {
			text = tc.Text
		}
	}
	return whole, text
}

// TestAccessListsDynamicMode: in dynamic mode, search_operations and
// describe_operation show a caller only the operations it may call. The
// user's searches answer exactly what a catalog without the hidden
// operations answers (results, totals, ranking), and describing a hidden
// operation answers exactly what describing one that does not exist
// does. The admin finds and describes everything.
func TestAccessListsDynamicMode(t *testing.T) {
	cat := revealCatalog(t, revealWhitelist, bridge.ToolsDynamic)
	admin, user, _ := revealSessions(t, mcpx.New(bridge.NewRuntime(cat, bridge.Access()), mcpx.Options{}).MCP())
	open := connectInMemory(t, mcpx.New(bridge.NewRuntime(revealCatalog(t, openWhitelist, bridge.ToolsDynamic)), mcpx.Options{}).MCP(), nil)

	names := func(text string) []string {
		t.Helper()
		var found struct{ Results []struct{ Name string } }
		if err := json.Unmarshal([]byte(text), &found); err != nil {
			t.Fatalf("search result %q: %v", text, err)
		}
		var out []string
		for _, r := range found.Results {
			out = append(out, r.Name)
		}
		slices.Sort(out)
		return out
	}
	searches := []map[string]any{
		{"query": ""},
		{"query": "item"},
		{"query": "show"},
		{"query": "audit trail entry"},
		{"query": "create"},
		{"query": "", "tag": "audit"},
		{"query": "items", "limit": 1},
	}
	for _, args := range searches {
		_, got := callText(t, user, bridge.SearchToolName, args)
		_, want := callText(t, open, bridge.SearchToolName, args)
		if got != want {
			t.Errorf("the user's search %v:\n got %s\nwant %s (as if the hidden operations did not exist)", args, got, want)
		}
	}
	// The next page too, the cursor included: it says nothing of the
	// hidden operations either.
	nextPage := func(cs *mcp.ClientSession) string {
		t.Helper()
		_, first := callText(t, cs, bridge.SearchToolName, map[string]any{"query": "items", "limit": 1})
		var p struct{ NextCursor string }
		if err := json.Unmarshal([]byte(first), &p); err != nil || p.NextCursor == "" {
			t.Fatalf("first page %s: no nextCursor (%v)", first, err)
		}
		_, text := callText(t, cs, bridge.SearchToolName, map[string]any{"query": "items", "limit": 1, "cursor": p.NextCursor})
		return text
	}
	if got, want := nextPage(user), nextPage(open); got != want {
		t.Errorf("the user's second page:\n got %s\nwant %s (as if the hidden operations did not exist)", got, want)
	}
	if _, text := callText(t, admin, bridge.SearchToolName, map[string]any{"query": ""}); !slices.Equal(names(text), []string{"auditLog", "createItem", "getItem", "listItems"}) {
		t.Errorf("the admin's search finds %q; want every operation", names(text))
	}

	for _, hidden := range []string{"auditLog", "createItem"} {
		got, _ := callText(t, user, bridge.DescribeToolName, map[string]any{"name": hidden})
		unknown, _ := callText(t, user, bridge.DescribeToolName, map[string]any{"name": "zzz" + hidden[3:]})
		want := bytes.ReplaceAll(unknown, []byte("zzz"+hidden[3:]), []byte(hidden))
		if !bytes.Equal(got, want) {
			t.Errorf("the user describing hidden %s:\n got %s\nwant %s (as for an unknown operation)", hidden, got, want)
		}
		if _, text := callText(t, admin, bridge.DescribeToolName, map[string]any{"name": hidden}); !strings.Contains(text, `"inputSchema"`) {
			t.Errorf("the admin describing %s: %s; want its schema", hidden, text)
		}
	}
	// call_operation too: a hidden operation is answered as an unknown one.
	for _, hidden := range []string{"auditLog", "createItem"} {
		got, _ := callText(t, user, bridge.CallToolName, map[string]any{"name": hidden, "arguments": map[string]any{}})
		unknown, _ := callText(t, user, bridge.CallToolName, map[string]any{"name": "zzz" + hidden[3:], "arguments": map[string]any{}})
		want := bytes.ReplaceAll(unknown, []byte("zzz"+hidden[3:]), []byte(hidden))
		if !bytes.Equal(got, want) {
			t.Errorf("the user calling hidden %s:\n got %s\nwant %s (as for an unknown operation)", hidden, got, want)
		}
	}
	// The search tool's description counts no operations when some are hidden.
	lt, err := user.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name == bridge.SearchToolName && strings.ContainsAny(tl.Description, "0123456789") {
			t.Errorf("the search tool's description tells a count: %q", tl.Description)
		}
	}
	if _, text := callText(t, user, bridge.DescribeToolName, map[string]any{"name": "getItem"}); !strings.Contains(text, `"inputSchema"`) {
		t.Errorf("the user describing getItem: %s; want its schema", text)
	}
}

// TestAccessListsHideTemplates: a resource template whose tool is hidden
// from a caller is, to that caller, a template that does not exist:
// completion offers nothing (not the parameter's enum), a read with a bad
// variable is "resource not found" (not invalid params), and the
// completions capability is not declared when no template is left for it.
func TestAccessListsHideTemplates(t *testing.T) {
	cat := revealCatalog(t, revealWhitelist, bridge.ToolsAll)
	admin, user, _ := revealSessions(t, mcpx.New(bridge.NewRuntime(cat, bridge.Access()), mcpx.Options{}).MCP())

	ref := &mcp.CompleteReference{Type: "ref/resource", URI: "api://audit/{entryId}"}
	complete := func(cs *mcp.ClientSession) []string {
		t.Helper()
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "entryId"}})
		if err != nil {
			t.Fatalf("complete: %v", err)
		}
		return res.Completion.Values
	}
	if diff := cmp.Diff([]string{"1", "2"}, complete(admin)); diff != "" {
		t.Errorf("the admin's completions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{}, complete(user)); diff != "" {
		t.Errorf("the user's completions of a hidden template (-want +got):\n%s", diff)
	}

	readErr := func(cs *mcp.ClientSession, uri string) *jsonrpc.Error {
		t.Helper()
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: uri})
		var jerr *jsonrpc.Error
		if !errors.As(err, &jerr) {
			t.Fatalf("read %s: err = %v, want a JSON-RPC error", uri, err)
		}
		return jerr
	}
	if got := readErr(admin, "api://audit/abc"); got.Code != jsonrpc.CodeInvalidParams || !strings.Contains(got.Message, "abc") {
		t.Errorf("the admin reading api://audit/abc: %d %q, want invalid params naming the value", got.Code, got.Message)
	}
	const nowhere = "api://nothing/here"
	unknown := readErr(user, nowhere)
	for _, uri := range []string{"api://audit/abc", "api://audit/1"} {
		got := readErr(user, uri)
		want := &jsonrpc.Error{Code: unknown.Code, Message: unknown.Message, Data: bytes.ReplaceAll(unknown.Data, []byte(nowhere), []byte(uri))}
		if got.Code != want.Code || got.Message != want.Message || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("the user reading hidden %s: %d %q %s; want %d %q %s, as for an unknown URI", uri, got.Code, got.Message, got.Data, want.Code, want.Message, want.Data)
		}
	}

	if admin.InitializeResult().Capabilities.Completions == nil {
		t.Error("completions not declared to the admin, who may read a template")
	}
	if c := user.InitializeResult().Capabilities.Completions; c != nil {
		t.Errorf("completions declared to the user, who may read no template: %+v", c)
	}
}

// TestAccessListsCachePrivate: with access lists, what a caller is listed
// and reads depends on who it is, so the results that carry a cache scope
// say "private" (only this caller's client may cache them), never "public"
// (any intermediary may serve them to others) nor "" (no valid scope);
// without access lists they stay "public".
func TestAccessListsCachePrivate(t *testing.T) {
	scopes := func(cs *mcp.ClientSession) map[string]string {
		t.Helper()
		ctx := t.Context()
		out := map[string]string{}
		if r, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		} else {
			out["tools/list"] = r.CacheScope
		}
		if r, err := cs.ListResources(ctx, nil); err != nil {
			t.Fatal(err)
		} else {
			out["resources/list"] = r.CacheScope
		}
		if r, err := cs.ListResourceTemplates(ctx, nil); err != nil {
			t.Fatal(err)
		} else {
			out["resources/templates/list"] = r.CacheScope
		}
		if r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: bridge.SpecURI}); err != nil {
			t.Fatal(err)
		} else {
			out["resources/read"] = r.CacheScope
		}
		return out
	}
	all := func(scope string) map[string]string {
		return map[string]string{"tools/list": scope, "resources/list": scope, "resources/templates/list": scope, "resources/read": scope}
	}
	for _, tc := range []struct {
		wl, want string
	}{{revealWhitelist, "private"}, {openWhitelist, "public"}} {
		cat := revealCatalog(t, tc.wl, bridge.ToolsAll)
		admin, user, _ := revealSessions(t, mcpx.New(bridge.NewRuntime(cat, bridge.Access()), mcpx.Options{}).MCP())
		for name, cs := range map[string]*mcp.ClientSession{"admin": admin, "user": user} {
			if diff := cmp.Diff(all(tc.want), scopes(cs)); diff != "" {
				t.Errorf("%s, access lists %v: cache scopes (-want +got):\n%s", name, tc.want == "private", diff)
			}
		}
	}
}
