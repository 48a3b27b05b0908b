package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAPIKeyFileWithoutKeys: an --api-key-file that holds no key (empty,
// only comments: a secret mounted before it was filled) left the bridge
// without inbound auth on a loopback listener, logged at INFO, so that a
// bridge behind a reverse proxy served every caller; on another address
// the refusal told the operator to configure the --api-key-file they had
// configured. Either way, it now stops, naming the file.
func TestAPIKeyFileWithoutKeys(t *testing.T) {
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte("# keys go here\n\n  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, listen := range []string{"127.0.0.1:0", "0.0.0.0:0"} {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		var out, errb bytes.Buffer
		err := run(ctx, []string{"serve", "--transport", "http", "--listen", listen, "--api-key-file", keys,
			"--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml", "--upstream", "http://127.0.0.1:9/api", "--no-cache"}, nil, &out, &errb)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "--api-key-file "+keys+" holds no key") {
			t.Errorf("listen %s: serve with a key file holding no key: err = %v; want it refused, naming the file\n%s", listen, err, errb.String())
		}
	}
}

// TestAPIKeyFileNamedKeys: a key named in --api-key-file (NAME KEY) is the
// caller api-key:NAME wherever it stands. Unnamed keys are named by their
// place, so revoking one (deleting or commenting its line) handed the next
// key its access rules and quota: the admin key's tools went to another.
func TestAPIKeyFileNamedKeys(t *testing.T) {
	rec := newRecorder(t)
	dir := t.TempDir()
	wl := filepath.Join(dir, "wl.yaml")
	if err := os.WriteFile(wl, []byte("tools:\n  - operationId: getItem\n  - operationId: getSecrets\n    allow: {keys: [\"api-key:admin\"]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(dir, "keys")
	// The admin key was revoked by commenting its line: the other key,
	// now first, must not get its tools.
	if err := os.WriteFile(keys, []byte("# admin key-admin-secret-1\nreader key-reader-secret-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := startHTTPBridge(t, "serve", "--spec", "testdata/e2e.yaml", "--whitelist", wl,
		"--upstream", rec.srv.URL+"/api", "--api-key-file", keys)
	tools := func(base, key string) []string {
		hc := &http.Client{Transport: bearer{key, http.DefaultTransport}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(t.Context(),
			&mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		lt, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range lt.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	if got := tools(base, "key-reader-secret-1"); slices.Contains(got, "getSecrets") || !slices.Contains(got, "getItem") {
		t.Errorf("the reader key, first after the admin's was revoked, lists %v; want getItem and not getSecrets", got)
	}
	// Before the revocation, second in the file, the admin key has them.
	if err := os.WriteFile(keys, []byte("reader key-reader-secret-1\nadmin key-admin-secret-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base2 := startHTTPBridge(t, "serve", "--spec", "testdata/e2e.yaml", "--whitelist", wl,
		"--upstream", rec.srv.URL+"/api", "--api-key-file", keys)
	if got := tools(base2, "key-admin-secret-1"); !slices.Contains(got, "getSecrets") {
		t.Errorf("the admin key lists %v; want getSecrets", got)
	}
	if got := tools(base2, "key-reader-secret-1"); slices.Contains(got, "getSecrets") {
		t.Errorf("the reader key lists %v; want no getSecrets", got)
	}

	// A line of three words is refused, naming its place, not its content.
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("ok-key-1\nname key extra-secret-word\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run(t.Context(), []string{"serve", "--transport", "http", "--listen", "127.0.0.1:0", "--api-key-file", bad,
		"--spec", "testdata/e2e.yaml", "--whitelist", wl, "--upstream", "http://127.0.0.1:9/api", "--no-cache"}, nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "line 2: 3 words") || strings.Contains(err.Error()+errb.String(), "extra-secret-word") {
		t.Errorf("a three-word key line: err = %v; want it refused by line number, without its words", err)
	}
	// An all-digit name would read as an unnamed key's place.
	if err := os.WriteFile(bad, []byte("0 some-key-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	errb.Reset()
	err = run(t.Context(), []string{"serve", "--transport", "http", "--listen", "127.0.0.1:0", "--api-key-file", bad,
		"--spec", "testdata/e2e.yaml", "--whitelist", wl, "--upstream", "http://127.0.0.1:9/api", "--no-cache"}, nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "not a key name") {
		t.Errorf("a key named 0: err = %v; want it refused", err)
	}
}

// TestAPIKeyFileKeysNotLogged: the log sanitizer masked the inbound keys
// given with --api-key but not those read from --api-key-file, so with
// --log-arguments a key the agent put in an argument (or any log line
// quoting one) was written to the log in clear.
func TestAPIKeyFileKeysNotLogged(t *testing.T) {
	const key = "ik-Pq3Rs5Tu7Vw9Xy1Z"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(up.Close)
	dir := t.TempDir()
	keys := filepath.Join(dir, "keys")
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(keys, []byte("# inbound\n"+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, []byte(`openapi: 3.0.3
info: {title: k, version: "1"}
paths:
  /echo: {get: {operationId: echo, parameters: [{name: q, in: query, schema: {type: string}}], responses: {"200": {description: ok}}}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--spec", spec, "--all-operations", "--upstream", up.URL, "--no-cache", "--rest",
			"--transport", "http", "--listen", "127.0.0.1:0", "--log-format", "json", "--log-level", "debug",
			"--api-key-file", keys, "--log-arguments"}, strings.NewReader(""), io.Discard, &stderr)
	}()
	addr := regexp.MustCompile(`"msg":"listening".*?"addr":"([^"]+)"`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := addr.FindStringSubmatch(stderr.String()); m != nil {
			base = "http://" + m[1]
		}
	}
	if base == "" {
		cancel()
		t.Fatalf("bridge did not start: %v\n%s", <-done, stderr.String())
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/api/tools/echo", strings.NewReader(`{"q":"`+key+`"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("call: HTTP %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("run: %v", err)
	}
	logs := stderr.String()
	if !strings.Contains(logs, `"arguments"`) {
		t.Fatalf("no usage record with arguments in the log:\n%s", logs)
	}
	if strings.Contains(logs, key) {
		t.Errorf("the log holds an inbound key of --api-key-file:\n%s", logs)
	}
}

// TestAllowKeysUnconfigured: an access list naming an API key caller that
// no configured key is (a misspelt name, a place past the last key) is
// warned about at start, naming the caller and the tools: the key meant
// is locked out without a word, and for api-key:N the next key added gets
// the access.
func TestAllowKeysUnconfigured(t *testing.T) {
	dir := t.TempDir()
	wl := filepath.Join(dir, "wl.yaml")
	if err := os.WriteFile(wl, []byte("tools:\n  - operationId: getItem\n    allow: {keys: [\"api-key:reader\", \"api-key:admn\"]}\n  - operationId: getSecrets\n    allow: {keys: [\"api-key:1\"]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(dir, "keys")
	if err := os.WriteFile(keys, []byte("reader key-reader-secret-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	err := run(ctx, []string{"serve", "--transport", "http", "--listen", "127.0.0.1:0", "--api-key-file", keys,
		"--spec", "testdata/e2e.yaml", "--whitelist", wl, "--upstream", "http://127.0.0.1:9/api", "--no-cache"}, nil, &out, &errb)
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, errb.String())
	}
	log := errb.String()
	for _, want := range []string{`"caller": "api-key:admn", "tools": ["getItem"]`, `"caller": "api-key:1", "tools": ["getSecrets"]`} {
		if !strings.Contains(log, "no configured key is") || !strings.Contains(log, want) {
			t.Errorf("no warning with %s:\n%s", want, log)
		}
	}
	if strings.Contains(log, `"caller": "api-key:reader"`) {
		t.Errorf("a configured key warned about:\n%s", log)
	}
}
