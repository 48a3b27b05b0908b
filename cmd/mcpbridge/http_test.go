package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startHTTPBridge runs the real program (run) with --transport http on a
// free loopback port and returns its base URL once it listens.
func startHTTPBridge(t *testing.T, args ...string) string {
	base, _ := startHTTPBridgeLogs(t, args...)
	return base
}

// startHTTPBridgeLogs also returns the "tools ready" log line's fields.
func startHTTPBridgeLogs(t *testing.T, args ...string) (string, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	args = append(args, "--transport", "http", "--listen", "127.0.0.1:0", "--log-format", "json")
	go func() {
		err := run(ctx, args, strings.NewReader(""), io.Discard, pw)
		pw.Close()
		done <- err
	}()
	addr := make(chan string, 1)
	var ready map[string]any
	scanned := make(chan struct{}) // the log reader is done: no t.Logf after the test
	go func() {
		defer close(scanned)
		sc := bufio.NewScanner(pr)
		sent := false
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "tools ready" {
				ready = line
			}
			if line["msg"] == "listening" && !sent {
				a, _ := line["addr"].(string)
				addr <- a
				sent = true
			}
			t.Logf("bridge stderr: %s", sc.Text())
		}
		if !sent {
			close(addr)
		}
	}()
	a, ok := <-addr
	if !ok {
		cancel()
		err := <-done
		<-scanned
		t.Fatalf("bridge did not start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		err := <-done
		<-scanned
		if err != nil {
			t.Errorf("bridge exited with %v", err)
		}
	})
	return "http://" + a, ready
}

func TestToolCache(t *testing.T) {
	dir := t.TempDir()
	args := []string{"serve", "--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml", "--upstream", "http://127.0.0.1:9", "--cache-dir", dir}
	for i, wantCached := range []bool{false, true} {
		base, ready := startHTTPBridgeLogs(t, args...)
		if ready == nil || ready["cached"] != wantCached || ready["tools"] != float64(8) {
			t.Errorf("start %d: tools ready = %v, want cached=%v and 8 tools", i, ready, wantCached)
		}
		resp, err := http.Get(base + "/health")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// serve writes the entry right after it starts serving (built.later),
		// not before "tools ready", and a first start writes it again with
		// the encoded tools/list once its deferred work is done.
		waitForCacheEntry(t, dir)
		if i == 0 {
			waitForCachedList(t, dir)
		}
	}
	// A corrupt entry is ignored and rewritten.
	entries, _ := filepath.Glob(filepath.Join(dir, "*.tools"))
	if len(entries) != 1 {
		t.Fatalf("cache entries: %v", entries)
	}
	if err := os.WriteFile(entries[0], []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, ready := startHTTPBridgeLogs(t, args...)
	if ready == nil || ready["cached"] != false {
		t.Errorf("after corruption: tools ready = %v, want a rebuild", ready)
	}
}

type bearer struct {
	key string
	rt  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.rt.RoundTrip(r)
}

func TestHTTPEndToEnd(t *testing.T) {
	rec := newRecorder(t)
	base := startHTTPBridge(t, "serve",
		"--spec", "testdata/e2e.yaml",
		"--whitelist", "testdata/e2e-whitelist.yaml",
		"--upstream", rec.srv.URL+"/api",
		"--upstream-token", "up-secret-token-1",
		"--api-key", "client-key-1",
	)
	authed := &http.Client{Transport: bearer{"client-key-1", http.DefaultTransport}}

	transports := map[string]func() mcp.Transport{
		"streamable": func() mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: authed}
		},
		"sse": func() mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: base + "/sse", HTTPClient: authed}
		},
	}
	for name, mk := range transports {
		t.Run(name, func(t *testing.T) {
			c := mcp.NewClient(&mcp.Implementation{Name: "e2e-http", Version: "1"}, nil)
			cs, err := c.Connect(t.Context(), mk(), nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			lt, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(lt.Tools) != 9 {
				t.Errorf("got %d tools, want 9", len(lt.Tools))
			}
			res, text := callText(t, cs, "getItem", map[string]any{"itemId": "42"})
			if res.IsError || text != `{"id":"42"}` {
				t.Errorf("getItem: isError=%v text=%q", res.IsError, text)
			}
			got := rec.take()
			if len(got) != 1 {
				t.Fatalf("upstream got %d requests", len(got))
			}
			if a := got[0].Header.Get("Authorization"); a != "Bearer up-secret-token-1" {
				t.Errorf("upstream Authorization = %q: the client's key must not be forwarded, the upstream token must", a)
			}
		})
	}

	t.Run("no key is 401 without resource metadata (no authorization server)", func(t *testing.T) {
		resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// API keys only: pointing clients at OAuth metadata would send the
		// Inspector into an OAuth flow for nothing.
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("status %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	})

	t.Run("health and ready", func(t *testing.T) {
		for _, path := range []string{"/health", "/ready"} {
			resp, err := http.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("%s: status %d, err %v", path, resp.StatusCode, err)
			}
			if path == "/health" && (body["tools"] != float64(9) || body["degraded"] != false) {
				t.Errorf("/health = %v", body)
			}
		}
	})
}

// waitForCachedList waits until a cache entry in dir carries the encoded
// tools/list (the snapshot's gob holds its JSON as is).
func waitForCachedList(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		entries, _ := filepath.Glob(filepath.Join(dir, "*.tools"))
		for _, e := range entries {
			if data, err := os.ReadFile(e); err == nil && strings.Contains(string(data), `"inputSchema":`) {
				return
			}
		}
	}
	t.Fatalf("no tool cache entry with the encoded tools/list in %s after 10 s", dir)
}

// waitForCacheEntry waits (up to 10 s) for a tool cache entry in dir.
func waitForCacheEntry(t *testing.T, dir string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if entries, _ := filepath.Glob(filepath.Join(dir, "*.tools")); len(entries) > 0 {
			return
		}
	}
	t.Fatalf("no tool cache entry in %s after 10 s", dir)
}

