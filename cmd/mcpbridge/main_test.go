package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runMainEnv makes the test binary act as mcpbridge (go-sdk's re-exec
// pattern), so end-to-end tests drive the real program over stdio.
const runMainEnv = "MCPBRIDGE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	// Keep the tool cache out of the user's home during tests.
	dir, err := os.MkdirTemp("", "mcpbridge-test-cache")
	if err != nil {
		panic(err)
	}
	os.Setenv("MCPBRIDGE_CACHE_DIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// recorded is what the upstream received.
type recorded struct {
	Method string
	URI    string
	Header http.Header
	Body   string
}

// recorder is an httptest upstream that records every request and answers
// per path.
type recorder struct {
	mu    sync.Mutex
	reqs  []recorded
	flaky map[string]int // method → 503s still to send
	srv   *httptest.Server

	hangStarted, hangCancelled chan struct{} // /api/hang: request arrived, its context ended
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{flaky: map[string]int{"GET": 1, "POST": 1}, hangStarted: make(chan struct{}, 4), hangCancelled: make(chan struct{}, 4)}
	rec.srv = httptest.NewServer(http.HandlerFunc(rec.serve))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, recorded{Method: r.Method, URI: r.RequestURI, Header: r.Header.Clone(), Body: string(body)})
	rec.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case strings.HasPrefix(r.URL.Path, "/api/items/"):
		io.WriteString(w, `{ "id" : "`+strings.TrimPrefix(r.URL.Path, "/api/items/")+`" }`)
	case r.URL.Path == "/api/items":
		w.WriteHeader(http.StatusCreated)
		w.Write(body)
	case r.URL.Path == "/api/missing":
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"not here","password":"hunter2"}`)
	case r.URL.Path == "/api/secrets":
		io.WriteString(w, `{"user":"ann","api_key":"k-123456","note":"token sk-abcdefghijklmnopqrstuvwxyz0123 leaked","auth":"`+r.Header.Get("Authorization")+`"}`)
	case r.URL.Path == "/api/flaky":
		rec.mu.Lock()
		left := rec.flaky[r.Method]
		rec.flaky[r.Method] = left - 1
		rec.mu.Unlock()
		if left > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"busy"}`)
			return
		}
		io.WriteString(w, `{"ok":true}`)
	case r.URL.Path == "/api/hang":
		rec.hangStarted <- struct{}{}
		<-r.Context().Done()
		rec.hangCancelled <- struct{}{}
	case r.URL.Path == "/api/slow":
		<-r.Context().Done() // hangs until the bridge gives up
	default:
		w.WriteHeader(http.StatusTeapot)
	}
}

func (rec *recorder) take() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := rec.reqs
	rec.reqs = nil
	return out
}

// startBridge runs the real program over stdio and connects a go-sdk
// client. Everything the program writes to stdout is kept for inspection.
func startBridge(t *testing.T, args ...string) (*mcp.ClientSession, *bytes.Buffer) {
	t.Helper()
	return startBridgeStderr(t, &testWriter{t: t}, args...)
}

// startBridgeStderr is startBridge with the bridge's stderr going to w.
func startBridgeStderr(t *testing.T, w io.Writer, args ...string) (*mcp.ClientSession, *bytes.Buffer) {
	t.Helper()
	return startBridgeAs(t, "e2e", w, args...)
}

