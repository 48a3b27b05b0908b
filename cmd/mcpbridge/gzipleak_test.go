package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestNoCredentialInGzipAnswer: an upstream that echoes the credentials it
// received inside a gzip body (no Content-Encoding, so Go's transport
// leaves it alone), labelled as JSON or as a gzip file, reached the agent
// as an attachment whose bytes, once inflated, held the token: the scan of
// the compressed bytes found nothing. The attachment must inflate to text
// without any credential.
func TestNoCredentialInGzipAnswer(t *testing.T) {
	const (
		token  = "tok_Ab3xQ9zL7pW2mN5r"
		hdrKey = "hk-Zq8Yt4Lm2Np6Rs0V"
	)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := json.Marshal(map[string]any{"authorization": "seen", "echo": []string{r.Header.Get("Authorization"), r.Header.Get("X-Api-Key")}})
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		w.Header().Set("Content-Type", map[string]string{"/json": "application/json", "/file": "application/gzip"}[r.URL.Path])
		w.Write(b.Bytes())
	}))
	t.Cleanup(up.Close)
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(spec, []byte(`openapi: 3.0.3
info: {title: gz, version: "1"}
paths:
  /json: {get: {operationId: asjson, responses: {"200": {description: ok}}}}
  /file: {get: {operationId: asfile, responses: {"200": {description: ok}}}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cs, _, stop := runInProcess(t, &stderr, "serve", "--spec", spec, "--all-operations", "--upstream", up.URL, "--no-cache",
		"--upstream-token", token, "--upstream-header", "X-Api-Key: "+hdrKey)
	defer stop()
	for _, tool := range []string{"asjson", "asfile"} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if res.IsError || len(res.Content) != 1 {
			raw, _ := json.Marshal(res)
			t.Fatalf("%s: %s", tool, raw)
		}
		er, ok := res.Content[0].(*mcp.EmbeddedResource)
		if !ok || er.Resource == nil {
			raw, _ := json.Marshal(res)
			t.Fatalf("%s: not an attachment: %s", tool, raw)
		}
		zr, err := gzip.NewReader(bytes.NewReader(er.Resource.Blob))
		if err != nil {
			t.Fatalf("%s: the attachment is no longer gzip: %v", tool, err)
		}
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		for _, s := range []string{token, hdrKey} {
			if strings.Contains(string(plain), s) {
				t.Errorf("%s: the inflated attachment holds a credential: %s", tool, plain)
			}
		}
		if !strings.Contains(string(plain), `"authorization":"[REDACTED]"`) {
			t.Errorf("%s: inflated %s", tool, plain)
		}
	}
}
