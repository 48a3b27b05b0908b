package transport_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/transport"
)

// fuzzMaxLine is the stdio line cap FuzzStdio serves with, small enough
// that the fuzzer reaches it.
const fuzzMaxLine = 4096

// fuzzAfter is the id of the ping sent after the fuzzed input.
const fuzzAfter = "zz-fuzz-after"

// FuzzStdio sends an initialize, then arbitrary bytes (malformed JSON,
// batches, deep nesting, lines over the cap, several lines), then a ping.
// The session must survive whatever came in between: ServeStdio returns
// nil at EOF, every byte on stdout is a JSON-RPC message, and the ping is
// answered with a result.
func FuzzStdio(f *testing.F) {
	deep := func(n int) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","pad":` +
			strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`
	}
	for _, seed := range []string{
		``,
		`hello`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"`,
		`{"jsonrpc":"2.0","id":3,"method":"ping"} {"jsonrpc":"2.0","id":4,"method":"ping"}`,
		`42`, `null`, `"str"`, `[]`, `{}`, `[[[[`, `]]]]`, `{"a":`,
		`{"id":5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","result":{}}`,
		`{"jsonrpc":"2.0","id":99,"result":{}}`,
		`{"jsonrpc":"2.0","id":99,"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"no/such/method"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":"notanobject"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1,2]}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		stdioInit,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"init"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		deep(64), deep(2000),
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("[{", 200) + `"}}}`,
		`{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", fuzzMaxLine) + `"}}}`,
		strings.Repeat("x", 3*fuzzMaxLine),
		"\x00\xff\xfe{\"jsonrpc\":\"2.0\"}",
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r",
		"\r\n\r\n\n",
		"{\"jsonrpc\":\"2.0\",\"id\":\"a\u2028b\",\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"\\ud800\",\"method\":\"ping\"}",
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"progressToken":{"x":1}}}}`,
		`{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, lines string) {
		if strings.Contains(lines, fuzzAfter) {
			return // the ping's id must be its own
		}
		s := mcp.NewServer(&mcp.Implementation{Name: "fuzz", Version: "v0"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echoes text"},
			func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
				return nil, echoOut(in), nil
			})
		input := stdioInit + "\n" + lines + "\n" + `{"jsonrpc":"2.0","id":"` + fuzzAfter + `","method":"ping"}` + "\n"
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		var out bytes.Buffer
		err := transport.ServeStdioWithOptions(ctx, s, io.NopCloser(strings.NewReader(input)), nopWC{&out},
			transport.StdioOptions{MaxMessageBytes: fuzzMaxLine, MaxJSONDepth: 16}, nil)
		if err != nil {
			t.Fatalf("ServeStdioWithOptions = %v; want nil (one bad message must not end the session)", err)
		}
		if ctx.Err() != nil {
			t.Fatalf("the session did not end at EOF within 20s")
		}
		answered := false
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			var msgs []json.RawMessage
			if len(line) > 0 && line[0] == '[' {
				if err := json.Unmarshal(line, &msgs); err != nil || len(msgs) == 0 {
					t.Fatalf("stdout line %q is not a JSON-RPC batch", line)
				}
			} else {
				msgs = []json.RawMessage{line}
			}
			for _, m := range msgs {
				var msg struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
					Method  string          `json:"method"`
					Result  json.RawMessage `json:"result"`
					Error   *struct {
						Code    int64  `json:"code"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal(m, &msg); err != nil || msg.JSONRPC != "2.0" {
					t.Fatalf("stdout line %q is not JSON-RPC (%v)", line, err)
				}
				if msg.Method == "" && (len(msg.ID) == 0 || (msg.Result == nil) == (msg.Error == nil)) {
					t.Fatalf("stdout line %q is neither a response nor a request", line)
				}
				if msg.Error != nil && msg.Error.Message == "" {
					t.Errorf("error response %q has no message", line)
				}
				if string(msg.ID) == `"`+fuzzAfter+`"` && msg.Result != nil {
					answered = true
				}
			}
		}
		if !answered {
			t.Fatalf("the ping after %q got no result; stdout:\n%s", lines, out.String())
		}
	})
}

// TestStdioDuplicateID sends a call whose id is that of a call still
// running (FuzzStdio found this): go-sdk drops such a call without an
// answer, so the bridge refuses it itself, and end-of-input does not wait
// for an answer that never comes.
func TestStdioDuplicateID(t *testing.T) {
	g := newGate()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- transport.ServeStdioWithOptions(t.Context(), newMCPServer(g), inR, nopWC{outW}, transport.StdioOptions{}, nil)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(stdioInit)
	lines.Scan()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	<-g.started
	send(`{"jsonrpc":"2.0","id":"dup","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"id":"dup","error":{"code":-32600`) {
		t.Fatalf("duplicate id: got %q; want a -32600 error for it", lines.Text())
	}
	close(g.release)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"id":"dup","result"`) {
		t.Fatalf("first call: got %q; want its result", lines.Text())
	}
	// The id is free again once answered.
	send(`{"jsonrpc":"2.0","id":"dup","method":"ping"}`)
	if !lines.Scan() || !strings.Contains(lines.Text(), `"id":"dup","result"`) {
		t.Fatalf("reused id after the answer: got %q; want a result", lines.Text())
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdioWithOptions = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("end of input did not end the session")
	}
}
