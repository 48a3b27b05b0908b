package main

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpecBehindPrivateCA: a spec served over https by the upstream itself,
// behind the private CA of --upstream-ca-file, is fetched with that CA (it
// was fetched with the system roots alone, and the bridge did not start).
func TestSpecBehindPrivateCA(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: private, version: "1"}
paths:
  /items:
    get:
      operationId: listItems
      responses: {"200": {description: ok}}
`
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/openapi.yaml":
			io.WriteString(w, spec)
		case "/v1/items":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"from":"private upstream"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer up.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: up.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, _ := startBridge(t, "serve", "--spec", up.URL+"/openapi.yaml", "--upstream", up.URL+"/v1",
		"--upstream-ca-file", ca, "--all-operations", "--no-cache")
	res, text := callText(t, cs, "listItems", nil)
	if res.IsError || !strings.Contains(text, "private upstream") {
		t.Fatalf("listItems: %s", text)
	}
}
