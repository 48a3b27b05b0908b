package bridge_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// rawUpstream serves each connection the bytes of answer after reading a
// request's head, then holds the connection open for hold.
func rawUpstream(t *testing.T, answer string, hold time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				if _, err := http.ReadRequest(r); err != nil {
					return
				}
				conn.Write([]byte(answer))
				conn.SetReadDeadline(time.Now().Add(hold))
				r.ReadByte() // until the bridge closes, or hold passes
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestOddStatus: an upstream answering 101 Switching Protocols (whose body
// is the raw connection, beyond the call's deadline) or a status HTTP does
// not define gets an error result at once, not a success built from
// whatever it streams; the call does not wait for the connection.
func TestOddStatus(t *testing.T) {
	for _, tc := range []struct{ name, answer, want string }{
		{"101", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n{\"id\":1}", "101 Switching Protocols"},
		{"999", "HTTP/1.1 999 Odd\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{\"id\":1}", "status 999, which HTTP does not define"},
		{"000", "HTTP/1.1 000 Zero\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{\"id\":1}", "status 0, which HTTP does not define"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := rawUpstream(t, tc.answer, 30*time.Second)
			rt := bridge.NewRuntime(specCatalog(t, credParamSpec, bridge.Options{BaseURL: url, Timeout: 10 * time.Second}))
			start := time.Now()
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: "echo", Args: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Errorf("the call took %v", took)
			}
			text := out.Result.Content[0].(*mcp.TextContent).Text
			if !out.Result.IsError || !strings.Contains(text, tc.want) || out.Result.StructuredContent != nil {
				t.Errorf("isError %v, %q; want an error result saying %q", out.Result.IsError, text, tc.want)
			}
		})
	}
}
