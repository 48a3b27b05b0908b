package upstream_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

// TestUpstreamBackoffWithinDeadline: a wait before the next attempt that
// would end past the call's deadline is not started; the upstream's last
// answer (or the transport error) comes back at once, not a timeout after
// the upstream had answered.
func TestUpstreamBackoffWithinDeadline(t *testing.T) {
	var hits atomic.Int32
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable) // no Retry-After: the exponential backoff
	}))
	defer up.Close()
	c := upstream.New(upstream.Options{Retries: 5, RetryWaitMin: 400 * time.Millisecond, RetryWaitMax: 5 * time.Second})

	ctx, cancel := context.WithTimeout(upstream.WithRetry(t.Context()), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", up.URL+"/x", nil)
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("err %v, want the upstream's 503", err)
	}
	resp.Body.Close()
	took := time.Since(start)
	// 0 ms: 503, wait 400 ms, 503; the next wait (800 ms) would end past
	// the deadline.
	if resp.StatusCode != http.StatusServiceUnavailable || hits.Load() != 2 || took > 900*time.Millisecond {
		t.Errorf("status %d after %d requests in %s, want 503 after 2 within 900ms", resp.StatusCode, hits.Load(), took)
	}

	// The same for a transport failure: the error says what happened.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/x"
	ln.Close()
	ctx, cancel = context.WithTimeout(upstream.WithRetry(t.Context()), time.Second)
	defer cancel()
	req, _ = http.NewRequestWithContext(ctx, "GET", refused, nil)
	start = time.Now()
	_, err = c.Do(req)
	if err == nil || errors.Is(err, context.DeadlineExceeded) || upstream.FailureKind(err) != "connection refused" {
		t.Errorf("refused: err %v (%s), want connection refused", err, upstream.FailureKind(err))
	}
	if took := time.Since(start); took > 900*time.Millisecond {
		t.Errorf("refused: returned after %s, want before the deadline", took)
	}
}

// TestUpstreamFailedRetryKeepsPool: a retried call that fails for good does
// not close the keep-alive connections other calls left idle (go-retryablehttp
// calls CloseIdleConnections on its client then).
func TestUpstreamFailedRetryKeepsPool(t *testing.T) {
	var conns atomic.Int32
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	up.Start()
	defer up.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/x"
	ln.Close()

	c := upstream.New(upstream.Options{RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
	get := func(url string) error {
		req, _ := http.NewRequestWithContext(upstream.WithRetry(t.Context()), "GET", url, nil)
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	for i := range 3 {
		if err := get(up.URL); err != nil {
			t.Fatal(err)
		}
		if err := get(refused); err == nil {
			t.Fatal("a closed port answered")
		}
		if n := conns.Load(); n != 1 {
			t.Fatalf("round %d: %d connections to the healthy upstream, want 1 kept alive", i, n)
		}
	}
}
