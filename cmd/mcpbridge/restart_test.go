package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRestartServesTheSameList: a restart on an unchanged spec restores
// its tools from the cache (without reading the spec: the index) and its
// first tools/list, answered from the array the first start encoded,
// lists exactly what the first start listed.
func TestRestartServesTheSameList(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../testdata/specs/petstore.3.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "petstore.yaml")
	if err := os.WriteFile(spec, src, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(spec, old, old); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	start := func() (tools []*mcp.Tool, cached bool) {
		t.Helper()
		var mu sync.Mutex
		var logs bytes.Buffer
		cmd := exec.Command(os.Args[0], "serve", "--spec", spec, "--all-operations", "--upstream", "http://127.0.0.1:9", "--cache-dir", cache, "--log-format", "json")
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		cmd.Stderr = lockedWriter{&mu, &logs}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
		if err != nil {
			t.Fatal(err)
		}
		lt, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		cs.Close() // waits for the exit, which waits for the cache entry
		mu.Lock()
		defer mu.Unlock()
		for _, line := range strings.Split(logs.String(), "\n") {
			var e struct {
				Msg    string
				Cached bool
			}
			if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "tools ready" {
				return lt.Tools, e.Cached
			}
		}
		t.Fatalf("no tools ready line in:\n%s", logs.String())
		return nil, false
	}
	first, cached := start()
	if cached || len(first) < 10 {
		t.Fatalf("first start: %d tools, cached %v; want petstore's, built", len(first), cached)
	}
	// The cache entry carries the list the first start encoded.
	a := serveApp(t, "--spec", spec, "--all-operations", "--upstream", "http://127.0.0.1:9", "--cache-dir", cache, "--log-format", "json")
	in, err := a.readInputs(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	if in.spec != nil {
		t.Error("the index did not spare reading the unchanged spec")
	}
	c, _ := a.loadCached(t.Context(), a.cacheKey(in.specSum, nil), a.bridgeOptions(), in.loc)
	if c == nil {
		t.Fatal("no cache entry for the first start")
	}
	if l := c.EncodedList(); l == nil || len(l.Names) != len(first) {
		t.Errorf("cache entry's encoded list: %v; want the %d tools listed", l, len(first))
	}

	again, cached := start()
	if !cached {
		t.Error("restart did not restore the tools from the cache")
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("restart lists other tools (-first +restart):\n%s", diff)
	}
}
