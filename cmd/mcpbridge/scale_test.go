package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
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

// TestSessionsBehindNonStickyProxy runs two --stateful replicas behind a
// round-robin proxy without session affinity, the misconfiguration the
// README warns about: a request naming a session that the other replica
// opened gets the transport's 404, and its body says why (the session may
// live on another replica; sessions need affinity) instead of go-sdk's bare
// "session not found", for streamable HTTP and for the legacy SSE
// transport alike.
func TestSessionsBehindNonStickyProxy(t *testing.T) {
	t.Parallel()
	up := newOpsUpstream(t)
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	writeFile(t, spec, opsSpec(nil, "opA"))
	args := []string{"--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--no-cache", "--stateful"}
	r1 := startHTTPProc(t, "replica1", args...)
	r2 := startHTTPProc(t, "replica2", args...)
	var n atomic.Int64
	backends := []*url.URL{mustURL(t, r1.base), mustURL(t, r2.base)}
	lb := httptest.NewServer(&httputil.ReverseProxy{FlushInterval: -1, Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(backends[int(n.Add(1)-1)%2])
		pr.Out.Host = pr.In.Host
	}})
	t.Cleanup(lb.Close)
	hc := newHTTPClient(t)
	post := func(path, session, body string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "POST", lb.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}
	wantHint := func(what string, resp *http.Response, body, transport string) {
		t.Helper()
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "another replica") || !strings.Contains(body, "session affinity") || !strings.Contains(body, transport) {
			t.Errorf("%s: %d %q; want 404 saying the session may be on another replica and %s needs session affinity", what, resp.StatusCode, body, transport)
		}
	}

	// Streamable HTTP: initialize lands on one replica, the next request on the other.
	resp, _ := post("/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"lb","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize through the proxy: %d, session %q", resp.StatusCode, session)
	}
	resp, body := post("/mcp", session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	wantHint("stateful request on the other replica", resp, body, "stateful sessions")

	// Legacy SSE: the stream opens on one replica, its message goes to the other.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", lb.URL+"/sse", nil)
	stream, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	endpoint := ""
	for sc := bufio.NewScanner(stream.Body); sc.Scan(); {
		if rest, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			endpoint = rest
			break
		}
	}
	if !strings.HasPrefix(endpoint, "/messages?") {
		t.Fatalf("SSE endpoint event %q", endpoint)
	}
	resp, body = post(endpoint, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"lb","version":"1"}}}`)
	wantHint("SSE message on the other replica", resp, body, "SSE transport")
}

// TestLoopbackBehindHostPreservingProxy: a bridge listening on 127.0.0.1
// behind a reverse proxy on the same machine or pod (a sidecar's Envoy,
// Caddy, oauth2-proxy...) that passes the client's Host on. Its DNS-
// rebinding check refused every request, /ready included, with 403 and
// nothing could be configured to serve it; --allowed-host names the public
// host, which is then served on /mcp (go-sdk client), /sse and /ready,
// while another Host still gets 403.
func TestLoopbackBehindHostPreservingProxy(t *testing.T) {
	t.Parallel()
	up := newOpsUpstream(t)
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	writeFile(t, spec, opsSpec(nil, "opA"))
	args := []string{"--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--no-cache", "--api-key", "k1"}
	behind := func(p *proc, host string) *httptest.Server {
		target := mustURL(t, p.base)
		lb := httptest.NewServer(&httputil.ReverseProxy{FlushInterval: -1, Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = host // the public name the client used
		}})
		t.Cleanup(lb.Close)
		return lb
	}
	hc := &http.Client{Transport: bearer{"k1", http.DefaultTransport}}
	get := func(url string) (int, string) {
		t.Helper()
		resp, err := hc.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.Header.Get("Content-Type") == "text/event-stream" {
			line, _ := bufio.NewReader(resp.Body).ReadString('\n')
			return resp.StatusCode, line
		}
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}

	plain := behind(startHTTPProc(t, "no-allowed-host", args...), "mcp.example.com")
	if status, body := get(plain.URL + "/ready"); status != http.StatusForbidden {
		t.Errorf("without --allowed-host, /ready for Host mcp.example.com = %d %q; want the DNS-rebinding 403", status, body)
	}

	p := startHTTPProc(t, "allowed-host", append(args, "--allowed-host", "mcp.example.com")...)
	lb := behind(p, "mcp.example.com")
	if status, body := get(lb.URL + "/ready"); status != http.StatusOK {
		t.Errorf("/ready through the proxy = %d %q; want 200", status, body)
	}
	if status, body := get(lb.URL + "/sse"); status != http.StatusOK || !strings.Contains(body, "endpoint") {
		t.Errorf("/sse through the proxy = %d %q; want its endpoint event", status, body)
	}
	cs := connect(t, "through the Host-preserving proxy", mcp.NewClient(&mcp.Implementation{Name: "sidecar", Version: "1"}, nil),
		&mcp.StreamableClientTransport{Endpoint: lb.URL + "/mcp", HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true})
	wantCall(t, "allowed host", cs, "opA")
	if status, body := get(behind(p, "evil.example.com").URL + "/ready"); status != http.StatusForbidden {
		t.Errorf("a Host not listed = %d %q; want 403", status, body)
	}
}
