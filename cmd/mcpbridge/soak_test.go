package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// The soak test (issue 9): thousands of calls at a concurrency well above
// --max-concurrency, over streamable HTTP (the real server code, run() in
// this process, so that its heap and goroutines can be measured) and over
// stdio (the program's main in a child process, the test binary re-executed
// as the other end-to-end tests do, measured by its RSS and the
// go_goroutines of its own /metrics), against an upstream that fails one
// call in ten, half with HTTP 500 and half with a connection reset.
//
// It runs without -race only (CI: go test -run Soak ./cmd/mcpbridge/), in
// about ten seconds on two cores (about 50 s under -race, where it also
// passes).
const (
	soakCalls       = 3000 // per transport, after the warm-up
	soakWarmup      = 300
	soakConcurrency = 64 // client calls in flight
	soakMaxConc     = 16 // --max-concurrency
	soakMaxQueue    = 64 // --max-queue: room for every waiting call, so none is refused as busy
)

const soakSpec = `openapi: 3.0.3
info: {title: soak, version: "1"}
servers: [{url: "http://127.0.0.1:9"}]
paths:
  /items/{id}:
    get:
      operationId: getItem
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: the item
          content:
            application/json:
              schema:
                type: object
                properties:
                  id: {type: integer}
                  name: {type: string}
`

// soakFault is what the upstream does with call n: one in ten fails,
// alternately with HTTP 500 and a connection reset.
func soakFault(n int) string {
	switch {
	case n%10 != 0:
		return ""
	case (n/10)%2 == 0:
		return "500"
	default:
		return "reset"
	}
}

// soakUpstream answers GET /items/{n} after a millisecond (so that calls
// overlap and the concurrency limit is reached), or fails as soakFault says.
// It counts requests in flight and open connections, and their maxima.
type soakUpstream struct {
	srv                 *httptest.Server
	active, maxActive   atomic.Int64
	conns, maxConns     atomic.Int64
	requests, s500, rst atomic.Int64

	mu       sync.Mutex
	attempts map[int]int // per id that the upstream resets
}

func newSoakUpstream(t *testing.T) *soakUpstream {
	u := &soakUpstream{attempts: make(map[int]int, 1024)} // sized now: the heap is measured
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(u.serve))
	u.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			raise(&u.maxConns, u.conns.Add(1))
		case http.StateClosed, http.StateHijacked:
			u.conns.Add(-1)
		}
	}
	u.srv.Start()
	t.Cleanup(u.srv.Close)
	return u
}

func raise(max *atomic.Int64, v int64) {
	for {
		m := max.Load()
		if v <= m || max.CompareAndSwap(m, v) {
			return
		}
	}
}

func (u *soakUpstream) serve(w http.ResponseWriter, r *http.Request) {
	raise(&u.maxActive, u.active.Add(1))
	done := sync.OnceFunc(func() { u.active.Add(-1) })
	defer done()
	u.requests.Add(1)
	n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/items/"))
	if err != nil {
		http.Error(w, "bad id", http.StatusBadRequest)
		return
	}
	time.Sleep(time.Millisecond)
	switch soakFault(n) {
	case "500":
		u.s500.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"injected failure"}`)
	case "reset":
		u.rst.Add(1)
		u.mu.Lock()
		u.attempts[n]++
		u.mu.Unlock()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			tc.SetLinger(0) // RST, not FIN
		}
		done() // before the reset: the client may send the next request at once
		conn.Close()
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%d,"name":"item %d"}`, n, n)
	}
}

// soakLog is a bridge's stderr (--log-format json): it keeps the
// addresses the bridge announces and counts lines per level, storing
// nothing else (the in-process heap is measured).
type soakLog struct {
	t       *testing.T
	mu      sync.Mutex
	partial []byte
	levels  map[string]int
	shown   int
	addr    chan string // "listening": the HTTP address
	metrics chan string // "metrics listening": the /metrics URL
}

func newSoakLog(t *testing.T) *soakLog {
	return &soakLog{t: t, levels: map[string]int{}, addr: make(chan string, 1), metrics: make(chan string, 1)}
}

