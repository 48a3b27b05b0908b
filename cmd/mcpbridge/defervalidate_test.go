package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeValidatesAfterServing: serve answers tools/list before the
// spec's lenient validation has run, and still logs every finding once it
// has (app.deferValidation); --strict refuses the same spec at start.
func TestServeValidatesAfterServing(t *testing.T) {
	const spec = "../../specloader/testdata/invalid-doc.yaml"
	var mu sync.Mutex
	var logs bytes.Buffer
	cmd := exec.Command(os.Args[0], "serve", "--spec", spec, "--all-operations", "--upstream", "http://127.0.0.1:9", "--no-cache", "--log-format", "json")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	cmd.Stderr = lockedWriter{&mu, &logs}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lt.Tools) == 0 {
		t.Error("no tools listed")
	}
	const finding = "must define exactly all path parameters (missing: [id])"
	var order []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		order = order[:0]
		for _, line := range strings.Split(logs.String(), "\n") {
			var e struct{ Msg, Warning string }
			if json.Unmarshal([]byte(line), &e) != nil {
				continue
			}
			switch {
			case e.Msg == "tools ready":
				order = append(order, "ready")
			case e.Msg == "spec validation" && strings.Contains(e.Warning, finding):
				order = append(order, "finding")
			}
		}
		mu.Unlock()
		if len(order) == 2 {
			break
		}
	}
	if strings.Join(order, ",") != "ready,finding" {
		t.Errorf("log order %v; want the tools ready, then the validation finding", order)
	}

	strict := exec.Command(os.Args[0], "tools", "--spec", spec, "--all-operations", "--upstream", "http://127.0.0.1:9", "--strict")
	strict.Env = append(os.Environ(), runMainEnv+"=1")
	out, err := strict.CombinedOutput()
	if err == nil || !strings.Contains(string(out), finding) {
		t.Errorf("--strict: %v\n%s\nwant a failure naming the finding", err, out)
	}
}

// TestToolsListBytesLogged: the "tools ready" log line's tools_list_bytes
// is the size of the tools a current client receives in tools/list,
// counted without encoding the list (defBytes), or, on a restart from the
// tool cache, from the encoded list the entry brought.
func TestToolsListBytesLogged(t *testing.T) {
	t.Run("no cache", func(t *testing.T) {
		if cached := checkListBytesLogged(t, "--no-cache"); cached {
			t.Error("tools ready says cached with --no-cache")
		}
	})
	t.Run("restart", func(t *testing.T) {
		dir := t.TempDir()
		if cached := checkListBytesLogged(t, "--cache-dir", dir); cached {
			t.Error("the first start says cached")
		}
		if cached := checkListBytesLogged(t, "--cache-dir", dir); !cached {
			t.Error("the restart did not start from the tool cache")
		}
	})
}

// checkListBytesLogged runs serve with extra flags, lists the tools and
// compares the logged size with the listed one; it reports whether the
// log line said the tools came from the cache.
func checkListBytesLogged(t *testing.T, extra ...string) (cached bool) {
	t.Helper()
	var mu sync.Mutex
	var logs bytes.Buffer
	args := append([]string{"serve", "--spec", "../../testdata/specs/petstore.3.0.yaml", "--all-operations", "--upstream", "http://127.0.0.1:9", "--log-format", "json"}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	cmd.Stderr = lockedWriter{&mu, &logs}
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var listed int
	for _, line := range bytes.Split(out, []byte("\n")) {
		var msg struct {
			ID     int
			Result struct{ Tools json.RawMessage }
		}
		if json.Unmarshal(line, &msg) == nil && msg.ID == 2 {
			listed = len(`{"tools":}`) + len(msg.Result.Tools)
		}
	}
	logged := -1
	mu.Lock()
	for _, line := range strings.Split(logs.String(), "\n") {
		var e struct {
			Msg    string
			Bytes  int `json:"tools_list_bytes"`
			Cached bool
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Msg == "tools ready" {
			logged, cached = e.Bytes, e.Cached
		}
	}
	mu.Unlock()
	if listed < 1000 || logged != listed {
		t.Errorf("tools_list_bytes = %d; the tools a 2025-11-25 client received make %d bytes", logged, listed)
	}
	return cached
}

// TestLargeListWarned: a tools/list past largeListBytes is warned about,
// with the advice; the same spec in dynamic mode and a small spec are not.
func TestLargeListWarned(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("GitHub's spec takes seconds to load under -race; covered in plain go test")
	}
	warned := func(spec string, extra ...string) bool {
		args := append([]string{"serve", "--spec", spec, "--all-operations", "--upstream", "http://127.0.0.1:9", "--no-cache", "--log-format", "json"}, extra...)
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		var logs bytes.Buffer
		cmd.Stderr = &logs
		cmd.Stdin = strings.NewReader("")
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", spec, err, logs.String())
		}
		return strings.Contains(logs.String(), "tools/list is larger than most agents' context can hold")
	}
	if !warned("../../testdata/specs/github-api.3.0.json") {
		t.Error("GitHub, all operations (2.5 MB): no warning")
	}
	if warned("../../testdata/specs/github-api.3.0.json", "--tools", "dynamic") {
		t.Error("GitHub in dynamic mode: warned")
	}
	if warned("../../testdata/specs/petstore.3.0.yaml") {
		t.Error("petstore: warned")
	}
}
