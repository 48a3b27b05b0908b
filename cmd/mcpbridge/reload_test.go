package main

// End-to-end tests of live reload: SIGHUP, --spec-refresh and the recovery
// of a degraded start, each against the real program (re-executed test
// binary, see TestMain) serving over stdio, streamable HTTP and legacy SSE.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// opsSpec renders an OpenAPI 3 document with one GET /ops/NAME operation
// (operationId NAME, an object response) per name. describe, when set,
// gives an operation's description.
func opsSpec(describe func(op string) string, ops ...string) []byte {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo:\n  title: Reload API\n  version: \"1\"\npaths:\n")
	for _, op := range ops {
		desc := "Operation " + op + "."
		if describe != nil {
			desc = describe(op)
		}
		fmt.Fprintf(&b, `  /ops/%s:
    get:
      operationId: %s
      description: %q
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                type: object
                properties:
                  op:
                    type: string
`, op, op, desc)
	}
	return []byte(b.String())
}

// brokenSpec is not YAML at all.
var brokenSpec = []byte("openapi: [3.0.3\ninfo: {title: \"unterminated\n")

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// opsUpstream is the REST API behind the bridge: GET /ops/NAME answers
// {"op":"NAME"} and is counted.
type opsUpstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newOpsUpstream(t *testing.T) *opsUpstream {
	t.Helper()
	u := &opsUpstream{hits: map[string]int{}}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, ok := strings.CutPrefix(r.URL.Path, "/ops/")
		if !ok || r.Method != http.MethodGet {
			w.WriteHeader(http.StatusTeapot)
			return
		}
		u.mu.Lock()
		u.hits[op]++
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"op":%q}`, op)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *opsUpstream) count(op string) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.hits[op]
}

// logWatch is a bridge's stderr (--log-format json): every line goes to
// t.Log, and the messages are counted so that tests can wait for one.
type logWatch struct {
	t    *testing.T
	name string
	addr chan string // the "listening" line's address, once

	mu      sync.Mutex
	partial []byte
	msgs    map[string]int
	lines   []map[string]any
	changed chan struct{} // closed and replaced on every line
}

func newLogWatch(t *testing.T, name string) *logWatch {
	return &logWatch{t: t, name: name, addr: make(chan string, 1), msgs: map[string]int{}, changed: make(chan struct{})}
}

func (w *logWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		line := string(w.partial[:i])
		w.partial = w.partial[i+1:]
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			w.t.Logf("%s stderr: %s", w.name, line)
			continue
		}
		msg, _ := m["msg"].(string)
		if msg != "tool call" { // one per call: counted, not shown
			w.t.Logf("%s stderr: %s", w.name, line)
		}
		w.msgs[msg]++
		w.lines = append(w.lines, m)
		if a, ok := m["addr"].(string); ok && msg == "listening" {
			select {
			case w.addr <- a:
			default:
			}
		}
		close(w.changed)
		w.changed = make(chan struct{})
	}
	return len(p), nil
}

func (w *logWatch) count(msg string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.msgs[msg]
}

// waitCount waits until msg was logged at least n times.
func (w *logWatch) waitCount(msg string, n int, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		got, ch := w.msgs[msg], w.changed
		w.mu.Unlock()
		if got >= n {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// last returns the last line logged with msg (nil if none).
func (w *logWatch) last(msg string) map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := len(w.lines) - 1; i >= 0; i-- {
		if w.lines[i]["msg"] == msg {
			return w.lines[i]
		}
	}
	return nil
}

// proc is one bridge process.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *logWatch
	base string // http://ADDR in HTTP mode
}

func (p *proc) hup(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatalf("%s: SIGHUP: %v", p.name, err)
	}
}

func bridgeCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append(append([]string{"serve"}, args...), "--log-format", "json")...)
	// Under -race, a process sleeps 1s at exit (GORACE atexit_sleep_ms)
	// unless told otherwise; four of them would double the file's runtime.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "GORACE="+gorace)
	return cmd
}

// startHTTPProc runs the program with --transport http on a free loopback
// port and returns once it listens. Cleanup stops it with SIGTERM (a
// graceful shutdown) and expects exit status 0.
func startHTTPProc(t *testing.T, name string, args ...string) *proc {
	t.Helper()
	cmd := bridgeCmd(append(args, "--transport", "http", "--listen", "127.0.0.1:0")...)
	p := &proc{name: name, cmd: cmd, log: newLogWatch(t, name)}
	cmd.Stderr = p.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("%s exited with %v", name, err)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Errorf("%s did not stop within 10s of SIGTERM", name)
		}
	})
	select {
	case a := <-p.log.addr:
		p.base = "http://" + a
	case err := <-exited:
		exited <- err
		t.Fatalf("%s exited before listening: %v", name, err)
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not listen within 10s", name)
	}
	return p
}

// notifier is a channel a client's ToolListChangedHandler signals.
type notifier chan struct{}

func newNotifier() notifier { return make(notifier, 64) }

func (n notifier) client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "reload-e2e", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case n <- struct{}{}:
			default:
			}
		},
	})
}

// expect waits for one notification.
func (n notifier) expect(t *testing.T, what string, timeout time.Duration) {
	t.Helper()
	select {
	case <-n:
	case <-time.After(timeout):
		t.Fatalf("%s: no notifications/tools/list_changed within %v", what, timeout)
	}
}

// quiet asserts that no notification arrives within d (0: none is
// pending).
func (n notifier) quiet(t *testing.T, what string, d time.Duration) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-n:
		t.Errorf("%s: unexpected notifications/tools/list_changed", what)
		return
	default:
	}
	select {
	case <-n:
		t.Errorf("%s: unexpected notifications/tools/list_changed", what)
	case <-timer.C:
	}
}

func (n notifier) drain() {
	for {
		select {
		case <-n:
		default:
			return
		}
	}
}

// startStdioProc runs the program over stdio and connects a client whose
// list_changed notifications go to n (nil: none).
func startStdioProc(t *testing.T, name string, n notifier, args ...string) (*proc, *mcp.ClientSession) {
	t.Helper()
	cmd := bridgeCmd(args...)
	p := &proc{name: name, cmd: cmd, log: newLogWatch(t, name)}
	cmd.Stderr = p.log
	c := mcp.NewClient(&mcp.Implementation{Name: "reload-e2e", Version: "1"}, nil)
	if n != nil {
		c = n.client()
	}
	cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("%s: connect: %v", name, err)
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Errorf("%s: close (process exit): %v", name, err)
		}
	})
	return p, cs
}

// newHTTPClient is an HTTP client of the test's own, whose idle
// connections are closed at cleanup (after the sessions registered later).
func newHTTPClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// connect opens an MCP session with c over tr, closed at cleanup.
func connect(t *testing.T, what string, c *mcp.Client, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	// Not a context that ends after Connect: the SSE transport's GET
	// stream lives on it.
	cs, err := c.Connect(t.Context(), tr, nil)
	if err != nil {
		t.Fatalf("%s: connect: %v", what, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func toolNames(t *testing.T, what string, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("%s: tools/list: %v", what, err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func wantTools(t *testing.T, what string, cs *mcp.ClientSession, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := toolNames(t, what, cs); !slices.Equal(got, want) {
		t.Errorf("%s: tools/list = %v, want %v", what, got, want)
	}
}

// call calls a tool; a protocol error and an IsError result are both
// errors.
func call(cs *mcp.ClientSession, name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return sb.String(), fmt.Errorf("isError: %s", sb.String())
	}
	return sb.String(), nil
}

// wantCall calls op, which must answer the upstream's {"op":OP}.
func wantCall(t *testing.T, what string, cs *mcp.ClientSession, op string) {
	t.Helper()
	text, err := call(cs, op)
	if err != nil {
		t.Errorf("%s: %s: %v", what, op, err)
		return
	}
	if want := fmt.Sprintf(`{"op":%q}`, op); text != want {
		t.Errorf("%s: %s = %s, want %s", what, op, text, want)
	}
}

type pingResult struct {
	Degraded   bool   `json:"degraded"`
	Reason     string `json:"reason"`
	Tools      int    `json:"tools"`
	LastReload string `json:"lastReload"`
}

func ping(t *testing.T, cs *mcp.ClientSession) pingResult {
	t.Helper()
	text, err := call(cs, "ping")
	if err != nil {
		t.Fatalf("ping: %v", err)
	}
	var p pingResult
	if err := json.Unmarshal([]byte(text), &p); err != nil {
		t.Fatalf("ping: %v in %s", err, text)
	}
	return p
}

// waitPing polls ping until ok accepts its lastReload.
func waitPing(t *testing.T, what string, cs *mcp.ClientSession, timeout time.Duration, ok func(string) bool) pingResult {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		p := ping(t, cs)
		if ok(p.LastReload) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: ping lastReload still %q after %v", what, p.LastReload, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func is(s string) func(string) bool { return func(v string) bool { return v == s } }

// ready returns the status of GET /ready.
func ready(t *testing.T, hc *http.Client, base string) int {
	t.Helper()
	resp, err := hc.Get(base + "/ready")
	if err != nil {
		t.Fatalf("GET /ready: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestReloadSIGHUP reloads a spec file with SIGHUP under one HTTP process
// (stateful streamable and legacy SSE sessions) and one stdio process:
// every session is told the list changed and sees the new tools; a broken
// spec keeps the old tools; identical bytes rebuild and notify nothing.
func TestReloadSIGHUP(t *testing.T) {
	t.Parallel() // each test has processes of its own; see TestSwapUnderLoad
	up := newOpsUpstream(t)
	spec := filepath.Join(t.TempDir(), "openapi.yaml")
	writeFile(t, spec, opsSpec(nil, "opA", "opB"))
	args := []string{"--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--no-cache"}

	httpProc := startHTTPProc(t, "http", append(args, "--stateful")...)
	stdioN := newNotifier()
	stdioProc, stdioCS := startStdioProc(t, "stdio", stdioN, args...)
	hc := newHTTPClient(t)
	streamN, sseN := newNotifier(), newNotifier()
	streamCS := connect(t, "streamable", streamN.client(), &mcp.StreamableClientTransport{Endpoint: httpProc.base + "/mcp", HTTPClient: hc})
	sseCS := connect(t, "sse", sseN.client(), &mcp.SSEClientTransport{Endpoint: httpProc.base + "/sse", HTTPClient: hc})

	type session struct {
		name string
		cs   *mcp.ClientSession
		n    notifier
	}
	sessions := []session{{"streamable", streamCS, streamN}, {"sse", sseCS, sseN}, {"stdio", stdioCS, stdioN}}
	procs := []*proc{httpProc, stdioProc}
	for _, s := range sessions {
		wantTools(t, s.name+" before", s.cs, "opA", "opB", "ping")
		wantCall(t, s.name+" before", s.cs, "opB")
		s.n.drain()
	}

	// B removed, C added.
	writeFile(t, spec, opsSpec(nil, "opA", "opC"))
	for _, p := range procs {
		p.hup(t)
	}
	for _, s := range sessions {
		s.n.expect(t, s.name+" after SIGHUP", 5*time.Second)
	}
	// go-sdk debounces the list_changed of one swap's additions and
	// removals; on a loaded machine a swap can outlast its window and make
	// two. Either is right for this change; the checks below are about the
	// reloads that change nothing.
	time.Sleep(200 * time.Millisecond)
	for _, s := range sessions {
		s.n.drain()
	}
	before := up.count("opC")
	for _, s := range sessions {
		wantTools(t, s.name+" after SIGHUP", s.cs, "opA", "opC", "ping")
		wantCall(t, s.name+" after SIGHUP", s.cs, "opC")
		if _, err := call(s.cs, "opB"); err == nil {
			t.Errorf("%s: opB still callable after it was removed", s.name)
		}
		if p := ping(t, s.cs); p.LastReload != "ok" || p.Tools != 2 || p.Degraded {
			t.Errorf("%s: ping after SIGHUP = %+v, want lastReload ok and 2 tools", s.name, p)
		}
	}
	if got := up.count("opC") - before; got != len(sessions) {
		t.Errorf("upstream saw %d GET /ops/opC, want %d", got, len(sessions))
	}
	if up.count("opB") != len(sessions) {
		t.Errorf("upstream saw %d GET /ops/opB, want only the %d before the reload", up.count("opB"), len(sessions))
	}
	for _, p := range procs {
		if l := p.log.last("tools reloaded"); l == nil || l["trigger"] != "SIGHUP" || l["tools"] != float64(2) {
			t.Errorf("%s: tools reloaded log = %v", p.name, l)
		}
	}
	// The removed tool's series left /metrics (they stayed for the life of
	// the process: ~35 per name a reload ever removed); the new one's came.
	if m := scrape(t, hc, httpProc.base+"/metrics"); strings.Contains(m, `tool="opB"`) || !strings.Contains(m, `tool="opC"`) {
		t.Errorf("metrics after opB was removed and opC added:\n%s", grepLines(m, `tool="`))
	}

	// A spec that does not parse: the old tools keep serving.
	writeFile(t, spec, brokenSpec)
	for _, p := range procs {
		p.hup(t)
	}
	for _, s := range sessions {
		p := waitPing(t, s.name+" broken spec", s.cs, 5*time.Second, func(s string) bool { return strings.HasPrefix(s, "failed") })
		if p.Tools != 2 || p.Degraded {
			t.Errorf("%s: ping after a failed reload = %+v", s.name, p)
		}
		wantTools(t, s.name+" broken spec", s.cs, "opA", "opC", "ping")
		wantCall(t, s.name+" broken spec", s.cs, "opC")
		wantCall(t, s.name+" broken spec", s.cs, "opA")
	}
	for _, p := range procs {
		if p.log.count("reload failed; the previous tools keep serving") != 1 {
			t.Errorf("%s: want one reload failed log line", p.name)
		}
	}

	// The bytes the served tools came from again: nothing is rebuilt, no
	// session is notified (the failed reload did not forget them).
	writeFile(t, spec, opsSpec(nil, "opA", "opC"))
	for _, p := range procs {
		p.hup(t)
	}
	for _, s := range sessions {
		waitPing(t, s.name+" unchanged", s.cs, 5*time.Second, is("unchanged"))
	}
	time.Sleep(300 * time.Millisecond) // for a notification that should not come
	for _, s := range sessions {
		s.n.quiet(t, s.name+" after the broken and the unchanged reload", 0)
		wantTools(t, s.name+" unchanged", s.cs, "opA", "opC", "ping")
	}
	for _, p := range procs {
		if n := p.log.count("tools reloaded"); n != 1 {
			t.Errorf("%s: %d reloads swapped tools, want 1", p.name, n)
		}
		if n := p.log.count("tool list changed"); n != 1 {
			t.Errorf("%s: the tool list changed %d times, want 1", p.name, n)
		}
	}
}