// TestHTTPStatelessDisconnectCancels: over stateless streamable HTTP, a
// client on a revision before 2026-07-28 that goes away mid-call cancels
// the upstream request (go-sdk ties the call to its POST only from
// 2026-07-28 on): abandoned calls must not hold concurrency slots until
// their timeout.
func TestHTTPStatelessDisconnectCancels(t *testing.T) {
	rec := newRecorder(t)
	base := startHTTPBridge(t, "serve",
		"--spec", "testdata/e2e.yaml",
		"--whitelist", "testdata/e2e-whitelist.yaml",
		"--upstream", rec.srv.URL+"/api",
		"--api-key", "client-key-1",
	)
	ctx, cancel := context.WithCancel(t.Context())
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"getHang","arguments":{}}}`
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer client-key-1")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	select {
	case <-rec.hangStarted:
	case err := <-errc:
		t.Fatalf("the call ended before reaching the upstream: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reached the upstream")
	}
	cancel() // the client goes away
	<-errc
	select {
	case <-rec.hangCancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream request was not cancelled when the client went away")
	}
}

// TestHTTPStatelessCancelNotification: over stateless streamable HTTP, a
// notifications/cancelled (a POST of its own, which the call's POST does not
// see) cancels the upstream request, frees the concurrency slot at once,
// and ends the call's POST without its response, as the client that
// abandoned it expects (the TypeScript SDK's AbortController leaves the
// POST open).
func TestHTTPStatelessCancelNotification(t *testing.T) {
	rec := newRecorder(t)
	base := startHTTPBridge(t, "serve",
		"--spec", "testdata/e2e.yaml",
		"--whitelist", "testdata/e2e-whitelist.yaml",
		"--upstream", rec.srv.URL+"/api",
		"--api-key", "client-key-1",
		"--max-concurrency", "1", "--max-queue", "0",
	)
	post := func(body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer client-key-1")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		return http.DefaultClient.Do(req)
	}
	for _, id := range []string{"7", "8"} { // 8: the slot 7 held is free
		answer := make(chan string, 1)
		go func() {
			resp, err := post(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"getHang","arguments":{}}}`)
			if err != nil {
				answer <- err.Error()
				return
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answer <- string(data)
		}()
		select {
		case <-rec.hangStarted:
		case a := <-answer:
			t.Fatalf("call %s ended before reaching the upstream: %q", id, a)
		case <-time.After(10 * time.Second):
			t.Fatalf("call %s never reached the upstream", id)
		}
		resp, err := post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `}}`)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/cancelled = %d; want 202", resp.StatusCode)
		}
		select {
		case <-rec.hangCancelled:
		case <-time.After(10 * time.Second):
			t.Fatalf("call %s: the upstream request was not cancelled by notifications/cancelled", id)
		}
		select {
		case a := <-answer:
			if strings.Contains(a, `"id":`+id) {
				t.Errorf("call %s was answered after its cancellation: %q", id, a)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("call %s: its POST did not end after the cancellation", id)
		}
	}
}

