package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
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