// TestReloadSIGHUPRefs reloads a spec whose response schema is a $ref to
// another file: SIGHUP after an edit of that file alone swaps the changed
// tool in, and SIGHUP with nothing edited rebuilds nothing.
func TestReloadSIGHUPRefs(t *testing.T) {
	t.Parallel()
	up := newOpsUpstream(t)
	dir := t.TempDir()
	spec, schemas := filepath.Join(dir, "openapi.yaml"), filepath.Join(dir, "schemas.yaml")
	writeFile(t, spec, []byte(`openapi: 3.0.3
info: {title: Split, version: "1"}
paths:
  /ops/opA:
    get:
      operationId: opA
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                $ref: "./schemas.yaml#/Item"
`))
	item := func(prop string) []byte {
		return []byte("Item:\n  type: object\n  properties:\n    " + prop + ": {type: string}\n")
	}
	writeFile(t, schemas, item("alpha"))
	n := newNotifier()
	p, cs := startStdioProc(t, "stdio", n, "--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--no-cache")
	props := func() string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		lt, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range lt.Tools {
			if tl.Name == "opA" {
				b, _ := json.Marshal(tl.OutputSchema)
				return string(b)
			}
		}
		t.Fatalf("no opA in %v", lt.Tools)
		return ""
	}
	if s := props(); !strings.Contains(s, `"alpha"`) {
		t.Fatalf("opA output schema %s, want the alpha property", s)
	}
	n.drain()

	writeFile(t, schemas, item("beta"))
	p.hup(t)
	n.expect(t, "edited $ref", 5*time.Second)
	if s := props(); !strings.Contains(s, `"beta"`) || strings.Contains(s, `"alpha"`) {
		t.Errorf("opA output schema after the edit %s, want beta and no alpha", s)
	}
	wantCall(t, "edited $ref", cs, "opA")

	p.hup(t)
	waitPing(t, "nothing edited", cs, 5*time.Second, is("unchanged"))
	n.quiet(t, "nothing edited", 100*time.Millisecond)
	if c := p.log.count("tools reloaded"); c != 1 {
		t.Errorf("%d reloads swapped tools, want 1", c)
	}
}

