package mcpx_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
)

// TestListDuringSwapIsWhole checks that a tools/list answered while a swap
// is being applied lists the old tool set or the new one, never a mix of
// both (go-sdk adds and removes tools one at a time).
func TestListDuringSwapIsWhole(t *testing.T) {
	up := newUpstream(t)
	const n = 300
	ops := func(prefix string) []op {
		var out []op
		for i := range n {
			out = append(out, op{fmt.Sprintf("%s%d", prefix, i), "S"})
		}
		return out
	}
	cats := []*bridge.Catalog{catalog(t, spec(ops("p")...), up, nil), catalog(t, spec(ops("q")...), up, nil)}
	rt := bridge.NewRuntime(cats[0])
	s := mcpx.New(rt, mcpx.Options{Version: "test"})
	cs := connectInMemory(t, s.MCP(), nil)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var mixed []string
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Error(err)
					return
				}
				var np, nq int
				for _, tool := range res.Tools {
					switch {
					case tool.Name == "ping":
					case strings.HasPrefix(tool.Name, "p"):
						np++
					case strings.HasPrefix(tool.Name, "q"):
						nq++
					}
				}
				if !(np == n && nq == 0) && !(nq == n && np == 0) {
					mu.Lock()
					mixed = append(mixed, fmt.Sprintf("p=%d q=%d", np, nq))
					mu.Unlock()
				}
			}
		}()
	}
	for i := 1; i <= 20; i++ {
		rt.Swap(cats[i%2])
	}
	close(stop)
	wg.Wait()
	if len(mixed) > 0 {
		t.Errorf("%d lists mixed the old and the new tools, e.g. %s", len(mixed), mixed[0])
	}
}

// TestCallOfToolRemovedMidSwapIsInvalidParams checks that a call reaching
// the handler of a tool the swap has just removed from the catalog, before
// the server's registry is updated, gets the protocol error an unknown
// tool gets (-32602), not a JSON-RPC error with code 0.
func TestCallOfToolRemovedMidSwapIsInvalidParams(t *testing.T) {
	up := newUpstream(t)
	rt := bridge.NewRuntime(catalog(t, spec(op{"gone", "S"}), up, nil))
	var cs *mcp.ClientSession
	var callErr error
	rt.OnSwap(func(_, _ *bridge.Catalog) { // runs before mcpx updates its tools
		_, callErr = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "gone", Arguments: map[string]any{}})
	})
	s := mcpx.New(rt, mcpx.Options{Version: "test"})
	cs = connectInMemory(t, s.MCP(), nil)
	rt.Swap(catalog(t, spec(op{"other", "S"}), up, nil))
	var werr *jsonrpc.Error
	if !errors.As(callErr, &werr) {
		t.Fatalf("call of a tool removed mid-swap: error %v (%T), want a JSON-RPC error", callErr, callErr)
	}
	if werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, `unknown tool "gone"`) {
		t.Errorf("call of a tool removed mid-swap: code %d %q, want %d unknown tool", werr.Code, werr.Message, jsonrpc.CodeInvalidParams)
	}
}