// startBridgeAs is startBridgeStderr with a client that gives name as its
// clientInfo.name.
func startBridgeAs(t *testing.T, name string, w io.Writer, args ...string) (*mcp.ClientSession, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	cmd.Stderr = w
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var mu sync.Mutex
	tee := io.TeeReader(stdout, lockedWriter{&mu, &out})
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	cs, err := c.Connect(t.Context(), &mcp.IOTransport{Reader: io.NopCloser(tee), Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("bridge exited with %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		assertJSONRPC(t, out.Bytes())
	})
	return cs, &out
}

// assertJSONRPC checks that every line on stdout is a JSON-RPC message.
func assertJSONRPC(t *testing.T, b []byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var msg struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
			t.Errorf("non-protocol bytes on stdout: %q", sc.Text())
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Logf("bridge stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return res, sb.String()
}

func TestStdioEndToEnd(t *testing.T) {
	rec := newRecorder(t)
	cs, _ := startBridge(t, "serve",
		"--spec", "testdata/e2e.yaml",
		"--whitelist", "testdata/e2e-whitelist.yaml",
		"--upstream", rec.srv.URL+"/api",
		"--upstream-token", "up-secret-token-1",
		"--log-level", "debug",
	)
	ctx := t.Context()

	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	want := []string{"createItem", "getHang", "getItem", "getMissing", "getSecrets", "getSlow", "get_flaky", "ping", "post_flaky"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools mismatch (-want +got):\n%s", diff)
	}

	t.Run("parameters in every location", func(t *testing.T) {
		res, text := callText(t, cs, "getItem", map[string]any{
			"itemId": "a/b c", "fields": []string{"x", "y"}, "tag": []string{"p", "q"}, "X-Trace": "t1", "session": "s1",
		})
		if res.IsError {
			t.Fatalf("isError: %s", text)
		}
		if text != `{"id":"a/b c"}` {
			t.Errorf("text = %q, want compact upstream JSON", text)
		}
		got := rec.take()
		if len(got) != 1 {
			t.Fatalf("upstream got %d requests", len(got))
		}
		r := got[0]
		if r.URI != "/api/items/a%2Fb%20c?fields=x,y&tag=p&tag=q" {
			t.Errorf("URI = %q", r.URI)
		}
		if r.Header.Get("X-Trace") != "t1" || r.Header.Get("Cookie") != "session=s1" {
			t.Errorf("header/cookie = %q / %q", r.Header.Get("X-Trace"), r.Header.Get("Cookie"))
		}
		if r.Header.Get("Authorization") != "Bearer up-secret-token-1" {
			t.Errorf("upstream credentials not attached: %q", r.Header.Get("Authorization"))
		}
		if res.StructuredContent == nil {
			t.Errorf("no structuredContent for an object response with an output schema")
		}
	})

	t.Run("json body", func(t *testing.T) {
		res, text := callText(t, cs, "createItem", map[string]any{"body": map[string]any{"name": "n", "count": 3}})
		if res.IsError {
			t.Fatalf("isError: %s", text)
		}
		got := rec.take()
		if len(got) != 1 || got[0].Method != "POST" || got[0].Body != `{"count":3,"name":"n"}` || got[0].Header.Get("Content-Type") != "application/json" {
			t.Errorf("upstream got %+v", got)
		}
	})

	t.Run("404 is a tool error with the sanitized body", func(t *testing.T) {
		res, text := callText(t, cs, "getMissing", nil)
		if !res.IsError || !strings.Contains(text, "404") || !strings.Contains(text, "not here") {
			t.Errorf("got isError=%v text=%q", res.IsError, text)
		}
		if strings.Contains(text, "hunter2") {
			t.Errorf("password leaked: %q", text)
		}
		rec.take()
	})

	t.Run("secrets are redacted", func(t *testing.T) {
		res, text := callText(t, cs, "getSecrets", nil)
		if res.IsError {
			t.Fatalf("isError: %s", text)
		}
		for _, leak := range []string{"k-123456", "sk-abcdefghijklmnopqrstuvwxyz0123", "up-secret-token-1"} {
			if strings.Contains(text, leak) {
				t.Errorf("secret %q leaked: %s", leak, text)
			}
		}
		if !strings.Contains(text, `"user":"ann"`) || !strings.Contains(text, "[REDACTED]") {
			t.Errorf("unexpected text %s", text)
		}
		rec.take()
	})

	t.Run("bad arguments never reach the upstream", func(t *testing.T) {
		res, text := callText(t, cs, "createItem", map[string]any{"body": map[string]any{"name": "n", "count": -1}})
		if !res.IsError || !strings.Contains(text, "count") {
			t.Errorf("got isError=%v text=%q, want an error naming count", res.IsError, text)
		}
		res, text = callText(t, cs, "getItem", map[string]any{"nope": 1})
		if !res.IsError || !strings.Contains(text, "itemId") && !strings.Contains(text, "nope") {
			t.Errorf("got isError=%v text=%q", res.IsError, text)
		}
		if got := rec.take(); len(got) != 0 {
			t.Errorf("upstream called %d times", len(got))
		}
	})

	t.Run("POST 503 is not retried", func(t *testing.T) {
		res, text := callText(t, cs, "post_flaky", nil)
		if !res.IsError || !strings.Contains(text, "503") {
			t.Errorf("got isError=%v text=%q", res.IsError, text)
		}
		if got := rec.take(); len(got) != 1 {
			t.Errorf("upstream got %d POSTs, want 1", len(got))
		}
	})

	t.Run("GET 503 then 200 is retried", func(t *testing.T) {
		res, text := callText(t, cs, "get_flaky", nil)
		if res.IsError || text != `{"ok":true}` {
			t.Errorf("got isError=%v text=%q", res.IsError, text)
		}
		if got := rec.take(); len(got) != 2 {
			t.Errorf("upstream got %d GETs, want 2", len(got))
		}
	})

	t.Run("a hanging upstream times out as a tool error", func(t *testing.T) {
		res, text := callText(t, cs, "getSlow", nil)
		if !res.IsError || !strings.Contains(text, "300ms") {
			t.Errorf("got isError=%v text=%q", res.IsError, text)
		}
		rec.take()
	})

	t.Run("cancelling the MCP request cancels the upstream request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getHang", Arguments: map[string]any{}})
			errc <- err
		}()
		<-rec.hangStarted
		cancel()
		if err := <-errc; err == nil {
			t.Errorf("CallTool returned no error after cancel")
		}
		select {
		case <-rec.hangCancelled:
		case <-time.After(10 * time.Second):
			t.Fatal("the upstream request was not cancelled")
		}
		rec.take()
	})

	t.Run("ping", func(t *testing.T) {
		_, text := callText(t, cs, "ping", nil)
		var info map[string]any
		if err := json.Unmarshal([]byte(text), &info); err != nil {
			t.Fatal(err)
		}
		if info["degraded"] != false || info["tools"] != float64(8) || info["upstream"] != rec.srv.URL+"/api" {
			t.Errorf("ping = %v", info)
		}
	})
}

