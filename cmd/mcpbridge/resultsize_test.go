package main

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tsStdioMaxMessage is the official TypeScript SDK's default cap on one
// stdio message (STDIO_DEFAULT_MAX_BUFFER_SIZE): over it, the client
// closes the connection.
const tsStdioMaxMessage = 10 << 20

// TestLargeAnswerFitsTSClient: with the default limits, an upstream answer
// far over them still comes back as one message the TypeScript SDK's stdio
// client accepts (a truncated result), and so does the largest answer kept
// whole, whose text copy would have made three times its size: it goes once,
// as structuredContent, with a note as its text.
func TestLargeAnswerFitsTSClient(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 20 << 20 // over the limit
		if r.URL.Query().Get("fit") == "1" {
			n = 4<<20 - 100 // just under the default limit
		}
		w.Header().Set("Content-Type", "application/json")
		// Escaped quotes only: as a text block, each of those 2 bytes
		// takes 2 (the worst ordinary case, 2x the answer).
		fmt.Fprintf(w, `{"items":"%s"}`, strings.Repeat(`\"`, (n-12)/2))
	}))
	defer up.Close()
	spec := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(spec, []byte(`openapi: 3.0.3
info: {title: big, version: "1"}
paths:
  /big:
    get:
      operationId: getBig
      parameters: [{name: fit, in: query, schema: {type: string}}]
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {items: {type: string}}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, fit := range []string{"0", "1"} {
		cmd := exec.Command(os.Args[0], "serve", "--spec", spec, "--all-operations", "--upstream", up.URL, "--no-cache")
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"getBig","arguments":{"fit":"` + fit + `"}}}
`)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		sc.Buffer(nil, 64<<20)
		var got int
		var once bool
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, `{"jsonrpc":"2.0","id":2,`) {
				got = len(line)
				once = strings.Contains(line, "is in structuredContent only") && strings.Contains(line, `"structuredContent":{"items":`)
			}
		}
		if fit == "1" && !once {
			t.Error("fit=1: the answer is not sent once, as structuredContent, with the note")
		}
		if got == 0 || got > tsStdioMaxMessage {
			t.Errorf("fit=%s: the result is %d bytes; the TypeScript SDK's stdio client takes at most %d", fit, got, tsStdioMaxMessage)
		}
	}
}