// specServer serves a spec over HTTP with an ETag and a Last-Modified, and
// answers 304 to a conditional GET that matches them.
type specServer struct {
	srv *httptest.Server

	mu                 sync.Mutex
	body               []byte
	etag, lastModified string
	version            int
	status             int // when set, the answer to every GET
	reqs               []specRequest
}

// specRequest is a GET the spec server answered.
type specRequest struct {
	ifNoneMatch, ifModifiedSince string
	status                       int
}

func (r specRequest) conditional() bool { return r.ifNoneMatch != "" || r.ifModifiedSince != "" }

func newSpecServer(t *testing.T, body []byte) *specServer {
	s := &specServer{}
	s.set(body)
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

// set serves body from now on, with new validators; it returns the ETag.
func (s *specServer) set(body []byte) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version++
	sum := sha256.Sum256(body)
	s.body = body
	s.etag = fmt.Sprintf(`"%x"`, sum[:8])
	s.lastModified = time.Unix(1_700_000_000+int64(s.version)*60, 0).UTC().Format(http.TimeFormat)
	return s.etag
}

func (s *specServer) fail(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status = status
}

func (s *specServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	req := specRequest{ifNoneMatch: r.Header.Get("If-None-Match"), ifModifiedSince: r.Header.Get("If-Modified-Since"), status: http.StatusOK}
	defer func() { s.reqs = append(s.reqs, req) }()
	if s.status != 0 {
		req.status = s.status
		w.WriteHeader(s.status)
		return
	}
	w.Header().Set("ETag", s.etag)
	w.Header().Set("Last-Modified", s.lastModified)
	inm, ims := req.ifNoneMatch, req.ifModifiedSince
	if (inm != "" && inm == s.etag) || (inm == "" && ims != "" && ims == s.lastModified) {
		req.status = http.StatusNotModified
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(s.body)
}

// requests returns the GETs answered so far.
func (s *specServer) requests() []specRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// waitRequests waits until ok accepts the GETs answered so far.
func (s *specServer) waitRequests(t *testing.T, what string, timeout time.Duration, ok func([]specRequest) bool) []specRequest {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		reqs := s.requests()
		if ok(reqs) {
			return reqs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; spec GETs so far: %+v", what, timeout, reqs)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestSpecRefresh304 polls a spec URL every second. An unchanged spec
// rebuilds and notifies nothing: the refreshes are conditional GETs (when
// the bridge sends them; it did not before specloader.Refetch) answered
// 304. A changed spec is swapped in with list_changed, and the refreshes
// after it carry the new version's validators. A failing fetch keeps the
// tools.
func TestSpecRefresh304(t *testing.T) {
	t.Parallel()
	up := newOpsUpstream(t)
	ss := newSpecServer(t, opsSpec(nil, "opA"))
	n := newNotifier()
	p, cs := startStdioProc(t, "stdio", n, "--spec", ss.srv.URL+"/openapi.yaml", "--all-operations", "--upstream", up.srv.URL, "--spec-refresh", "1s", "--no-cache")
	wantTools(t, "start", cs, "opA", "ping")
	n.drain()

	// The start and two refreshes.
	reqs := ss.waitRequests(t, "two refreshes of an unchanged spec", 5*time.Second, func(r []specRequest) bool { return len(r) >= 3 })
	waitPing(t, "unchanged spec", cs, 2*time.Second, is("unchanged"))
	n.quiet(t, "unchanged spec", 50*time.Millisecond)
	wantTools(t, "unchanged spec", cs, "opA", "ping")
	t.Logf("spec GETs of the start and two refreshes: %+v", reqs)
	if reqs[0].conditional() {
		t.Errorf("the first GET was conditional: %+v", reqs[0])
	}
	conditional := slices.ContainsFunc(reqs[1:], specRequest.conditional)
	if conditional {
		// Every refresh is conditional on the validators of the start,
		// and the 304 is taken as "unchanged", not as a failure.
		for i, r := range reqs[1:3] {
			if r.status != http.StatusNotModified {
				t.Errorf("refresh %d: %+v, want a conditional GET answered 304", i+1, r)
			}
		}
	} else {
		t.Logf("the bridge sends no conditional GET (If-None-Match/If-Modified-Since) on --spec-refresh")
	}
	if c := p.log.count("tools reloaded"); c != 0 {
		t.Errorf("an unchanged spec was swapped in %d times", c)
	}

	// A new spec: swapped in at the next refresh.
	before := len(ss.requests())
	etag := ss.set(opsSpec(nil, "opA", "opC"))
	n.expect(t, "changed spec", 4*time.Second)
	wantTools(t, "changed spec", cs, "opA", "opC", "ping")
	wantCall(t, "changed spec", cs, "opC")
	if up.count("opC") != 1 {
		t.Errorf("upstream saw %d GET /ops/opC, want 1", up.count("opC"))
	}
	// "unchanged" once the next refresh came (it may have, under load).
	if pr := ping(t, cs); (pr.LastReload != "ok" && pr.LastReload != "unchanged") || pr.Tools != 2 {
		t.Errorf("ping after the change = %+v", pr)
	}
	if l := p.log.last("tools reloaded"); l == nil || l["trigger"] != "spec-refresh" {
		t.Errorf("tools reloaded log = %v, want trigger spec-refresh", l)
	}
	if conditional {
		// The next refresh asks about the new version, and is told 304.
		reqs = ss.waitRequests(t, "a refresh answered 304 after the change", 3*time.Second, func(r []specRequest) bool {
			return slices.ContainsFunc(r[before:], func(r specRequest) bool { return r.status == http.StatusNotModified })
		})
		after := reqs[before:]
		t.Logf("spec GETs from the change to the next 304: %+v", after)
		if last := after[len(after)-1]; last.ifNoneMatch != etag {
			t.Errorf("the refresh after the change sent If-None-Match %q, want the new version's %q", last.ifNoneMatch, etag)
		}
		waitPing(t, "refresh after the change", cs, 2*time.Second, is("unchanged"))
		n.quiet(t, "refresh after the change", 0)
	}

	// The spec server fails: the tools stay.
	ss.fail(http.StatusServiceUnavailable)
	waitPing(t, "spec server failing", cs, 4*time.Second, func(s string) bool { return strings.HasPrefix(s, "failed") })
	wantTools(t, "spec server failing", cs, "opA", "opC", "ping")
	wantCall(t, "spec server failing", cs, "opC")
	n.quiet(t, "spec server failing", 50*time.Millisecond)
	if c := p.log.count("tools reloaded"); c != 1 {
		t.Errorf("%d reloads swapped tools, want 1", c)
	}
}

// TestDegradedRecovers starts with the spec's server down (only ping,
// /ready 503), then brings it up: the retry swaps the tools in, /ready
// turns 200 and a session connected while degraded is notified.
func TestDegradedRecovers(t *testing.T) {
	t.Parallel()
	up := newOpsUpstream(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there until the spec "arrives"

	start := time.Now()
	p := startHTTPProc(t, "http", "--spec", "http://"+addr+"/openapi.yaml", "--all-operations", "--upstream", up.srv.URL, "--stateful", "--no-cache")
	hc := newHTTPClient(t)
	n := newNotifier()
	cs := connect(t, "streamable", n.client(), &mcp.StreamableClientTransport{Endpoint: p.base + "/mcp", HTTPClient: hc})

	if code := ready(t, hc, p.base); code != http.StatusServiceUnavailable {
		t.Errorf("/ready while degraded = %d, want 503", code)
	}
	wantTools(t, "degraded", cs, "ping")
	if pr := ping(t, cs); !pr.Degraded || pr.Reason == "" || pr.Tools != 0 {
		t.Errorf("ping while degraded = %+v", pr)
	}
	if _, err := call(cs, "opA"); err == nil {
		t.Errorf("opA callable while degraded")
	}
	if m := scrape(t, hc, p.base+"/metrics"); !strings.Contains(m, "\nmcpbridge_spec_last_reload_successful 0\n") {
		t.Errorf("metrics while degraded: want mcpbridge_spec_last_reload_successful 0:\n%s", grepLines(m, "spec_"))
	}
	n.drain()

	// The spec arrives.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("re-listening on %s: %v", addr, err)
	}
	specSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(opsSpec(nil, "opA", "opB"))
	}))
	specSrv.Listener.Close()
	specSrv.Listener = ln
	specSrv.Start()
	t.Cleanup(specSrv.Close)
	upAt := time.Since(start)

	deadline := time.Now().Add(5 * time.Second)
	for ready(t, hc, p.base) != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatalf("/ready not 200 within 5s of the spec server starting")
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Logf("recovered %v after start (spec server up at %v)", time.Since(start), upAt)
	n.expect(t, "recovery", 2*time.Second)
	wantTools(t, "recovered", cs, "opA", "opB", "ping")
	wantCall(t, "recovered", cs, "opA")
	if up.count("opA") != 1 {
		t.Errorf("upstream saw %d GET /ops/opA, want 1", up.count("opA"))
	}
	if pr := ping(t, cs); pr.Degraded || pr.Tools != 2 || pr.LastReload != "ok" {
		t.Errorf("ping after recovery = %+v", pr)
	}
	if m := scrape(t, hc, p.base+"/metrics"); !strings.Contains(m, "\nmcpbridge_spec_last_reload_successful 1\n") || strings.Contains(m, "\nmcpbridge_spec_last_reload_success_timestamp_seconds 0\n") {
		t.Errorf("metrics after recovery: want mcpbridge_spec_last_reload_successful 1 and a timestamp:\n%s", grepLines(m, "spec_"))
	}
	p.log.waitCount("tools reloaded", 1, 5*time.Second) // logged beside the swap, read through a pipe
	if l := p.log.last("tools reloaded"); l == nil || l["recovered"] != true || l["trigger"] != "degraded retry" {
		t.Errorf("tools reloaded log = %v, want a recovery by the degraded retry", l)
	}
}