func TestDegradedWhenSpecUnreachable(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	cs, _ := startBridge(t, "serve", "--spec", down.URL+"/openapi.json", "--all-operations")
	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lt.Tools) != 1 || lt.Tools[0].Name != "ping" {
		t.Fatalf("tools = %v, want only ping", lt.Tools)
	}
	_, text := callText(t, cs, "ping", nil)
	if !strings.Contains(text, `"degraded":true`) {
		t.Errorf("ping = %s", text)
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "no command"},
		{"unknown command", []string{"frob"}, `unknown command "frob"`},
		{"missing spec", []string{"tools", "--all-operations"}, "--spec is required"},
		{"missing selection", []string{"tools", "--spec", "testdata/e2e.yaml"}, "--whitelist PATH or --all-operations"},
		{"bad transport", []string{"serve", "--spec", "x", "--all-operations", "--transport", "carrier-pigeon"}, "--transport must be"},
		{"bad whitelist entry", []string{"tools", "--spec", "testdata/e2e.yaml", "--whitelist", "testdata/bad-whitelist.yaml"}, "getItme"},
		{"bad spec file", []string{"tools", "--spec", "testdata/not-a-spec.yaml", "--all-operations"}, "not-a-spec.yaml"},
		{"unknown config key", []string{"tools", "--config", "testdata/bad-config.yaml"}, "config file testdata/bad-config.yaml: unknown keys: bogus-key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(""), &out, &errb)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("run(%v) = %v, want error containing %q", tt.args, err, tt.want)
			}
			if out.Len() != 0 {
				t.Errorf("stdout got %q", out.String())
			}
		})
	}
}

func TestToolsJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"tools", "--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml", "--json"}, nil, &out, &errb); err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	var tools []map[string]any
	if err := json.Unmarshal(out.Bytes(), &tools); err != nil {
		t.Fatalf("not a JSON array: %v", err)
	}
	if len(tools) != 9 {
		t.Errorf("got %d tools, want 9", len(tools))
	}
	for _, tl := range tools {
		if s, ok := tl["inputSchema"].(map[string]any); !ok || s["type"] != "object" {
			t.Errorf("tool %v: inputSchema type is not object", tl["name"])
		}
	}
}

// TestSIGHUPCaughtBeforeHeavyInit checks the order in which the real program
// initialises its packages (GODEBUG=inittrace=1): earlysig, which makes a
// SIGHUP during start-up a reload request instead of the end of the process,
// must register before the dependencies whose initialisation takes tens of
// milliseconds (santhosh-tekuri/jsonschema, via kin-openapi), or the window
// in which a SIGHUP kills a starting bridge is back.
func TestSIGHUPCaughtBeforeHeavyInit(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "version")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("version: %v\n%s", err, out)
	}
	early, heavy := -1, -1
	for i, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "init github.com/mcpbridge/mcpbridge/cmd/mcpbridge/internal/earlysig "):
			early = i
		case strings.HasPrefix(line, "init github.com/santhosh-tekuri/jsonschema/v6 "):
			heavy = i
		}
	}
	if early < 0 || heavy < 0 || early > heavy {
		t.Errorf("init order: earlysig at line %d, santhosh-tekuri/jsonschema at %d; want earlysig first\n%s", early, heavy, out)
	}
}
