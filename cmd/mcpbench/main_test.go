package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMain lets the test binary act as mcpbench's floor server: the bench
// re-executes os.Executable() with "floor" as the first argument.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "floor" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcpbench floor:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type nopWriteCloser struct{ *bytes.Buffer }

func (nopWriteCloser) Close() error { return nil }

// TestShortRun runs `mcpbench --short` end to end (it builds mcpbridge)
// and checks that the JSON report has results for every target. The
// throughput cells are halved: under -race the client and the floor (this
// test binary) are several times slower.
func TestShortRun(t *testing.T) {
	jsonPath := filepath.Join(t.TempDir(), "bench.json")
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err := run(t.Context(), []string{"--short", "--duration", "50ms", "--json", jsonPath}, os.Stdin, nopWriteCloser{&stdout}, &stderr)
	t.Logf("mcpbench --short took %s\n%s\n%s", time.Since(start).Round(time.Millisecond), stderr.String(), stdout.String())
	if err != nil {
		t.Fatalf("mcpbench --short: %v\nstderr:\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("decoding the JSON report: %v", err)
	}

	targets := []string{tDirect, tFloorStdio, tFloorHTTP, tFloorSCStdio, tFloorSCHTTP, tBridgeStdio, tBridgeHTTP}
	sizes := []string{"small", "16k", "1m", "16k-pretty"}
	type cell struct{ Target, Size string }
	var want, got []cell
	for _, s := range sizes {
		for _, tg := range targets {
			want = append(want, cell{tg, s})
		}
	}
	for _, l := range rep.Latency {
		if l.N > 0 && l.P50 > 0 {
			got = append(got, cell{l.Target, l.Size})
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("latency results (-want +got):\n%s", diff)
	}

	type tcell struct {
		Target, Size string
		C            int
	}
	var wantT, gotT []tcell
	for _, c := range []int{1, 8, 32} {
		for _, s := range []string{"small", "16k"} {
			for _, tg := range targets {
				wantT = append(wantT, tcell{tg, s, c})
			}
		}
	}
	for _, x := range rep.Throughput {
		if x.Calls > 0 {
			gotT = append(gotT, tcell{x.Target, x.Size, x.Concurrency})
		}
	}
	if diff := cmp.Diff(wantT, gotT); diff != "" {
		t.Errorf("throughput results (-want +got):\n%s", diff)
	}

	// What each target returns: direct and floor verbatim, the bridge the
	// upstream JSON compacted (the pretty body shrinks, the others are
	// compact already).
	for _, res := range rep.Results {
		switch {
		case res.Target == tDirect || strings.HasPrefix(res.Target, "floor"):
			if !res.EqualsUpstream {
				t.Errorf("%s %s: text is not the upstream body", res.Target, res.Size)
			}
		case !res.EqualsCompact:
			t.Errorf("%s %s: text is not the compact upstream body", res.Target, res.Size)
		}
	}
	if n := len(rep.Results); n != len(targets)*len(sizes) {
		t.Errorf("got %d result checks; want %d", n, len(targets)*len(sizes))
	}

	if runtime.GOOS == "linux" {
		var servers []string
		for _, m := range rep.Memory {
			if m.When == "after throughput" && m.RSSKiB > 0 && m.HWMKiB >= m.RSSKiB {
				servers = append(servers, m.Target)
			}
		}
		if diff := cmp.Diff(targets[1:], servers); diff != "" {
			t.Errorf("servers with memory readings (-want +got):\n%s", diff)
		}
	}

	modes := []string{"first"}
	if rep.Env.CacheFlags {
		modes = append(modes, "restart")
	}
	var wantC, gotC []string
	for _, c := range []string{coldSmall, coldGitHub20} {
		for _, m := range modes {
			wantC = append(wantC, c+"/"+m)
		}
	}
	for _, c := range rep.ColdStart {
		if c.Runs > 0 && c.Tools > 0 && c.MedianMs > 0 && c.ListBytes > 0 {
			gotC = append(gotC, c.Case+"/"+c.Mode)
		}
	}
	if diff := cmp.Diff(wantC, gotC); diff != "" {
		t.Errorf("cold starts (-want +got):\n%s", diff)
	}

	// Every issue target has a row; only what --short leaves out is SKIP.
	skippable := func(name string) bool {
		return strings.Contains(name, "GitHub all ops") ||
			strings.HasPrefix(name, "throughput") && strings.Contains(name, " 1m, ")
	}
	if len(rep.Targets) != 50 {
		t.Errorf("got %d target rows; want 50", len(rep.Targets))
	}
	for _, row := range rep.Targets {
		if !slices.Contains([]string{"PASS", "MISS", "SKIP"}, row.Status) {
			t.Errorf("%s: status %q", row.Target, row.Status)
		}
		if row.Status == "SKIP" && !skippable(row.Target) {
			t.Errorf("%s: SKIP in --short (%s); want a measurement", row.Target, row.Measured)
		}
	}
}

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	tests := []struct {
		name string
		in   []time.Duration
		q    float64
		want time.Duration
	}{
		{"empty", nil, 0.5, 0},
		{"one", ms(7), 0.99, 7 * time.Millisecond},
		{"median odd", ms(5, 1, 3), 0.5, 3 * time.Millisecond},
		{"median even is the lower", ms(4, 1, 3, 2), 0.5, 2 * time.Millisecond},
		{"p90 of 10", ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 0.9, 9 * time.Millisecond},
		{"p99 of 10 is the max", ms(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 0.99, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.in, tt.q); got != tt.want {
				t.Errorf("percentile(%v) = %v; want %v", tt.q, got, tt.want)
			}
		})
	}
}