func (l *soakLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		var m struct{ Level, Msg, Addr, URL string }
		if json.Unmarshal(l.partial[:i], &m) != nil {
			m.Level = "unparsed"
		}
		l.levels[m.Level]++
		switch {
		case m.Msg == "listening":
			l.addr <- m.Addr
		case m.Msg == "metrics listening":
			l.metrics <- m.URL
		case m.Msg == "tool call", m.Msg == "tool call failed", m.Msg == "upstream request failed", m.Msg == "upstream error status":
			// per-call lines are counted, not shown
		case l.shown < 40:
			l.shown++
			l.t.Logf("bridge stderr: %s", l.partial[:i])
		}
		l.partial = l.partial[i+1:]
	}
	return len(p), nil
}

func (l *soakLog) counts() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.levels)
}

// soakStats is one transport's run.
type soakStats struct {
	calls, protocolErrs, isErrors, wrong int
	lat                                  []time.Duration
	examples                             []string
	took                                 time.Duration
}

// soakRun makes st.calls calls from first on, from conc goroutines on cs, and
// checks each result: a protocol error never, isError exactly for the
// calls the upstream fails, and a success carrying its item.
func soakRun(cs *mcp.ClientSession, st *soakStats, first, conc int) {
	n := st.calls
	var mu sync.Mutex
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(st.examples) < 5 {
			st.examples = append(st.examples, fmt.Sprintf(format, args...))
		}
	}
	var next atomic.Int64
	var protocolErrs, isErrors, wrong atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				id := first + i
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				t0 := time.Now()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "getItem", Arguments: map[string]any{"id": id}})
				st.lat[i] = time.Since(t0)
				cancel()
				if err != nil {
					protocolErrs.Add(1)
					fail("call %d: protocol error: %v", id, err)
					continue
				}
				var text strings.Builder
				for _, c := range res.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						text.WriteString(tc.Text)
					}
				}
				if res.IsError {
					isErrors.Add(1)
				}
				fault := soakFault(id)
				switch {
				case res.IsError != (fault != ""):
					wrong.Add(1)
					fail("call %d (fault %q): isError=%v: %s", id, fault, res.IsError, text.String())
				case fault == "" && !strings.Contains(text.String(), fmt.Sprintf(`"item %d"`, id)):
					wrong.Add(1)
					fail("call %d: success without its item: %s", id, text.String())
				}
			}
		}()
	}
	wg.Wait()
	st.took = time.Since(start)
	st.protocolErrs, st.isErrors, st.wrong = int(protocolErrs.Load()), int(isErrors.Load()), int(wrong.Load())
}

// newSoakStats allocates before the warm-up what a run of n calls
// records, so that the heap compared is the bridge's.
func newSoakStats(n int) *soakStats {
	return &soakStats{calls: n, lat: make([]time.Duration, n), examples: make([]string, 0, 5)}
}

func soakFaults(first, n int) (failures int) {
	for id := first; id < first+n; id++ {
		if soakFault(id) != "" {
			failures++
		}
	}
	return failures
}

// check reports st's failures and logs its figures.
func (st *soakStats) check(t *testing.T, name string, first int, u *soakUpstream) {
	t.Helper()
	want := soakFaults(first, st.calls)
	slices.Sort(st.lat)
	p := func(q float64) time.Duration {
		return st.lat[int(q*float64(len(st.lat)-1))].Round(10 * time.Microsecond)
	}
	t.Logf("%s: %d calls at concurrency %d in %v (%.0f calls/s): %d failures injected (%d HTTP 500, %d resets), %d isError, %d protocol errors, %d wrong results; latency p50 %v, p99 %v, max %v",
		name, st.calls, soakConcurrency, st.took.Round(time.Millisecond), float64(st.calls)/st.took.Seconds(),
		want, want-want/2, want/2, st.isErrors, st.protocolErrs, st.wrong, p(0.5), p(0.99), st.lat[len(st.lat)-1].Round(10*time.Microsecond))
	u.mu.Lock()
	maxAttempts := 0
	for _, a := range u.attempts {
		maxAttempts = max(maxAttempts, a)
	}
	resetCalls := len(u.attempts)
	u.mu.Unlock()
	// --retries 0 stops the bridge's retries, not net/http's: a GET whose
	// reused keep-alive connection is reset before any answer is sent
	// again on the next pooled connection, as long as that one was reused
	// too, so a reset call reaches the upstream several times.
	t.Logf("%s: upstream (warm-up included): %d requests, %d HTTP 500 sent, %d connections reset for %d calls (up to %d times for one call: net/http resends a GET on another pooled connection), at most %d requests in flight (--max-concurrency %d), at most %d connections open",
		name, u.requests.Load(), u.s500.Load(), u.rst.Load(), resetCalls, maxAttempts, u.maxActive.Load(), soakMaxConc, u.maxConns.Load())
	for _, e := range st.examples {
		t.Error(e)
	}
	if st.protocolErrs != 0 {
		t.Errorf("%s: %d protocol errors, want 0", name, st.protocolErrs)
	}
	if st.isErrors != want || st.wrong != 0 {
		t.Errorf("%s: %d isError results and %d wrong results, want %d isError (the injected failures) and 0 wrong", name, st.isErrors, st.wrong, want)
	}
	if m := u.maxActive.Load(); m > soakMaxConc {
		t.Errorf("%s: the upstream saw %d requests in flight, over --max-concurrency %d", name, m, soakMaxConc)
	}
}

