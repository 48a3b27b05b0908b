package main

import (
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStderrClosedKeepsServing: a host that stops reading the bridge's
// stderr (closes its end of the pipe) loses the logs, not the server. Go
// kills a program that writes to a broken pipe on fd 2 with SIGPIPE unless
// it handles the signal; the bridge logs a usage record per call, so the
// next call killed it.
func TestStderrClosedKeepsServing(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cs, _ := startBridgeStderr(t, w, "demo")
	r.Close()
	for i := range 3 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("call %d after stderr was closed: %v", i, err)
		}
		if res.IsError {
			t.Fatalf("call %d: error result", i)
		}
		time.Sleep(150 * time.Millisecond) // the usage records are written within 50 ms
	}
}
