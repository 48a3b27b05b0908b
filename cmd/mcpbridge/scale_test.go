package main

import (
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestScaleOut runs two stateless replicas behind a round-robin reverse
// proxy: one client's calls succeed whichever replica answers, both
// replicas serve, and reloading one of them (SIGHUP with a new spec) does
// not disturb calls through the other.
func TestScaleOut(t *testing.T) {
	t.Parallel()
	up := newOpsUpstream(t)
	dir := t.TempDir()
	specA, specB := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	writeFile(t, specA, opsSpec(nil, "opA"))
	writeFile(t, specB, opsSpec(nil, "opA"))
	args := func(spec string) []string {
		return []string{"--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--no-cache"}
	}
	r1 := startHTTPProc(t, "replica1", args(specA)...)
	r2 := startHTTPProc(t, "replica2", args(specB)...)
	var n atomic.Int64
	var served [2]atomic.Int64
	backends := []*url.URL{mustURL(t, r1.base), mustURL(t, r2.base)}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		i := int(n.Add(1)) % 2
		served[i].Add(1)
		pr.SetURL(backends[i])
		pr.Out.Host = pr.In.Host // the replicas check Host like any loopback server
	}}
	lb := httptest.NewServer(proxy)
	t.Cleanup(lb.Close)

	cs := connect(t, "through the proxy", mcp.NewClient(&mcp.Implementation{Name: "scale", Version: "1"}, nil),
		&mcp.StreamableClientTransport{Endpoint: lb.URL + "/mcp", HTTPClient: newHTTPClient(t), MaxRetries: -1, DisableStandaloneSSE: true})
	for range 10 {
		wantCall(t, "round robin", cs, "opA")
	}
	if served[0].Load() == 0 || served[1].Load() == 0 {
		t.Fatalf("requests per replica %d/%d: the proxy did not reach both", served[0].Load(), served[1].Load())
	}

	// Reload replica 2 with one more operation while calls keep flowing.
	writeFile(t, specB, opsSpec(nil, "opA", "opB"))
	before := r2.log.count("tools reloaded")
	stop := make(chan struct{})
	failures := make(chan error, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := call(cs, "opA"); err != nil {
				failures <- err
			}
		}
	}()
	r2.hup(t)
	if !r2.log.waitCount("tools reloaded", before+1, 10*time.Second) {
		t.Fatal("replica 2 did not reload")
	}
	time.Sleep(100 * time.Millisecond) // a few more calls on the new set
	close(stop)
	<-done
	close(failures)
	for err := range failures {
		t.Errorf("a call failed during the other replica's reload: %v", err)
	}
	if r1.log.count("tools reloaded") != 0 {
		t.Error("replica 1 reloaded too")
	}
	if up.count("opA") < 10 {
		t.Errorf("upstream saw %d calls", up.count("opA"))
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