func soakArgs(t *testing.T, u *soakUpstream) []string {
	spec := filepath.Join(t.TempDir(), "soak.yaml")
	if err := os.WriteFile(spec, []byte(soakSpec), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"serve", "--spec", spec, "--all-operations", "--upstream", u.srv.URL,
		"--retries", "0", // no retry by the bridge, so each injected failure reaches the client (net/http's resends: see check)
		"--max-concurrency", strconv.Itoa(soakMaxConc), "--max-queue", strconv.Itoa(soakMaxQueue),
		"--no-cache", "--log-format", "json"}
}

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func TestSoak(t *testing.T) {
	if raceEnabled {
		t.Skip("run without -race (CI: go test -run Soak ./cmd/mcpbridge/): under the race detector it takes about 50 s instead of 10 and its memory figures mean little")
	}
	if testing.Short() {
		t.Skip("soak test: not in -short")
	}

	t.Run("streamable HTTP in process", func(t *testing.T) {
		u := newSoakUpstream(t)
		args := append(soakArgs(t, u), "--transport", "http", "--listen", "127.0.0.1:0", "--api-key", "soak-key")
		// Everything running now (the upstream, other tests' leftovers) is
		// not the bridge's.
		ignore := goleak.IgnoreCurrent()
		goroutinesBefore := runtime.NumGoroutine()

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		log := newSoakLog(t)
		done := make(chan error, 1)
		go func() { done <- run(ctx, args, strings.NewReader(""), io.Discard, log) }()
		var addr string
		select {
		case addr = <-log.addr:
		case err := <-done:
			t.Fatalf("bridge exited before listening: %v", err)
		case <-time.After(20 * time.Second):
			t.Fatal("bridge did not listen within 20s")
		}

		tr := &http.Transport{MaxIdleConnsPerHost: soakConcurrency}
		hc := &http.Client{Transport: bearer{"soak-key", tr}}
		c := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}

		warm, st := newSoakStats(soakWarmup), newSoakStats(soakCalls)
		soakRun(cs, warm, 0, soakConcurrency)
		if warm.protocolErrs+warm.wrong != 0 {
			t.Errorf("warm-up: %d protocol errors, %d wrong results: %q", warm.protocolErrs, warm.wrong, warm.examples)
		}
		// Measured with no keep-alive connection left on either side, whose
		// buffers and goroutines would otherwise vary with the pools.
		settle := func() (heap uint64, goroutines int) {
			tr.CloseIdleConnections()
			u.srv.CloseClientConnections()
			goroutines = runtime.NumGoroutine()
			for range 40 {
				time.Sleep(50 * time.Millisecond)
				n := runtime.NumGoroutine()
				if n == goroutines {
					break
				}
				goroutines = n
			}
			return heapAlloc(), goroutines
		}
		heapWarm, goroutinesWarm := settle()
		soakRun(cs, st, soakWarmup, soakConcurrency)
		heapAfter, goroutinesAfter := settle()
		st.check(t, "streamable HTTP", soakWarmup, u)

		if err := cs.Close(); err != nil {
			t.Errorf("close session: %v", err)
		}
		tr.CloseIdleConnections()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("run did not return within 20s of cancel")
		}
		leak := goleak.Find(ignore)
		goroutinesStopped := runtime.NumGoroutine()

		t.Logf("streamable HTTP: heap (this process: bridge and client, after GC, idle connections closed) %.1f MiB after warm-up, %.1f MiB after the run (%+.1f%%); goroutines %d before start, %d after warm-up, %d after the run (idle connections closed), %d after stop; log lines by level %s",
			mib(heapWarm), mib(heapAfter), pct(heapWarm, heapAfter), goroutinesBefore, goroutinesWarm, goroutinesAfter, goroutinesStopped, log.counts())
		if float64(heapAfter) > 1.10*float64(heapWarm) {
			t.Errorf("heap grew from %d to %d bytes over the run, more than 10%%", heapWarm, heapAfter)
		}
		if goroutinesAfter > goroutinesWarm+2 {
			t.Errorf("goroutines grew from %d after warm-up to %d after the run", goroutinesWarm, goroutinesAfter)
		}
		if leak != nil {
			t.Errorf("goroutines left after the bridge stopped: %v", leak)
		}
	})

	t.Run("stdio child process", func(t *testing.T) {
		u := newSoakUpstream(t)
		cmd := bridgeCmd(append(soakArgs(t, u)[1:], "--metrics-listen", "127.0.0.1:0")...)
		log := newSoakLog(t)
		cmd.Stderr = log
		c := mcp.NewClient(&mcp.Implementation{Name: "soak", Version: "1"}, nil)
		cs, err := c.Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		closed := false
		defer func() {
			if !closed {
				cs.Close()
			}
		}()
		var metricsURL string
		select {
		case metricsURL = <-log.metrics:
		case <-time.After(20 * time.Second):
			t.Fatal("no \"metrics listening\" line within 20s")
		}
		pid := cmd.Process.Pid

		warm, st := newSoakStats(soakWarmup), newSoakStats(soakCalls)
		soakRun(cs, warm, 0, soakConcurrency)
		if warm.protocolErrs+warm.wrong != 0 {
			t.Errorf("warm-up: %d protocol errors, %d wrong results: %q", warm.protocolErrs, warm.wrong, warm.examples)
		}
		rssWarm, goroutinesWarm := vmRSS(t, pid), goGoroutines(t, metricsURL)
		soakRun(cs, st, soakWarmup, soakConcurrency)
		rssAfter, goroutinesAfter := vmRSS(t, pid), goGoroutines(t, metricsURL)
		st.check(t, "stdio", soakWarmup, u)

		closed = true
		if err := cs.Close(); err != nil {
			t.Errorf("close (the child's exit): %v", err)
		}
		t.Logf("stdio: child RSS %.1f MiB after warm-up, %.1f MiB after the run (%+.1f%%); child goroutines (its /metrics) %d after warm-up, %d after the run; exit status 0 on stdin close; log lines by level %s",
			mib(rssWarm), mib(rssAfter), pct(rssWarm, rssAfter), goroutinesWarm, goroutinesAfter, log.counts())
		const slack = 4 << 20
		if float64(rssAfter) > 1.10*float64(rssWarm)+slack {
			t.Errorf("child RSS grew from %d to %d bytes over the run, more than 10%% + 4 MiB", rssWarm, rssAfter)
		}
		if goroutinesAfter > goroutinesWarm+soakConcurrency/4 {
			t.Errorf("child goroutines grew from %d after warm-up to %d after the run", goroutinesWarm, goroutinesAfter)
		}
	})
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

func pct(before, after uint64) float64 {
	return 100 * (float64(after) - float64(before)) / float64(before)
}

// vmRSS is the resident set size of process pid, from /proc.
func vmRSS(t *testing.T, pid int) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the child's RSS: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS line %q: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

// goGoroutines reads go_goroutines from a Prometheus /metrics page.
func goGoroutines(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("go_goroutines line %q: %v", line, err)
			}
			return int(n)
		}
	}
	t.Fatalf("no go_goroutines in %s", url)
	return 0
}
