package main

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStdLogRedacted: an upstream that sends bytes after the declared
// body makes net/http log them through the standard logger ("Unsolicited
// response received on idle HTTP channel starting with ..."). The
// configured API key in them must not reach stderr.
func TestStdLogRedacted(t *testing.T) {
	const secret = "SECRET-KEY-12345"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for { // the request's head
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"))
				time.Sleep(50 * time.Millisecond) // the client reads the body and parks the connection
				conn.Write([]byte(" EXTRA " + secret + " more"))
				time.Sleep(500 * time.Millisecond)
			}()
		}
	}()
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	os.WriteFile(spec, []byte(`openapi: 3.0.3
info: {title: extra, version: "1"}
paths:
  /x:
    get:
      operationId: getX
      responses: {"200": {description: ok}}
`), 0o600)
	var stderr syncBuilder
	cs, _ := startBridgeStderr(t, &stderr, "serve", "--spec", spec, "--all-operations", "--upstream", "http://"+ln.Addr().String(),
		"--upstream-header", "X-Api-Key: "+secret, "--retries", "0")
	if _, text := callText(t, cs, "getX", map[string]any{}); text != "hello" {
		t.Fatalf("answer %q", text)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), "Unsolicited") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cs.Close()
	out := stderr.String()
	if !strings.Contains(out, "Unsolicited") {
		t.Fatalf("net/http's line never came (the test shows nothing):\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Fatalf("the API key reached stderr:\n%s", out)
	}
}

// syncBuilder is a strings.Builder safe for one writer and one reader.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
