package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestTrustedProxyForwardedFor: behind a reverse proxy every caller came
// from the proxy's address, so a per-IP quota counted all of them as one
// (the first caller used up everyone's). With --trusted-proxy, a request
// from the proxy is counted as the rightmost X-Forwarded-For address that
// is not itself a trusted proxy; the part a client writes itself (the
// left) is never believed, and without the setting the header is ignored.
func TestTrustedProxyForwardedFor(t *testing.T) {
	rec := newRecorder(t)
	call := func(base, xff string) int {
		t.Helper()
		req, err := http.NewRequest("POST", base+"/api/tools/getItem", strings.NewReader(`{"itemId":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	args := []string{"serve", "--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml",
		"--upstream", rec.srv.URL + "/api", "--rest", "--quota", "1/1h", "--no-cache"}

	behind := startHTTPBridge(t, append(args, "--trusted-proxy", "127.0.0.0/8")...)
	for _, c := range []struct {
		xff  string
		want int
	}{
		{"203.0.113.5", 200},
		{"203.0.113.5", 429},               // its one call is used
		{"203.0.113.6", 200},               // another client: its own quota
		{"198.51.100.9, 203.0.113.5", 429}, // a forged left part changes nothing
		{"203.0.113.7, 127.0.0.2", 200},    // a second trusted hop is skipped
	} {
		if got := call(behind, c.xff); got != c.want {
			t.Errorf("behind a trusted proxy, X-Forwarded-For %q: HTTP %d; want %d", c.xff, got, c.want)
		}
	}

	direct := startHTTPBridge(t, args...)
	if got := call(direct, "203.0.113.5"); got != 200 {
		t.Fatalf("first call: HTTP %d", got)
	}
	if got := call(direct, "203.0.113.6"); got != 429 {
		t.Errorf("without --trusted-proxy, a second caller naming another X-Forwarded-For: HTTP %d; want 429 (the header is the client's to write)", got)
	}
}
