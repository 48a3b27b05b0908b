package upstream_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

// TestUpstreamClientRedirects checks that credentials never follow a
// redirect to another host, while same-host redirects work.
func TestUpstreamClientRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	defer other.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/final":
			if ref := r.Header.Get("Referer"); ref != "" {
				t.Errorf("the redirect carried Referer %q (the previous URL, credentials in its query)", ref)
			}
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer up.Close()
	c := upstream.New(upstream.Options{})
	for _, tt := range []struct {
		path string
		want int
	}{{"/away", http.StatusFound}, {"/here", http.StatusOK}} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, up.URL+tt.path+"?api_key=secret", nil)
		req.Header.Set("X-API-Key", "secret")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s: status %d, want %d", tt.path, resp.StatusCode, tt.want)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the other host received %d requests", n)
	}
}

// TestUpstreamTLS checks a private CA: refused with a clear reason without
// it, trusted with it.
func TestUpstreamTLS(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer up.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", up.URL, nil)
	_, err := upstream.New(upstream.Options{}).Do(req)
	if err == nil || !strings.Contains(upstream.FailureKind(err), "not trusted") {
		t.Fatalf("untrusted CA: %v (%s)", err, upstream.FailureKind(err))
	}
	pool := x509.NewCertPool()
	pool.AddCert(up.Certificate())
	req, _ = http.NewRequestWithContext(t.Context(), "GET", up.URL, nil)
	resp, err := upstream.New(upstream.Options{TLS: &tls.Config{RootCAs: pool}}).Do(req)
	if err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	resp.Body.Close()
}

// TestUpstreamRetries checks the retry loop: only calls marked retryable
// are sent again, on 503 and on a dropped connection; the last answer comes
// back readable when the retries run out; a body is sent whole on every
// attempt; a wait longer than the deadline is not attempted; the counter
// says how many attempts went out.
func TestUpstreamRetries(t *testing.T) {
	type hit struct{ method, body string }
	var (
		mu   sync.Mutex
		hits []hit
		plan []int // statuses still to answer; 0 drops the connection
	)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits = append(hits, hit{r.Method, string(b)})
		status := http.StatusOK
		if len(plan) > 0 {
			status, plan = plan[0], plan[1:]
		}
		mu.Unlock()
		switch status {
		case 0:
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", "30")
		case http.StatusServiceUnavailable + 1000: // 503 asking for 292 years and more
			w.Header().Set("Retry-After", "9223372037")
			status = http.StatusServiceUnavailable
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "status %d", status)
	}))
	defer up.Close()

	for _, tt := range []struct {
		name         string
		method, body string
		retry        bool
		plan         []int
		timeout      time.Duration
		wantStatus   int // 0: an error
		wantHits     int
		wantAttempts int32
	}{
		{name: "503 twice then 200", method: "GET", retry: true, plan: []int{503, 503}, wantStatus: 200, wantHits: 3, wantAttempts: 3},
		{name: "503 to exhaustion", method: "GET", retry: true, plan: []int{503, 503, 503}, wantStatus: 503, wantHits: 3, wantAttempts: 3},
		{name: "dropped connection then 200", method: "GET", retry: true, plan: []int{0}, wantStatus: 200, wantHits: 2, wantAttempts: 2},
		{name: "not retryable", method: "POST", body: `{"a":1}`, plan: []int{503}, wantStatus: 503, wantHits: 1, wantAttempts: 0},
		{name: "404 is final", method: "GET", retry: true, plan: []int{404}, wantStatus: 404, wantHits: 1, wantAttempts: 1},
		{name: "body resent", method: "PUT", body: `{"name":"x"}`, retry: true, plan: []int{502}, wantStatus: 200, wantHits: 2, wantAttempts: 2},
		{name: "Retry-After past the deadline", method: "GET", retry: true, plan: []int{429}, timeout: time.Second, wantStatus: 429, wantHits: 1, wantAttempts: 1},
		{name: "Retry-After past a Duration", method: "GET", retry: true, plan: []int{1503}, timeout: time.Second, wantStatus: 503, wantHits: 1, wantAttempts: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A client of its own: the first request goes on a new
			// connection, which net/http never retries by itself (it
			// would resend a GET whose reused connection dropped).
			c := upstream.New(upstream.Options{RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
			mu.Lock()
			hits, plan = nil, tt.plan
			mu.Unlock()
			ctx := t.Context()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			var attempts atomic.Int32
			ctx = upstream.WithAttempts(ctx, &attempts)
			if tt.retry {
				ctx = upstream.WithRetry(ctx)
			}
			var rd io.Reader
			if tt.body != "" {
				rd = strings.NewReader(tt.body)
			}
			req, _ := http.NewRequestWithContext(ctx, tt.method, up.URL+"/x", rd)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || string(b) != fmt.Sprintf("status %d", tt.wantStatus) {
				t.Errorf("answer %d %q, want %d", resp.StatusCode, b, tt.wantStatus)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(hits) != tt.wantHits {
				t.Errorf("upstream got %d requests, want %d", len(hits), tt.wantHits)
			}
			for i, h := range hits {
				if h.method != tt.method || h.body != tt.body {
					t.Errorf("attempt %d: %s %q, want %s %q", i+1, h.method, h.body, tt.method, tt.body)
				}
			}
			if n := attempts.Load(); n != tt.wantAttempts {
				t.Errorf("attempts counter %d, want %d", n, tt.wantAttempts)
			}
		})
	}

	t.Run("retries disabled", func(t *testing.T) {
		mu.Lock()
		hits, plan = nil, []int{503}
		mu.Unlock()
		req, _ := http.NewRequestWithContext(upstream.WithRetry(t.Context()), "GET", up.URL+"/x", nil)
		resp, err := upstream.New(upstream.Options{Retries: -1}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		mu.Lock()
		defer mu.Unlock()
		if resp.StatusCode != 503 || len(hits) != 1 {
			t.Errorf("status %d after %d requests, want 503 after 1", resp.StatusCode, len(hits))
		}
	})

	t.Run("cancelled while waiting", func(t *testing.T) {
		mu.Lock()
		hits, plan = nil, []int{503, 503}
		mu.Unlock()
		slow := upstream.New(upstream.Options{RetryWaitMin: time.Minute, RetryWaitMax: time.Minute})
		// No deadline (one would refuse a wait past it at once): the
		// caller cancels during the wait.
		ctx, cancel := context.WithCancel(upstream.WithRetry(t.Context()))
		defer cancel()
		time.AfterFunc(100*time.Millisecond, cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", up.URL+"/x", nil)
		start := time.Now()
		resp, err := slow.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want the cancellation", err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("returned after %s", took)
		}
	})
}
