package upstream_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

// TestRetryAfterOnEveryRetriedStatus: the wait an upstream asks for in
// Retry-After is heeded on every status the policy retries. On 502 and
// 504 it was ignored: a gateway saying its backend is back in a second
// got the retry 1 ms later (the backoff), which spent the attempt and
// ignored what it asked. Retry-After past the call's deadline still
// returns that answer at once.
func TestRetryAfterOnEveryRetriedStatus(t *testing.T) {
	for _, code := range []int{429, 502, 503, 504} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			var (
				mu    sync.Mutex
				times []time.Time
			)
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				times = append(times, time.Now())
				n := len(times)
				mu.Unlock()
				if n == 1 {
					w.Header().Set("Retry-After", "1")
					w.WriteHeader(code)
					return
				}
				fmt.Fprint(w, "ok")
			}))
			defer up.Close()
			c := upstream.New(upstream.Options{RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
			req, _ := http.NewRequestWithContext(upstream.WithRetry(t.Context()), "GET", up.URL, nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			if resp.StatusCode != 200 || len(times) != 2 {
				t.Fatalf("status %d after %d requests, want 200 after 2", resp.StatusCode, len(times))
			}
			if gap := times[1].Sub(times[0]); gap < 900*time.Millisecond {
				t.Errorf("retried after %v; the upstream asked for 1s", gap)
			}
		})
	}
}