// TestSwapUnderLoad calls tools from 8 goroutines over stateless HTTP,
// stateful HTTP and stdio while the spec is reloaded 50 times, toggling an
// extra operation and the description of a called tool: no call may fail,
// every notifying session hears of every reload, and the test process
// leaks no goroutine.
//
// It is not parallel, so the goroutines goleak sees are its own: the
// parallel tests of the package start only after it has ended.
func TestSwapUnderLoad(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) }) // runs last

	up := newOpsUpstream(t)
	spec := filepath.Join(t.TempDir(), "openapi.yaml")
	version := func(v int) []byte {
		describe := func(op string) string { return fmt.Sprintf("Operation %s, version %d.", op, v) }
		if v%2 == 0 {
			return opsSpec(describe, "opA", "opD")
		}
		return opsSpec(describe, "opA", "opD", "opX")
	}
	writeFile(t, spec, version(0))
	args := []string{"--spec", spec, "--all-operations", "--upstream", up.srv.URL}

	stateless := startHTTPProc(t, "http-stateless", args...)
	stateful := startHTTPProc(t, "http-stateful", append(args, "--stateful")...)
	stdioN := newNotifier()
	stdio, stdioCS := startStdioProc(t, "stdio", stdioN, args...)
	procs := []*proc{stateless, stateful, stdio}
	hc := newHTTPClient(t)

	type worker struct {
		name string
		cs   *mcp.ClientSession
	}
	var workers []worker
	var notifiers []notifier
	for i := range 3 {
		cs := connect(t, "stateless", mcp.NewClient(&mcp.Implementation{Name: "load", Version: "1"}, nil),
			&mcp.StreamableClientTransport{Endpoint: stateless.base + "/mcp", HTTPClient: hc})
		workers = append(workers, worker{fmt.Sprintf("stateless-%d", i), cs})
	}
	for i := range 3 {
		n := newNotifier()
		cs := connect(t, "stateful", n.client(), &mcp.StreamableClientTransport{Endpoint: stateful.base + "/mcp", HTTPClient: hc})
		workers = append(workers, worker{fmt.Sprintf("stateful-%d", i), cs})
		notifiers = append(notifiers, n)
	}
	workers = append(workers, worker{"stdio-0", stdioCS}, worker{"stdio-1", stdioCS})
	notifiers = append(notifiers, stdioN)

	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		failMu   sync.Mutex
		failures []string
		calls    = make([]int, len(workers))
	)
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; !stop.Load(); k++ {
				op := "opA"
				if k%2 == 1 {
					op = "opD"
				}
				text, err := call(w.cs, op)
				if err == nil && text != fmt.Sprintf(`{"op":%q}`, op) {
					err = fmt.Errorf("unexpected result %s", text)
				}
				if err != nil {
					failMu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %s: %v", w.name, op, err))
					failMu.Unlock()
				}
				calls[i]++
			}
		}()
	}
	stopWorkers := sync.OnceFunc(func() { stop.Store(true); wg.Wait() })
	t.Cleanup(stopWorkers) // before the sessions close, on a Fatal

	const reloads = 50
	start := time.Now()
	for i := 1; i <= reloads; i++ {
		writeFile(t, spec, version(i))
		for _, p := range procs {
			p.hup(t)
		}
		for _, p := range procs {
			if !p.log.waitCount("tools reloaded", i, 5*time.Second) {
				t.Fatalf("reload %d: %s did not swap within 5s", i, p.name)
			}
		}
		for j, n := range notifiers {
			n.expect(t, fmt.Sprintf("reload %d, session %d", i, j), 5*time.Second)
		}
	}
	took := time.Since(start)
	stopWorkers()

	total := 0
	for i, c := range calls {
		total += c
		if c < 10 {
			t.Errorf("%s made only %d calls during %d reloads", workers[i].name, c, reloads)
		}
	}
	t.Logf("%d reloads in %v, %d calls", reloads, took, total)
	for _, f := range failures[:min(len(failures), 10)] {
		t.Errorf("failed call: %s", f)
	}
	if len(failures) > 0 {
		t.Errorf("%d of %d calls failed", len(failures), total)
	}
	if got := up.count("opA") + up.count("opD"); got != total-len(failures) {
		t.Errorf("upstream saw %d calls, the clients made %d successful ones", got, total-len(failures))
	}

	// The last version (even: no opX) is what every process serves, its
	// changed description included.
	final := fmt.Sprintf("Operation opD, version %d.", reloads)
	for _, w := range []worker{workers[0], workers[3], workers[6]} {
		wantTools(t, w.name+" final", w.cs, "opA", "opD", "ping")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		lt, err := w.cs.ListTools(ctx, nil)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range lt.Tools {
			if tl.Name == "opD" && !strings.Contains(tl.Description, final) {
				t.Errorf("%s: opD description %q, want it to contain %q", w.name, tl.Description, final)
			}
		}
	}
	for _, p := range procs {
		if c := p.log.count("tools reloaded"); c != reloads {
			t.Errorf("%s: %d reloads, want %d", p.name, c, reloads)
		}
	}
}

