package upstream_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

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
			w.WriteHeader(http.StatusOK)
		}
	}))
	defer up.Close()
	c := upstream.New(upstream.Options{})
	for _, tt := range []struct {
		path string
		want int
	}{{"/away", http.StatusFound}, {"/here", http.StatusOK}} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, up.URL+tt.path, nil)
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
