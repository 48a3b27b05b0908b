package transport_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/transport"
)

// guardDeadline bounds how long a raw-connection test waits for the server:
// far above every timeout under test, so it only turns a hang into a
// failure.
const guardDeadline = 10 * time.Second

// dial opens a raw TCP connection to the server at base.
func dial(t *testing.T, base string) net.Conn {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatalf("dial %s: %v", u.Host, err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(guardDeadline)); err != nil {
		t.Fatal(err)
	}
	return c
}

// readResponse reads one HTTP response from c and reports whether the
// server then closed the connection.
func readResponse(t *testing.T, c net.Conn) (resp *http.Response, body string, closed bool) {
	t.Helper()
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("reading the response: %v (the server never answered)", err)
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the response body: %v", err)
	}
	_, err = br.ReadByte()
	return resp, string(data), errors.Is(err, io.EOF)
}

// TestUnauthenticatedBodyNeverSent is the slow-body attack: headers with a
// Content-Length, then nothing. The 401 must come at once, before any body
// is read, and the connection must then close.
func TestUnauthenticatedBodyNeverSent(t *testing.T) {
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{APIKeys: []string{keyA}, ReadTimeout: time.Hour})
	for _, path := range []string{"/mcp", "/messages?sessionId=x"} {
		c := dial(t, ts.URL)
		req := "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, _, closed := readResponse(t, c)
		if resp.StatusCode != http.StatusUnauthorized || !closed {
			t.Errorf("POST %s with an announced body never sent = %d, connection closed %v; want 401 and closed", path, resp.StatusCode, closed)
		}
	}
}

// TestBodyReadTimeout checks that a body which stops, or trickles in, is cut
// off at ReadTimeout with 408, whoever sends it.
func TestBodyReadTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{APIKeys: []string{keyA}, ReadTimeout: timeout})
	head := "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + keyA +
		"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 5000\r\n\r\n"

	t.Run("stops", func(t *testing.T) {
		c := dial(t, ts.URL)
		if _, err := io.WriteString(c, head+`{"jsonrpc":"2.0",`); err != nil {
			t.Fatal(err)
		}
		resp, _, closed := readResponse(t, c)
		if resp.StatusCode != http.StatusRequestTimeout || !closed {
			t.Errorf("stalled body = %d, closed %v; want 408 and closed", resp.StatusCode, closed)
		}
	})

	t.Run("trickles", func(t *testing.T) {
		c := dial(t, ts.URL)
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		// One byte every 5ms would take 25s for the whole body: each byte
		// is within any per-read timeout, but the deadline is for the body.
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		}()
		resp, _, _ := readResponse(t, c)
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("trickled body = %d; want 408", resp.StatusCode)
		}
	})
}

// TestReadTimeoutSparesLongResponses checks that the body deadline is lifted
// once the body is in: a call slower than ReadTimeout still gets its result
// on every transport, and the streams stay open.
func TestReadTimeoutSparesLongResponses(t *testing.T) {
	const timeout = 20 * time.Millisecond
	for _, m := range shutdownModes {
		t.Run(m.name, func(t *testing.T) {
			g := newGate()
			ts := startHTTP(t, newMCPServer(g), transport.HTTPOptions{Stateful: m.stateful, ReadTimeout: timeout})
			cs := connect(t, m.transport(ts.URL), "")
			results := make(chan error, 1)
			go func() {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
				if err == nil && res.IsError {
					err = errors.New("tool error")
				}
				results <- err
			}()
			<-g.started
			// The property under test is time passing: the call outlives
			// the read deadline several times over.
			<-time.After(5 * timeout)
			close(g.release)
			if err := <-results; err != nil {
				t.Fatalf("call slower than ReadTimeout failed: %v", err)
			}
			var out echoOut
			callJSON(t, cs, "echo", map[string]any{"text": "still here"}, &out)
			if diff := cmp.Diff(echoOut{Text: "still here"}, out); diff != "" {
				t.Errorf("echo after the slow call (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServerTimeouts checks the connection-level limits ServeHTTP sets:
// dribbled headers are cut at ReadHeaderTimeout, and an idle keep-alive
// connection is closed at IdleTimeout.
func TestServerTimeouts(t *testing.T) {
	sv := serve(t, newMCPServer(newGate()), transport.HTTPOptions{
		ReadHeaderTimeout: 50 * time.Millisecond, IdleTimeout: 50 * time.Millisecond,
	})

	t.Run("dribbled headers", func(t *testing.T) {
		c := dial(t, sv.url)
		if _, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
			t.Fatal(err)
		}
		go func() {
			for i := 0; ; i++ {
				if _, err := io.WriteString(c, "X-Slow: "+strings.Repeat("a", i%10)+"\r\n"); err != nil {
					return
				}
				<-time.After(5 * time.Millisecond) // the attack: a header every 5ms
			}
		}()
		// Closed without an answer: an EOF, or a reset when the server
		// closes with our unread header bytes still in its buffer.
		if n, err := io.Copy(io.Discard, c); n != 0 || err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("dribbled headers: read %d bytes, err %v; want the connection closed without an answer", n, err)
		}
	})

	t.Run("idle connection", func(t *testing.T) {
		c := dial(t, sv.url)
		if _, err := io.WriteString(c, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, _, closed := readResponse(t, c) // waits for the close after the answer
		if resp.StatusCode != http.StatusOK || !closed {
			t.Errorf("GET /health then idle = %d, closed %v; want 200, then the connection closed", resp.StatusCode, closed)
		}
	})
}