func TestBridgeAnnounce(t *testing.T) {
	tests := []struct {
		line string
		want string
		ok   bool
	}{
		{`{"level":"info","ts":"x","msg":"listening","addr":"127.0.0.1:4321","mcp":"http://127.0.0.1:4321/mcp"}`, "127.0.0.1:4321", true},
		{`{"level":"info","msg":"tools ready","tools":4}`, "", false},
		{`2026-01-01T00:00:00Z	INFO	listening	{"addr": "127.0.0.1:1"}`, "", false},
		{``, "", false},
	}
	for _, tt := range tests {
		addr, ok := bridgeAnnounce([]byte(tt.line))
		if addr != tt.want || ok != tt.ok {
			t.Errorf("bridgeAnnounce(%q) = %q, %v; want %q, %v", tt.line, addr, ok, tt.want, tt.ok)
		}
	}
}

// TestBodiesDeterministic pins the upstream documents: the same sizes on
// every run, valid JSON, the pretty one the indented 16 KiB one.
func TestBodiesDeterministic(t *testing.T) {
	a, b := endpoints(), endpoints()
	buildBodies(a)
	buildBodies(b)
	for i := range a {
		if !bytes.Equal(a[i].body, b[i].body) {
			t.Errorf("%s: two builds differ", a[i].Size)
		}
		if !json.Valid(a[i].body) {
			t.Errorf("%s: not valid JSON", a[i].Size)
		}
	}
	sizes := map[string]int{}
	for _, e := range a {
		sizes[e.Size] = len(e.body)
	}
	if s := sizes["small"]; s < 150 || s > 300 {
		t.Errorf("small body is %d bytes; want about 200", s)
	}
	if s := sizes["16k"]; s < 16<<10 || s > 18<<10 {
		t.Errorf("16k body is %d bytes; want about 16 KiB", s)
	}
	if s := sizes["1m"]; s < 1<<20 || s > 1<<20+4<<10 {
		t.Errorf("1m body is %d bytes; want about 1 MiB", s)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, a[3].body); err != nil || !bytes.Equal(compact.Bytes(), a[1].body) {
		t.Errorf("the pretty body does not compact to the 16k body (err %v)", err)
	}
}

// TestPeerReference: a peer timed in the same run (-peer) replaces the
// published figures as the GitHub first-start references.
func TestPeerReference(t *testing.T) {
	got := peerCommand("node srv.js -s {spec} --url={upstream}", "/s/gh.json", "http://127.0.0.1:9")
	if diff := cmp.Diff([]string{"node", "srv.js", "-s", "/s/gh.json", "--url=http://127.0.0.1:9"}, got); diff != "" {
		t.Errorf("peerCommand (-want +got):\n%s", diff)
	}
	find := func(r *report, prefix string) targetRow {
		for _, row := range r.Targets {
			if strings.HasPrefix(row.Target, prefix) {
				return row
			}
		}
		t.Fatalf("no target row %q", prefix)
		return targetRow{}
	}
	bridge := coldInfo{Case: coldGitHubAll, Mode: "first", Runs: 3, MedianMs: 1000, PeakRSSKiB: 190 << 10, Tools: 1, ListBytes: 1}
	r := &report{ColdStart: []coldInfo{bridge}}
	r.evaluate()
	if row := find(r, "cold start GitHub all ops, first start"); row.Limit != "≤ 507ms" || row.Status != "MISS" {
		t.Errorf("published reference: %+v", row)
	}
	r = &report{ColdStart: []coldInfo{bridge, {Case: coldPeer, Mode: "first", Runs: 3, MedianMs: 1200, PeakRSSKiB: 200 << 10}}}
	r.evaluate()
	if row := find(r, "cold start GitHub all ops, first start"); row.Limit != "≤ 1.08s" || row.Status != "PASS" {
		t.Errorf("measured reference: %+v", row)
	}
	if row := find(r, "peak RSS GitHub all ops"); row.Limit != "≤ 200 MiB" || row.Status != "PASS" {
		t.Errorf("measured peak reference: %+v", row)
	}
}