// TestDegradedRetrySaysWhyNotFetch checks that a degraded bridge whose spec
// arrives but cannot give the tools (the whitelist names an operation it
// does not have) logs that, as an error, instead of "spec still
// unavailable", which sends the operator to the spec's server.
func TestDegradedRetrySaysWhyNotFetch(t *testing.T) {
	t.Parallel()
	var arrived atomic.Bool
	specSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !arrived.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(opsSpec(nil, "opA"))
	}))
	t.Cleanup(specSrv.Close)
	wl := filepath.Join(t.TempDir(), "whitelist.yaml")
	writeFile(t, wl, []byte("tools:\n  - operationId: opZ\n"))
	p := startHTTPProc(t, "http", "--spec", specSrv.URL+"/openapi.yaml", "--whitelist", wl, "--upstream", "http://127.0.0.1:1", "--no-cache")
	if !p.log.waitCount("spec still unavailable; serving only ping", 1, 5*time.Second) {
		t.Fatal("no degraded retry within 5s")
	}
	arrived.Store(true)
	const want = "spec fetched, but the tools cannot be built; serving only ping"
	if !p.log.waitCount(want, 1, 10*time.Second) {
		t.Fatalf("no %q within 10s of the spec arriving", want)
	}
	if l := p.log.last(want); l["level"] != "error" || !strings.Contains(fmt.Sprint(l["error"]), "opZ") {
		t.Errorf("logged %v; want an error naming opZ", l)
	}
}

