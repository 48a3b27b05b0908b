package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
