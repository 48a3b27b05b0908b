package specloader

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		ip   string
		want addrClass
	}{
		{"169.254.169.254", never},
		{"169.254.0.1", never},
		{"fe80::1", never},
		{"fd00:ec2::254", never},
		{"100.100.100.200", never},
		{"0.0.0.0", never},
		{"0.1.2.3", never},
		{"::", never},
		{"255.255.255.255", never},
		{"224.0.0.1", never},
		{"ff02::1", never},
		{"::ffff:169.254.169.254", never},
		{"64:ff9b::a9fe:a9fe", never}, // 169.254.169.254 through NAT64
		{"127.0.0.1", private},
		{"127.1.2.3", private},
		{"::1", private},
		{"::ffff:127.0.0.1", private},
		{"10.1.2.3", private},
		{"172.16.0.1", private},
		{"172.31.255.255", private},
		{"192.168.1.1", private},
		{"100.64.0.1", private},
		{"fd12:3456::1", private},
		{"64:ff9b::a00:1", private}, // 10.0.0.1 through NAT64
		{"8.8.8.8", public},
		{"172.32.0.1", public},
		{"203.0.113.7", public},
		{"2606:4700::1111", public},
	}
	for _, tt := range tests {
		if got, kind := classify(netip.MustParseAddr(tt.ip)); got != tt.want {
			t.Errorf("classify(%s) = %v (%s); want %v", tt.ip, got, kind, tt.want)
		}
	}
}

// resolver answers lookups from a table that tests change as they go, the
// way a rebinding DNS server would.
type resolver struct {
	mu    sync.Mutex
	addrs map[string]string
	n     map[string]int
}

func (r *resolver) set(host, ip string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addrs[host] = ip
}

func (r *resolver) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n[host]++
	ip, ok := r.addrs[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr(ip)}, nil
}

func newResolver() *resolver { return &resolver{addrs: map[string]string{}, n: map[string]int{}} }

// loadVia is Load with the session's lookup (and proxy) replaced.
func loadVia(t *testing.T, src string, opts Options, r *resolver, proxy *url.URL) (*Result, error) {
	t.Helper()
	loc, err := parseSource(src)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newSession(t.Context(), loc, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	s.guard.lookup = r.lookup
	s.guard.proxy = func(*http.Request) (*url.URL, error) { return proxy, nil }
	data, _, _, err := s.readRoot(loc, Validator{})
	if err != nil {
		return nil, err
	}
	s.setRoot(loc, data)
	return s.load(data, loc, newScrubber(loc))
}

// splitSpecServer serves testdata/refs at every host name it is reached by.
func splitSpecServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir("testdata/refs")))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return srv, u.Port()
}

// TestDNSRebinding: the address a name resolves to is checked when it is
// dialed. A spec at a name that resolved to a loopback address is fetched
// (the operator named it), but its $refs on that name are not, unless
// AllowOrigins names it: that the name resolved privately once does not
// say it will again. Link-local answers are refused whatever the origin.
func TestDNSRebinding(t *testing.T) {
	_, port := splitSpecServer(t)
	src := "http://spec.test:" + port + "/openapi.yaml"
	r := newResolver()
	r.set("spec.test", "127.0.0.1")

	_, err := loadVia(t, src, Options{}, r, nil)
	if err == nil || !strings.Contains(err.Error(), "refusing to connect to 127.0.0.1 (spec.test): a loopback address") {
		t.Errorf("$refs on a name that resolves to loopback: %v; want them refused", err)
	}

	opts := Options{AllowOrigins: []string{"http://spec.test:" + port}}
	res, err := loadVia(t, src, opts, r, nil)
	if err != nil {
		t.Fatalf("with the origin allowed: %v", err)
	}
	if len(res.ExternalRefs) != 2 {
		t.Errorf("ExternalRefs = %v; want the two documents", res.ExternalRefs)
	}

	r.set("spec.test", "169.254.169.254")
	_, err = loadVia(t, src, opts, r, nil)
	if err == nil || !strings.Contains(err.Error(), "refusing to connect to 169.254.169.254 (spec.test): link-local") {
		t.Errorf("a name that resolves to the metadata address: %v; want it refused", err)
	}
}

// TestRebindingAfterRoot: a name that resolves publicly for the spec and
// to loopback for its $refs is caught at the $ref's own dial, not let
// through on the spec's connection.
func TestRebindingAfterRoot(t *testing.T) {
	srv, port := splitSpecServer(t)
	r := newResolver()
	// The spec's fetch goes through a proxy (so its public answer is not
	// dialed); the $refs are dialed directly and get loopback.
	src := "http://spec.test:" + port + "/openapi.yaml"
	r.set("spec.test", "203.0.113.7")
	loc, _ := parseSource(src)
	s, err := newSession(t.Context(), loc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	s.guard.lookup = r.lookup
	proxy, _ := url.Parse(srv.URL) // the file server answers absolute-form requests too
	s.guard.proxy = func(req *http.Request) (*url.URL, error) {
		if isRootFetch(req.Context()) {
			return proxy, nil
		}
		return nil, nil
	}
	data, _, _, err := s.readRoot(loc, Validator{})
	if err != nil {
		t.Fatalf("fetching the spec through the proxy: %v", err)
	}
	s.setRoot(loc, data)
	r.set("spec.test", "127.0.0.1")
	_, err = s.load(data, loc, newScrubber(loc))
	if err == nil || !strings.Contains(err.Error(), "a loopback address") {
		t.Errorf("$refs after the name rebound to loopback: %v; want them refused", err)
	}
}

// TestProxyChecksTarget: behind a proxy, the proxy is dialed whatever its
// address, and the target is checked by name before the request.
func TestProxyChecksTarget(t *testing.T) {
	var mu sync.Mutex
	var hosts []string
	files := http.FileServer(http.Dir("testdata/refs"))
	proxySrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		hosts = append(hosts, req.Host)
		mu.Unlock()
		if req.Host == "meta.test" {
			w.Write([]byte("secret: the metadata\n"))
			return
		}
		files.ServeHTTP(w, req)
	}))
	t.Cleanup(proxySrv.Close)
	proxy, _ := url.Parse(proxySrv.URL)

	r := newResolver()
	r.set("spec.test", "203.0.113.7")
	r.set("meta.test", "169.254.169.254")
	res, err := loadVia(t, "http://spec.test/openapi.yaml", Options{}, r, proxy)
	if err != nil {
		t.Fatalf("a public spec through a loopback proxy: %v", err)
	}
	if len(res.ExternalRefs) != 2 {
		t.Errorf("ExternalRefs = %v; want the two documents", res.ExternalRefs)
	}

	spec := []byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200': {$ref: 'http://meta.test/latest/x.yaml'}\n")
	loc, _ := url.Parse("http://spec.test/openapi.yaml")
	s, err := newSession(t.Context(), loc, Options{AllowOrigins: []string{"http://meta.test"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	s.guard.lookup = r.lookup
	s.guard.proxy = func(*http.Request) (*url.URL, error) { return proxy, nil }
	s.setRoot(loc, spec)
	_, err = s.load(spec, loc, newScrubber(loc))
	if err == nil || !strings.Contains(err.Error(), "refusing to connect to 169.254.169.254 (meta.test)") {
		t.Errorf("a $ref through the proxy to a name that resolves to the metadata address: %v; want it refused", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range hosts {
		if h == "meta.test" {
			t.Error("the proxy was asked for meta.test")
		}
	}
}