// TestReloadDropsReplacedCacheEntry checks that a reload which swaps in
// tools built from a changed spec removes the tool cache entry of the
// tools it replaced: with --spec-refresh on a spec that changes, the cache
// directory would otherwise grow by one entry (GitHub's: 3.7 MB) per change.
func TestReloadDropsReplacedCacheEntry(t *testing.T) {
	t.Parallel()
	up := newOpsUpstream(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	spec := filepath.Join(dir, "openapi.yaml")
	writeFile(t, spec, opsSpec(nil, "opA"))
	entries := func() []string {
		m, _ := filepath.Glob(filepath.Join(cache, "*.tools"))
		return m
	}
	p := startHTTPProc(t, "http", "--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--cache-dir", cache)
	deadline := time.Now().Add(5 * time.Second)
	for len(entries()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no cache entry written within 5s of the start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // the entry is rewritten with the encoded list
	for i, ops := range [][]string{{"opA", "opB"}, {"opA", "opB", "opC"}} {
		writeFile(t, spec, opsSpec(nil, ops...))
		p.hup(t)
		if !p.log.waitCount("tools reloaded", i+1, 5*time.Second) {
			t.Fatalf("reload %d: no swap within 5s", i+1)
		}
	}
	if got := entries(); len(got) != 1 {
		t.Errorf("%d cache entries after two reloads, want 1 (the served tools'): %v", len(got), got)
	}
}

// TestReloadCancelledByShutdown stops the bridge (SIGTERM) while a reload
// waits for the spec URL. The reload is abandoned, not failed: no "reload
// failed" error in the log (it used to say "reload failed; the previous
// tools keep serving ... context canceled" at every shutdown that met a
// reload).
func TestReloadCancelledByShutdown(t *testing.T) {
	t.Parallel()
	up := newOpsUpstream(t)
	body := opsSpec(nil, "opA")
	var gets atomic.Int32
	blocked := make(chan struct{}, 1)
	ss := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gets.Add(1) > 1 { // every fetch after the first hangs until the bridge gives up
			select {
			case blocked <- struct{}{}:
			default:
			}
			<-r.Context().Done()
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		w.Write(body)
	}))
	t.Cleanup(ss.Close)
	var p *proc
	// Registered first, so run last: after the bridge has exited.
	t.Cleanup(func() {
		if p == nil {
			return
		}
		if n := p.log.count("reload failed; the previous tools keep serving"); n != 0 {
			t.Errorf("a reload cancelled by the shutdown was logged as failed (%d times)", n)
		}
	})
	p = startHTTPProc(t, "http", "--spec", ss.URL+"/openapi.yaml", "--all-operations", "--upstream", up.srv.URL, "--no-cache", "--no-auth")
	p.hup(t)
	select {
	case <-blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("the reload did not fetch the spec within 10s")
	}
	// The cleanup sends SIGTERM with the reload still waiting.
}

