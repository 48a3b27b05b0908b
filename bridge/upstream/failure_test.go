package upstream_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
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

// TestUpstreamTLSFailures: each certificate problem is named for what it
// is (not all as an unknown CA), and none is retried.
func TestUpstreamTLSFailures(t *testing.T) {
	expired := selfSigned(t, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	for _, tt := range []struct {
		name  string
		cert  *tls.Certificate   // nil: httptest's (127.0.0.1, example.com)
		trust bool               // add the server's certificate to the roots
		host  string             // "" the server's address
		auth  tls.ClientAuthType // required of the bridge
		want  string
	}{
		{name: "unknown authority", want: "not trusted (a private CA? see --upstream-ca-file)"},
		{name: "wrong host name", trust: true, host: "localhost", want: "not valid for its host name"},
		{name: "expired", cert: &expired, trust: true, want: "has expired or is not yet valid"},
		{name: "client certificate required", trust: true, auth: tls.RequireAnyClientCert, want: "refused the TLS handshake (tls: certificate required); a client certificate? see --upstream-client-cert"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var conns atomic.Int32
			up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
			up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			up.Config.ErrorLog = log.New(io.Discard, "", 0)
			up.TLS = &tls.Config{ClientAuth: tt.auth}
			if tt.cert != nil {
				up.TLS.Certificates = []tls.Certificate{*tt.cert}
			}
			up.StartTLS()
			defer up.Close()
			var conf *tls.Config
			if tt.trust {
				pool := x509.NewCertPool()
				leaf := up.Certificate()
				if tt.cert != nil {
					leaf, _ = x509.ParseCertificate(tt.cert.Certificate[0])
				}
				pool.AddCert(leaf)
				conf = &tls.Config{RootCAs: pool}
			}
			url := up.URL
			if tt.host != "" {
				_, port, _ := net.SplitHostPort(up.Listener.Addr().String())
				url = "https://" + net.JoinHostPort(tt.host, port)
			}
			c := upstream.New(upstream.Options{TLS: conf, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
			req, _ := http.NewRequestWithContext(upstream.WithRetry(t.Context()), "GET", url+"/x", nil)
			resp, err := c.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatal("the call succeeded")
			}
			if k := upstream.FailureKind(err); !strings.Contains(k, tt.want) {
				t.Errorf("failure %q (%v), want it to say %q", k, err, tt.want)
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("%d connections, want 1: a TLS failure is not retried", n)
			}
		})
	}
}

// selfSigned is a certificate for 127.0.0.1 valid from notBefore to
// notAfter.
func selfSigned(t *testing.T, notBefore, notAfter time.Time) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "upstream"},
		NotBefore: notBefore, NotAfter: notAfter,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestUpstreamProxyRefusal: an HTTPS_PROXY that refuses the CONNECT tunnel
// (407) or cannot be reached is named as the proxy's doing, not as a bare
// "transport error" or the upstream's refusal, and is not retried. net/http
// reads the proxy environment once per process, so the test runs itself
// again with it set.
func TestUpstreamProxyRefusal(t *testing.T) {
	if mode := os.Getenv("UPSTREAM_PROXY_TEST"); mode != "" {
		proxyRefusalChild(t, mode)
		return
	}
	var connects atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect {
			connects.Add(1)
		}
		w.Header().Set("Proxy-Authenticate", `Basic realm="proxy"`)
		w.WriteHeader(http.StatusProxyAuthRequired)
	}))
	defer proxy.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	for _, tt := range []struct{ mode, proxy string }{
		{"407", strings.Replace(proxy.URL, "http://", "http://user:wrong@", 1)},
		{"dead", "http://" + dead},
	} {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestUpstreamProxyRefusal$", "-test.v")
		cmd.Env = append(os.Environ(), "UPSTREAM_PROXY_TEST="+tt.mode, "HTTPS_PROXY="+tt.proxy, "https_proxy="+tt.proxy, "NO_PROXY=", "no_proxy=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", tt.mode, err, out)
		}
	}
	if n := connects.Load(); n != 1 {
		t.Errorf("the proxy got %d CONNECTs, want 1: a refusal is not retried", n)
	}
}

func proxyRefusalChild(t *testing.T, mode string) {
	c := upstream.New(upstream.Options{RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond})
	// Never reached: the proxy refuses the tunnel (or is not there).
	req, _ := http.NewRequestWithContext(upstream.WithRetry(t.Context()), "GET", "https://upstream.example:8443/x", nil)
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("the call succeeded")
	}
	want := map[string]string{
		"407":  "the proxy refused the tunnel to the upstream: HTTP 407 Proxy Authentication Required",
		"dead": "cannot reach the proxy (HTTP_PROXY/HTTPS_PROXY): connection refused",
	}[mode]
	k := upstream.FailureKind(err)
	if !strings.HasPrefix(k, want) {
		t.Errorf("failure %q (%v), want %q", k, err, want)
	}
	if strings.Contains(k, "wrong") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("the proxy's password in %q / %v", k, err)
	}
}
