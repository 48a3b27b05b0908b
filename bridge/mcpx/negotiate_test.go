package mcpx_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/transport"
)

// stdioPeer is a raw JSON-RPC client of transport.ServeStdio over pipes.
type stdioPeer struct {
	t    *testing.T
	in   io.WriteCloser
	msgs chan map[string]any
}

func serveStdioPeer(t *testing.T, s *mcpx.Server) *stdioPeer {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = transport.ServeStdio(ctx, s.MCP(), serverIn, serverOut)
	}()
	p := &stdioPeer{t: t, in: clientOut, msgs: make(chan map[string]any, 64)}
	go func() {
		sc := bufio.NewScanner(clientIn)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("stdout line is not JSON: %q", sc.Text())
				continue
			}
			p.msgs <- m
		}
	}()
	t.Cleanup(func() {
		cancel()
		clientOut.Close()
		clientIn.Close()
		<-done
	})
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// next is the next message written, or nil after wait.
func (p *stdioPeer) next(wait time.Duration) map[string]any {
	select {
	case m := <-p.msgs:
		return m
	case <-time.After(wait):
		return nil
	}
}

// TestInitializeUnknownVersionServedAsNegotiated: a session whose
// initialize asked for a revision go-sdk cannot speak through the handshake
// (2026-07-28, a future or a garbage version) negotiates 2025-11-25 and is
// then served as a 2025-11-25 session: it is told of a reload
// (notifications/tools/list_changed; go-sdk left it out, as a 2026-07-28
// session that must subscribe first), its results carry no 2026-07-28
// resultType, and one asking for an unknown older-looking version gets the
// output schema and structuredContent a 2025-11-25 session gets.
func TestInitializeUnknownVersionServedAsNegotiated(t *testing.T) {
	const answer = `{"id":7,"name":"rex"}`
	up, ops := shapeUpstream(t, answer)
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	other := catalog(t, spec(op{"alpha", "Alpha"}), newUpstream(t), nil)
	for _, asked := range []string{"2026-07-28", "2099-01-01", "garbage", "", "2025-04-01", "1.0"} {
		t.Run(fmt.Sprintf("%q", asked), func(t *testing.T) {
			rt := bridge.NewRuntime(cat)
			p := serveStdioPeer(t, mcpx.New(rt, mcpx.Options{Version: "test"}))
			p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`, asked))
			init := p.next(5 * time.Second)
			res, _ := init["result"].(map[string]any)
			if got := res["protocolVersion"]; got != "2025-11-25" {
				t.Fatalf("initialize answered %v; want protocolVersion 2025-11-25", init)
			}
			p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

			p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
			list := p.next(5 * time.Second)
			hasSchema := false
			tools, _ := list["result"].(map[string]any)["tools"].([]any)
			for _, tool := range tools {
				if m := tool.(map[string]any); m["name"] == "typed" {
					hasSchema = m["outputSchema"] != nil
				}
			}
			if !hasSchema {
				t.Errorf("tools/list lists typed without outputSchema on a 2025-11-25 session")
			}

			p.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"typed","arguments":{}}}`)
			call := p.next(5 * time.Second)
			cres, _ := call["result"].(map[string]any)
			if cres["structuredContent"] == nil {
				t.Errorf("tools/call result %v has no structuredContent on a 2025-11-25 session", call)
			}
			if rt, ok := cres["resultType"]; ok {
				t.Errorf("tools/call result carries resultType %v, a 2026-07-28 field, on a 2025-11-25 session", rt)
			}

			rt.Swap(other)
			n := p.next(5 * time.Second)
			if n == nil || n["method"] != "notifications/tools/list_changed" {
				t.Errorf("after a swap got %v; want notifications/tools/list_changed", n)
			}
		})
	}
}
