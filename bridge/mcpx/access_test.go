package mcpx_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/transport"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

const accessSpec = `openapi: 3.0.3
info: {title: access, version: "1"}
paths:
  /open:
    get: {operationId: open, responses: {"200": {description: ok}}}
  /admin:
    get: {operationId: admin, responses: {"200": {description: ok}}}
`

// TestAccessControl lists and calls as two API keys: the tool whose
// whitelist entry allows only the first key is invisible to the second,
// and calling it is denied without reaching the upstream.
func TestAccessControl(t *testing.T) {
	up := newUpstream(t)
	res, err := specloader.LoadData(t.Context(), []byte(accessSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := whitelist.Parse(strings.NewReader(`tools:
  - operationId: open
  - operationId: admin
    allow: {keys: ["api-key:0"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := policy.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpx.New(bridge.NewRuntime(cat, bridge.Access()), mcpx.Options{}).MCP()
	opts := transport.HTTPOptions{APIKeys: []string{"k-admin", "k-user"}}
	list := func(cs *mcp.ClientSession) []string {
		t.Helper()
		lt, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range lt.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	admin, err := connectHTTP(t, srv, opts, "Bearer k-admin")
	if err != nil {
		t.Fatal(err)
	}
	user, err := connectHTTP(t, srv, opts, "Bearer k-user")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"admin", "open", "ping"}, list(admin)); diff != "" {
		t.Errorf("admin's tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"open", "ping"}, list(user)); diff != "" {
		t.Errorf("user's tools (-want +got):\n%s", diff)
	}
	r, err := admin.CallTool(t.Context(), &mcp.CallToolParams{Name: "admin"})
	if err != nil || r.IsError {
		t.Fatalf("admin calling admin: %v %+v", err, r)
	}
	// A tool hidden from the caller is as unknown as a missing one.
	_, hidden := user.CallTool(t.Context(), &mcp.CallToolParams{Name: "admin"})
	_, missing := user.CallTool(t.Context(), &mcp.CallToolParams{Name: "nosuch"})
	if hidden == nil || missing == nil || strings.ReplaceAll(hidden.Error(), "admin", "X") != strings.ReplaceAll(missing.Error(), "nosuch", "X") {
		t.Errorf("user calling admin: %v; calling a missing tool: %v; want the same answer", hidden, missing)
	}
	if r, err := user.CallTool(t.Context(), &mcp.CallToolParams{Name: "open"}); err != nil || r.IsError {
		t.Errorf("user calling open: %v %+v", err, r)
	}
}

// TestAccessTagRefined: a tag entry's access list stays on an operation
// that an entry naming it refines without an allow of its own. The
// refining entry used to replace the tag's settings whole, so giving the
// admin tag's DELETE a timeout opened it to every caller, and the
// annotations, pinning and answer shaping of the tag went with it.
func TestAccessTagRefined(t *testing.T) {
	up := newUpstream(t)
	res, err := specloader.LoadData(t.Context(), []byte(`openapi: 3.0.3
info: {title: access, version: "1"}
paths:
  /open:
    get: {operationId: open, responses: {"200": {description: ok}}}
  /admin:
    get: {operationId: adminGet, tags: [admin], responses: {"200": {description: ok}}}
    delete: {operationId: adminDelete, tags: [admin], responses: {"200": {description: ok}}}
`), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := whitelist.Parse(strings.NewReader(`tools:
  - operationId: open
  - tag: admin
    allow: {keys: ["api-key:0"]}
    annotations: {openWorldHint: false}
  - operationId: adminDelete
    timeout: 5s
    annotations: {idempotentHint: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := policy.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpx.New(bridge.NewRuntime(cat, bridge.Access()), mcpx.Options{}).MCP()
	opts := transport.HTTPOptions{APIKeys: []string{"k-admin", "k-user"}}
	admin, err := connectHTTP(t, srv, opts, "Bearer k-admin")
	if err != nil {
		t.Fatal(err)
	}
	user, err := connectHTTP(t, srv, opts, "Bearer k-user")
	if err != nil {
		t.Fatal(err)
	}
	lt, err := user.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if diff := cmp.Diff([]string{"open", "ping"}, names); diff != "" {
		t.Errorf("user's tools (-want +got):\n%s", diff)
	}
	if _, err := user.CallTool(t.Context(), &mcp.CallToolParams{Name: "adminDelete"}); err == nil {
		t.Errorf("user called adminDelete, which the admin tag's access list does not grant")
	}
	r, err := admin.CallTool(t.Context(), &mcp.CallToolParams{Name: "adminDelete"})
	if err != nil || r.IsError {
		t.Fatalf("admin calling adminDelete: %v %+v", err, r)
	}
	lt, err = admin.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name != "adminDelete" {
			continue
		}
		// The refining entry's hint and the tag's, each where set.
		if a := tl.Annotations; a == nil || a.OpenWorldHint == nil || *a.OpenWorldHint || a.IdempotentHint {
			t.Errorf("adminDelete's annotations %+v; want openWorldHint false (the tag's) and idempotentHint false (its own)", a)
		}
	}
}
