package transport

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSSEExtraNeverLost: a call read from a legacy SSE session always
// carries the caller's RequestExtra. Two POSTs with the same id before
// go-sdk reads the first (or a refused POST reusing the id of one still
// queued) left the other call with none, and a tool handler takes a call
// without one for a local (stdio) one: every tool allowed, no quota. A
// caller whose allow list hides a tool called it so over /sse.
func TestSSEExtraNeverLost(t *testing.T) {
	id, err := jsonrpc.MakeID(float64(7))
	if err != nil {
		t.Fatal(err)
	}
	call := &jsonrpc.Request{ID: id, Method: "tools/call"}
	extra := func() *mcp.RequestExtra {
		return &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: "api-key:1"}}
	}
	for _, tt := range []struct {
		name string
		post func(s *sseSession)
	}{
		{"same id posted twice", func(s *sseSession) {
			s.putExtra(id, extra())
			s.putExtra(id, extra())
		}},
		{"refused POST reusing a queued id", func(s *sseSession) {
			s.putExtra(id, extra())
			s.putExtra(id, extra())
			s.dropExtra(id)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := &sseSession{extras: make(map[jsonrpc.ID]*mcp.RequestExtra)}
			tt.post(s)
			for i := range 2 {
				if got := s.takeExtra(call); got == nil || got.TokenInfo == nil || got.TokenInfo.UserID != "api-key:1" {
					t.Fatalf("read %d: extra %+v; want the caller's", i+1, got)
				}
			}
		})
	}
}