// TestHiddenToolOverQuota: a caller over its quota cannot tell a tool
// hidden from it (allow list) from one that does not exist, and the
// metrics do not count the hidden one by name (access comes before the
// quota in the chain).
func TestHiddenToolOverQuota(t *testing.T) {
	rec := newRecorder(t)
	wl := filepath.Join(t.TempDir(), "wl.yaml")
	if err := os.WriteFile(wl, []byte("tools:\n  - operationId: getItem\n  - operationId: getSecrets\n    allow: {keys: [\"api-key:0\"]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := startHTTPBridge(t, "serve", "--spec", "testdata/e2e.yaml", "--whitelist", wl,
		"--upstream", rec.srv.URL+"/api", "--api-key", "key-zero-1", "--api-key", "key-one-1", "--quota", "1/1h")
	hc := &http.Client{Transport: bearer{"key-one-1", http.DefaultTransport}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"itemId": "x"}}); err != nil || res.IsError {
		t.Fatalf("first call: %v %+v", err, res)
	}
	answer := func(name string) string {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err != nil {
			return strings.ReplaceAll(err.Error(), name, "NAME")
		}
		b, _ := json.Marshal(res)
		return strings.ReplaceAll(string(b), name, "NAME")
	}
	hidden, missing := answer("getSecrets"), answer("noSuchTool")
	if hidden != missing {
		t.Errorf("over quota, a hidden tool answers\n%s\nand a missing one\n%s", hidden, missing)
	}
	if strings.Contains(hidden, "rate limit") {
		t.Errorf("the hidden tool's answer speaks of the quota: %s", hidden)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if strings.Contains(string(body), `tool="getSecrets"`) {
		t.Errorf("metrics name the hidden tool:\n%s", grepLines(string(body), "getSecrets"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestRESTHiddenTool: over the REST facade, a tool hidden from the caller
// answers 404 like a missing one, call_operation naming a hidden operation
// answers 200 like one naming a missing operation, and both refusals are
// counted as denied (under tool "other") as over MCP.
func TestRESTHiddenTool(t *testing.T) {
	rec := newRecorder(t)
	wl := filepath.Join(t.TempDir(), "wl.yaml")
	if err := os.WriteFile(wl, []byte("tools:\n  - operationId: getItem\n  - operationId: getSecrets\n    allow: {keys: [\"api-key:0\"]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	post := func(base, path, body string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer key-one-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, mode := range []string{"all", "dynamic"} {
		base := startHTTPBridge(t, "serve", "--spec", "testdata/e2e.yaml", "--whitelist", wl, "--rest", "--tools", mode,
			"--upstream", rec.srv.URL+"/api", "--api-key", "key-zero-1", "--api-key", "key-one-1")
		if mode == "all" {
			hs, hb := post(base, "/api/tools/getSecrets", `{}`)
			ms, mb := post(base, "/api/tools/noSuchTool", `{}`)
			if hs != 404 || ms != 404 || strings.ReplaceAll(hb, "getSecrets", "X") != strings.ReplaceAll(mb, "noSuchTool", "X") {
				t.Errorf("hidden tool: %d %s; missing tool: %d %s; want the same 404", hs, hb, ms, mb)
			}
		} else {
			hs, hb := post(base, "/api/tools/call_operation", `{"name":"getSecrets","arguments":{}}`)
			ms, mb := post(base, "/api/tools/call_operation", `{"name":"noSuchOp","arguments":{}}`)
			if hs != ms || strings.ReplaceAll(hb, "getSecrets", "X") != strings.ReplaceAll(mb, "noSuchOp", "X") {
				t.Errorf("hidden operation: %d %s; missing one: %d %s; want the same answer", hs, hb, ms, mb)
			}
		}
		// /health tells the tools a call may name from those tools/list
		// shows: in dynamic mode only the meta-tools are listed.
		resp, err := http.Get(base + "/health")
		if err != nil {
			t.Fatal(err)
		}
		var health map[string]any
		err = json.NewDecoder(resp.Body).Decode(&health)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: /health %v", mode, health)
		ops, listed, tools := health["operations"], health["listed"], health["tools"]
		if mode == "all" && (listed != tools || ops == nil || ops.(float64) >= tools.(float64)) {
			t.Errorf("all: /health operations %v, listed %v, tools %v; want every tool listed and the operations fewer (ping)", ops, listed, tools)
		}
		if mode == "dynamic" && (listed == nil || ops != float64(2) || listed.(float64) >= tools.(float64)) {
			t.Errorf("dynamic: /health operations %v, listed %v, tools %v; want 2 operations and fewer tools listed than callable", ops, listed, tools)
		}
		resp, err = http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), `mcpbridge_tool_calls_total{outcome="denied",tool="other"} 1`) {
			t.Errorf("%s: the REST refusal is not counted as denied:\n%s", mode, grepLines(string(body), "tool_calls_total"))
		}
	}
}

// TestRESTBodyTimeout: a REST body that does not arrive within
// --read-timeout is answered 408, as on /mcp, not 400.
func TestRESTBodyTimeout(t *testing.T) {
	rec := newRecorder(t)
	base := startHTTPBridge(t, "serve", "--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml", "--rest",
		"--upstream", rec.srv.URL+"/api", "--no-auth", "--read-timeout", "300ms")
	for _, path := range []string{"/api/tools/getItem", "/mcp"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"itemId\":", path, strings.TrimPrefix(base, "http://"))
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("%s: a body that stops: %d, want 408", path, resp.StatusCode)
		}
	}
}

// TestHTTPStatelessResourceReadCancels: a resources/read is the call of
// its tool and ends like one: over stateless streamable HTTP it reports
// its steps as progress when the request carries a token, and a client
// that goes away, or cancels the read with notifications/cancelled, cancels
// the upstream request (the read ran to the upstream's answer or the
// call's timeout, holding its concurrency slot).
func TestHTTPStatelessResourceReadCancels(t *testing.T) {
	rec := newRecorder(t)
	wl := filepath.Join(t.TempDir(), "whitelist.yaml")
	if err := os.WriteFile(wl, []byte("tools:\n  - operationId: getHang\n    resource: {uri: \"hang://it\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := startHTTPBridge(t, "serve",
		"--spec", "testdata/e2e.yaml",
		"--whitelist", wl,
		"--upstream", rec.srv.URL+"/api",
		"--api-key", "client-key-1",
	)
	post := func(ctx context.Context, body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer client-key-1")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		return http.DefaultClient.Do(req)
	}
	for _, how := range []string{"client goes away", "notifications/cancelled"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			progress := make(chan struct{}, 1)
			done := make(chan struct{})
			go func() {
				defer close(done)
				resp, err := post(ctx, `{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"hang://it","_meta":{"progressToken":"read-9"}}}`)
				if err != nil {
					return
				}
				defer resp.Body.Close()
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if strings.Contains(sc.Text(), `"notifications/progress"`) && strings.Contains(sc.Text(), `"read-9"`) {
						progress <- struct{}{}
					}
				}
			}()
			select {
			case <-rec.hangStarted:
			case <-time.After(10 * time.Second):
				t.Fatal("the read never reached the upstream")
			}
			select {
			case <-progress:
			case <-time.After(5 * time.Second):
				t.Error("the read with a progress token reported no progress")
			}
			if how == "client goes away" {
				cancel()
			} else {
				r, err := post(t.Context(), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
				if err != nil {
					t.Fatal(err)
				}
				r.Body.Close()
			}
			select {
			case <-rec.hangCancelled:
			case <-time.After(5 * time.Second):
				t.Errorf("%s: the upstream request of the read was not cancelled", how)
			}
			cancel()
			<-done
		})
	}
}
