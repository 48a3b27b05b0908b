package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpbridge/mcpbridge/bridge/observe"
)

// TestMetricsListenScreened checks that --metrics-listen applies the Host
// and Origin policy of the HTTP listener's /metrics: on a loopback address,
// a request naming another host (a page that reached it by DNS rebinding)
// or from a foreign browser origin gets 403, while a scraper gets the
// metrics.
func TestMetricsListenScreened(t *testing.T) {
	m, err := observe.NewMetrics(prometheus.NewRegistry(), "test")
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.InfoLevel)
	a := &app{cfg: &Config{MetricsListen: "127.0.0.1:0"}, log: zap.New(core), metrics: m}
	ctx, cancel := context.WithCancel(t.Context())
	done, err := a.serveMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); <-done }()
	lines := logs.FilterMessage("metrics listening").All()
	if len(lines) != 1 {
		t.Fatalf("no \"metrics listening\" line: %v", logs.All())
	}
	url := lines[0].ContextMap()["url"].(string)
	client := &http.Client{Timeout: 5 * time.Second}
	for _, tc := range []struct {
		name, host, origin string
		want               int
	}{
		{"scraper", "", "", http.StatusOK},
		{"localhost", "localhost", "", http.StatusOK},
		{"rebound host", "evil.example", "", http.StatusForbidden},
		{"rebound page", "evil.example", "http://evil.example", http.StatusForbidden},
		{"foreign origin", "", "http://evil.example", http.StatusForbidden},
	} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var body strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		body.Write(buf[:n])
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.want)
		}
		if tc.want == http.StatusForbidden && strings.Contains(body.String(), "mcpbridge_") {
			t.Errorf("%s: refused, yet the body holds metrics", tc.name)
		}
	}
}

// TestMetricsListenMovesMetrics: with --metrics-listen, /metrics is served
// on that address only. It names every tool that was called, those an
// access list hides from other callers included, and the HTTP listener
// serves it without a credential: an operator who gives the metrics an
// internal address found them on the public listener as well.
func TestMetricsListenMovesMetrics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	maddr := ln.Addr().String()
	ln.Close()
	get := func(url string) int {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	base := startHTTPBridge(t, "serve", "--spec", "testdata/e2e.yaml", "--all-operations",
		"--upstream", "http://127.0.0.1:9/", "--metrics-listen", maddr)
	if got := get("http://" + maddr + "/metrics"); got != http.StatusOK {
		t.Errorf("--metrics-listen /metrics: %d, want 200", got)
	}
	if got := get(base + "/metrics"); got != http.StatusNotFound {
		t.Errorf("--listen /metrics with --metrics-listen set: %d, want 404", got)
	}
	// Without --metrics-listen the HTTP listener serves them as before.
	base = startHTTPBridge(t, "serve", "--spec", "testdata/e2e.yaml", "--all-operations", "--upstream", "http://127.0.0.1:9/")
	if got := get(base + "/metrics"); got != http.StatusOK {
		t.Errorf("--listen /metrics: %d, want 200", got)
	}
}