// TestReloadSaysConfigChangesWaitForRestart edits the config file and
// sends SIGHUP: the reload re-reads the spec and the whitelist only, and
// says once that the file's new settings wait for the next start.
func TestReloadSaysConfigChangesWaitForRestart(t *testing.T) {
	t.Parallel()
	up := newOpsUpstream(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "openapi.yaml")
	writeFile(t, spec, opsSpec(nil, "opA"))
	cfg := filepath.Join(dir, "config.yaml")
	writeFile(t, cfg, []byte("timeout: 20s\n"))
	p := startHTTPProc(t, "http", "--config", cfg, "--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--no-cache", "--no-auth")
	const msg = "config file changed: its settings take effect at the next start; a reload re-reads only the spec and the whitelist"

	writeFile(t, cfg, []byte("timeout: 5s\n"))
	p.hup(t)
	if !p.log.waitCount(msg, 1, 5*time.Second) {
		t.Fatalf("no %q log line after the config file changed", msg)
	}
	p.hup(t) // the same changed content: said once
	writeFile(t, spec, opsSpec(nil, "opA", "opB"))
	p.hup(t)
	if !p.log.waitCount("tools reloaded", 1, 5*time.Second) {
		t.Fatal("the spec edit was not reloaded")
	}
	if n := p.log.count(msg); n != 1 {
		t.Errorf("%q logged %d times, want once", msg, n)
	}
}

