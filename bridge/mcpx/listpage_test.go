package mcpx_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
)

// TestToolsListPaged: a list larger than a page (8 MiB; 4 KiB here) goes
// in pages of at most that size, each with the cursor of the next, and
// together they are the whole list, in order, once; a cursor from another
// list is refused; a list that fits goes whole, without a cursor.
func TestToolsListPaged(t *testing.T) {
	const limit = 4 << 10
	defer mcpx.SetMaxListPage(limit)()
	var ops []op
	for i := range 60 {
		ops = append(ops, op{fmt.Sprintf("op%02d", i), "Operation " + strings.Repeat("x", 40*(i%5))})
	}
	up := newUpstream(t)
	cat := catalog(t, spec(ops...), up, nil)
	cs := connectInMemory(t, mcpx.New(bridge.NewRuntime(cat), mcpx.Options{}).MCP(), nil)

	var names []string
	cursor, pages := "", 0
	for {
		res, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		pages++
		b, _ := json.Marshal(res)
		if len(b) > limit {
			t.Errorf("page %d is %d bytes, over %d", pages, len(b), limit)
		}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if cursor = res.NextCursor; cursor == "" {
			break
		}
		if pages > 100 {
			t.Fatal("no end to the pages")
		}
	}
	if pages < 3 {
		t.Errorf("%d pages; want the list split", pages)
	}
	var want []string
	for _, d := range cat.Defs() {
		want = append(want, d.Name)
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("pages gave %v\nwant %v", names, want)
	}
	// go-sdk's client iterator follows the cursors too.
	n := 0
	for _, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != len(want) {
		t.Errorf("the iterator saw %d tools, want %d", n, len(want))
	}
	if _, err := cs.ListTools(t.Context(), &mcp.ListToolsParams{Cursor: "mcpbridge-page:3:stale"}); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("a stale cursor: %v", err)
	}

	// A list that fits goes whole.
	small := catalog(t, spec(ops[:3]...), up, nil)
	cs2 := connectInMemory(t, mcpx.New(bridge.NewRuntime(small), mcpx.Options{}).MCP(), nil)
	res, err := cs2.ListTools(t.Context(), nil)
	if err != nil || res.NextCursor != "" || len(res.Tools) != len(small.Defs()) {
		t.Fatalf("small list: %v, cursor %q, %d tools", err, res.NextCursor, len(res.Tools))
	}
}
