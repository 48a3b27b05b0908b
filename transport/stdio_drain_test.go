package transport_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/transport"
)

type nopWC struct{ io.Writer }

// eofSignal closes eof the first time its reader reports io.EOF.
type eofSignal struct {
	r    io.Reader
	eof  chan struct{}
	once bool
}

func (e *eofSignal) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF && !e.once {
		e.once = true
		close(e.eof)
	}
	return n, err
}

func (nopWC) Close() error { return nil }

// TestServeStdioAnswersBeforeEOF: a client that writes its requests and
// closes stdin at once still gets every answer, slow calls included.
func TestServeStdioAnswersBeforeEOF(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	release := make(chan struct{})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-release
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	done := make(chan error, 1)
	eof := make(chan struct{})
	r := &eofSignal{r: strings.NewReader(in), eof: eof}
	go func() {
		done <- transport.ServeStdio(t.Context(), s, io.NopCloser(r), nopWC{&out})
	}()
	<-eof // the client has closed its end; the slow call is still running
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	ids := map[float64]bool{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var m struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err == nil && m.Result != nil {
			ids[m.ID] = true
		}
	}
	for _, id := range []float64{1, 2, 3} {
		if !ids[id] {
			t.Errorf("no response to request %v; output:\n%s", id, out.String())
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServeStdioAnswersOnSignal: when ctx is done (SIGTERM) with a call in
// flight and stdin still open, the call finishes and its answer is written
// before ServeStdio returns; past ShutdownTimeout the session is cut.
func TestServeStdioAnswersOnSignal(t *testing.T) {
	for _, tc := range []struct {
		name    string
		grace   time.Duration
		release bool // the call finishes within the grace period
	}{
		{"finishes", 5 * time.Second, true},
		{"cut after the grace period", 200 * time.Millisecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			started, release := make(chan struct{}), make(chan struct{})
			s.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					close(started)
					select {
					case <-release:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
				})
			inR, inW := io.Pipe()
			defer inW.Close() // stdin stays open until the end: a host that sent SIGTERM
			var out syncBuffer
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() {
				done <- transport.ServeStdioWithOptions(ctx, s, inR, nopWC{&out}, transport.StdioOptions{ShutdownTimeout: tc.grace}, nil)
			}()
			go io.WriteString(inW, strings.Join([]string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`,
			}, "\n")+"\n")
			<-started
			cancel() // the signal
			if tc.release {
				time.Sleep(50 * time.Millisecond)
				close(release)
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("ServeStdioWithOptions: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("ServeStdioWithOptions did not return")
			}
			answered := strings.Contains(out.String(), `"id":2,"result"`)
			if answered != tc.release {
				t.Errorf("call answered: %v, want %v; output:\n%s", answered, tc.release, out.String())
			}
		})
	}
}

// TestServeStdioRequestAfterSignal: a request that arrives after the
// signal, while a call is still in flight, is refused at once with an
// error, and the session ends as soon as the call in flight is answered,
// not when the grace period runs out.
func TestServeStdioRequestAfterSignal(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	started, release := make(chan struct{}), make(chan struct{})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-release
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	inR, inW := io.Pipe()
	defer inW.Close()
	var out syncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- transport.ServeStdioWithOptions(ctx, s, inR, nopWC{&out}, transport.StdioOptions{ShutdownTimeout: 10 * time.Second}, nil)
	}()
	io.WriteString(inW, strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`,
	}, "\n")+"\n")
	<-started
	cancel() // the signal
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n")
	io.WriteString(inW, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`+"\n")
	time.Sleep(100 * time.Millisecond)
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdioWithOptions: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdioWithOptions waited for requests read after the signal")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %v after the signal", took)
	}
	got := out.String()
	if !strings.Contains(got, `"id":2,"result"`) {
		t.Errorf("the call in flight was not answered:\n%s", got)
	}
	for _, id := range []string{"3", "4"} {
		if !strings.Contains(got, `"id":`+id+`,"error":{"code":-32000`) {
			t.Errorf("request %s read after the signal got no refusal:\n%s", id, got)
		}
	}
}

// TestServeStdioCancelledCallNotAnswered: a call the client cancels with
// notifications/cancelled gets no response (MCP: the receiver should not
// answer it; the TypeScript SDK reports an answer to a forgotten id as an
// error), the calls around it are answered, and end-of-input does not wait
// for the answer that will not come.
func TestServeStdioCancelledCallNotAnswered(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	started, ended := make(chan struct{}), make(chan struct{})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			defer close(ended)
			// What the bridge does: an error result, which go-sdk would send.
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "cancelled"}}}, nil
		})
	inR, inW := io.Pipe()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- transport.ServeStdio(t.Context(), s, inR, nopWC{&out}) }()
	write := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(`{"jsonrpc":"2.0","id":"c-2","method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	<-started
	write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c-2","reason":"user"}}`)
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call's handler did not end")
	}
	write(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	// The id is free again: a new call may reuse it and is answered.
	write(`{"jsonrpc":"2.0","id":"c-2","method":"tools/list"}`)
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("end-of-input waited for the cancelled call's answer; output:\n%s", out.String())
	}
	var pingAnswered, listAnswered bool
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m struct {
			ID     any             `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		switch {
		case m.ID == "c-2" && strings.Contains(string(m.Result), `"tools"`):
			listAnswered = true
		case m.ID == "c-2":
			t.Errorf("the cancelled call was answered: %s", line)
		case m.ID == float64(3):
			pingAnswered = true
		}
	}
	if !pingAnswered || !listAnswered {
		t.Errorf("ping answered %v, reused id answered %v; output:\n%s", pingAnswered, listAnswered, out.String())
	}
}

// TestServeStdioCancelWithIDIgnored: notifications/cancelled sent as a
// request (with an id) is refused by go-sdk ("unexpected id") and cancels
// nothing, so the call it names must still be answered: the client would
// otherwise wait for it forever.
func TestServeStdioCancelWithIDIgnored(t *testing.T) {
	g := newGate()
	inR, inW := io.Pipe()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- transport.ServeStdio(t.Context(), newMCPServer(g), inR, nopWC{&out}) }()
	write := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	write(stdioInit)
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	<-g.started
	write(`{"jsonrpc":"2.0","id":99,"method":"notifications/cancelled","params":{"requestId":5}}`)
	write(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), `"id":6`) {
		if time.Now().After(deadline) {
			t.Fatalf("ping not answered; output:\n%s", out.String())
		}
		time.Sleep(time.Millisecond)
	}
	close(g.release)
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("end-of-input did not end the session; output:\n%s", out.String())
	}
	if !strings.Contains(out.String(), `"id":5,"result"`) {
		t.Errorf("the call named by a cancellation sent with an id was not answered; output:\n%s", out.String())
	}
}