// scrape returns the text of GET url.
func scrape(t *testing.T, hc *http.Client, url string) string {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// TestReloadRepeatsNoWarning checks that a reload which swaps the tools
// logs only the warnings the build before it did not: a spec's repairs
// came again on every SIGHUP, burying the new one. The first start's
// warnings (some of them from its deferred validation) count as logged.
func TestReloadRepeatsNoWarning(t *testing.T) {
	t.Parallel()
	up := newOpsUpstream(t)
	spec := filepath.Join(t.TempDir(), "openapi.yaml")
	op := func(name, pattern string) string {
		return fmt.Sprintf(`  /ops/%s:
    get:
      operationId: %s
      parameters:
        - {name: q, in: query, schema: {type: string, pattern: %q}}
      responses:
        "200": {description: ok, content: {application/json: {schema: {type: object}}}}
`, name, name, pattern)
	}
	head := "openapi: 3.0.3\ninfo: {title: Repairs, version: \"1\"}\npaths:\n"
	// Go's regexp reads neither lookahead: each pattern is dropped, a repair.
	writeFile(t, spec, []byte(head+op("opA", "^(?=a).*$")))
	n := newNotifier()
	p, cs := startStdioProc(t, "stdio", n, "--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--no-cache")
	wantTools(t, "start", cs, "opA", "ping")
	repairsOf := func(op string) int {
		p.log.mu.Lock()
		defer p.log.mu.Unlock()
		c := 0
		for _, l := range p.log.lines {
			if l["msg"] == "spec repaired" && l["op"] == "GET /ops/"+op {
				c++
			}
		}
		return c
	}
	if got := repairsOf("opA"); got != 1 {
		t.Fatalf("opA's repair logged %d times at start, want 1", got)
	}
	n.drain()

	writeFile(t, spec, []byte(head+op("opA", "^(?=a).*$")+op("opB", "^(?!b).*$")))
	p.hup(t)
	n.expect(t, "opB added", 5*time.Second)
	if !p.log.waitCount("tools reloaded", 1, 5*time.Second) {
		t.Fatal("no reload logged")
	}
	if got := repairsOf("opA"); got != 1 {
		t.Errorf("opA's repair logged %d times after a reload, want 1 (not repeated)", got)
	}
	if got := repairsOf("opB"); got != 1 {
		t.Errorf("opB's repair (new) logged %d times, want 1", got)
	}
	l := p.log.last("warnings the last build logged too are not repeated; `mcpbridge validate` lists them all")
	if l == nil || l["warnings"].(float64) < 1 {
		t.Errorf("no line saying how many warnings were left out: %v", l)
	}
	// A call-time warning is never left out: the catalog's logger passes
	// everything once its build is over.
	wantCall(t, "after reload", cs, "opB")
}
