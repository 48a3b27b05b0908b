package specloader

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// What a spec may make the loader fetch.
//
// A spec's $refs are requests the spec's author makes from the bridge's
// network, so they are held to the spec's own origin (scheme, host, port)
// unless Options.AllowOrigins names others, and a spec from a URL never
// reads local files. Redirects, of the spec itself or of a $ref, may stay on
// the origin of the request (or move from http to https on the same host),
// go to the spec's own origin, or to an allowed one; nothing else.
//
// Whatever the origin, the address actually dialed is checked, after the
// name is resolved, so that DNS rebinding cannot move a permitted name onto
// a forbidden address:
//   - link-local (169.254.0.0/16, where cloud metadata services answer, and
//     fe80::/10), unspecified, multicast, broadcast and reserved addresses,
//     and the metadata addresses outside those ranges (fd00:ec2::254,
//     100.100.100.200), are never dialed, not even for the spec itself;
//   - loopback and private addresses (127.0.0.0/8, ::1, 10.0.0.0/8,
//     172.16.0.0/12, 192.168.0.0/16, fc00::/7, 100.64.0.0/10) are dialed for
//     the spec's own URL and its redirects; for anything else only when the
//     spec is a local file or in memory, when its URL names such an address
//     or localhost literally, or for a host of Options.AllowOrigins. A spec
//     at a name that resolves to a private address (specs.corp.example)
//     whose $refs stay on that name needs its origin in AllowOrigins: that
//     the name resolved privately once is no proof it will again.
//
// The operator's names are trusted, the spec's and its DNS answers are not.

// forbidden holds the ranges never dialed beyond what netip's predicates
// (unspecified, link-local, multicast) cover.
var forbidden = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),          // "this network"
	netip.MustParsePrefix("100.100.100.200/32"), // Alibaba Cloud metadata
	netip.MustParsePrefix("192.0.0.0/24"),       // IETF protocol assignments (Oracle Cloud's 192.0.0.192)
	netip.MustParsePrefix("240.0.0.0/4"),        // reserved, and broadcast
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS metadata over IPv6
}

// internal holds the ranges treated as loopback/private beyond netip's
// IsLoopback and IsPrivate.
var internal = []netip.Prefix{
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT, cloud-internal services
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking, used inside some networks
	netip.MustParsePrefix("fec0::/10"),     // deprecated site-local
}

var nat64 = netip.MustParsePrefix("64:ff9b::/96")

type addrClass int

const (
	public addrClass = iota
	private
	never
)

// classify says which rule an address falls under, and names its kind.
func classify(ip netip.Addr) (addrClass, string) {
	ip = ip.Unmap()
	if nat64.Contains(ip) { // an IPv4 address behind NAT64
		b := ip.As16()
		return classify(netip.AddrFrom4([4]byte(b[12:])))
	}
	switch {
	case !ip.IsValid() || ip.IsUnspecified():
		return never, "unspecified"
	case ip.IsLinkLocalUnicast():
		return never, "link-local (cloud metadata)"
	case ip.IsMulticast():
		return never, "multicast"
	}
	for _, p := range forbidden { // before IsPrivate: fd00:ec2::254 is in fc00::/7
		if p.Contains(ip) {
			return never, "reserved or metadata"
		}
	}
	switch {
	case ip.IsLoopback():
		return private, "loopback"
	case ip.IsPrivate():
		return private, "private"
	}
	for _, p := range internal {
		if p.Contains(ip) {
			return private, "private"
		}
	}
	return public, "public"
}

// policy is what one session may fetch and dial.
type policy struct {
	// rootOrigin and rootHost are those of a spec at an http(s) URL; ""
	// for a local file or a spec in memory.
	rootOrigin, rootHost string
	// local is true for a spec that is a file or in memory.
	local bool
	// rootLiteral is true when the spec's URL names a loopback or private
	// address, or localhost, literally.
	rootLiteral bool
	// allowed holds the origins of Options.AllowOrigins, allowedHosts
	// their host names (the dial sees names, not origins).
	allowed      map[string]bool
	allowedHosts map[string]bool
	// rootDir is the directory of a spec loaded from a file, the one
	// under which its file $refs are followed, besides allowedDirs (the
	// file:///dir entries of Options.AllowOrigins).
	rootDir     string
	allowedDirs []string
}

func newPolicy(root *url.URL, origins []string) (*policy, error) {
	p := &policy{allowed: map[string]bool{}, allowedHosts: map[string]bool{}}
	for _, o := range origins {
		u, err := url.Parse(strings.TrimSpace(o))
		if err == nil && isFile(u) && u.Scheme != "" && filepath.IsAbs(filepath.FromSlash(u.Path)) && u.RawQuery == "" && u.Fragment == "" {
			p.allowedDirs = append(p.allowedDirs, filepath.Clean(filepath.FromSlash(u.Path)))
			continue
		}
		if err != nil || !isHTTP(u) || u.Hostname() == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("Options.AllowOrigins (--spec-allow-origin): %q is not an origin (want scheme://host[:port], scheme http or https, or file:///directory)", RedactURL(o))
		}
		p.allowed[originOf(u)] = true
		p.allowedHosts[hostOf(u.Hostname())] = true
	}
	if root == nil || !isHTTP(root) {
		p.local = true
		if root != nil && isFile(root) {
			p.rootDir = filepath.Dir(filepath.FromSlash(root.Path))
		}
		return p, nil
	}
	p.rootOrigin, p.rootHost = originOf(root), hostOf(root.Hostname())
	if ip, err := netip.ParseAddr(p.rootHost); err == nil {
		c, _ := classify(ip)
		p.rootLiteral = c == private
	} else {
		p.rootLiteral = p.rootHost == "localhost" || strings.HasSuffix(p.rootHost, ".localhost")
	}
	return p, nil
}

// originOf is the origin of u, lower case, with the port always given:
// "https://example.com:443".
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = defaultPort(scheme)
	}
	return scheme + "://" + net.JoinHostPort(hostOf(u.Hostname()), port)
}

func defaultPort(scheme string) string {
	switch scheme {
	case "https":
		return "443"
	case "socks5", "socks5h":
		return "1080"
	default:
		return "80"
	}
}

// hostOf normalizes a host name for comparison.
func hostOf(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// fileAllowed says whether a $ref to the local file path (absolute) may be
// read: one under the spec's own directory or a directory of
// Options.AllowOrigins. A spec from a file found anywhere (a download)
// must not read the operator's other files (../../.ssh/id_rsa, /etc/passwd)
// into its tools, its openapi://spec or its error messages.
func (p *policy) fileAllowed(path string) error {
	path = filepath.Clean(path)
	for _, dir := range append([]string{p.rootDir}, p.allowedDirs...) {
		if dir == "" {
			continue
		}
		if rel, err := filepath.Rel(dir, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil
		}
	}
	where := "the spec has no directory (it is in memory)"
	if p.rootDir != "" {
		where = "it is outside the spec's directory " + p.rootDir
	}
	return &policyError{fmt.Sprintf("reference to local file %s is not followed: %s; allow a directory with Options.AllowOrigins (--spec-allow-origin file:///DIR)", path, where)}
}

// refAllowed says whether a $ref to the http(s) URL u may be fetched.
func (p *policy) refAllowed(u *url.URL) error {
	o := originOf(u)
	switch {
	case p.rootOrigin != "" && o == p.rootOrigin, p.allowed[o]:
		return nil
	case p.rootOrigin != "":
		return &policyError{fmt.Sprintf("reference to %s is not followed: references are followed only on the spec's own origin %s and on the origins of Options.AllowOrigins (--spec-allow-origin)", displayURL(u), p.rootOrigin)}
	default:
		return &policyError{fmt.Sprintf("reference to %s is not followed: a local spec's references to URLs are followed only to the origins of Options.AllowOrigins (--spec-allow-origin)", displayURL(u))}
	}
}

// redirectAllowed says whether a request first made to from may follow a
// redirect to to.
func (p *policy) redirectAllowed(from, to *url.URL) error {
	if !isHTTP(to) {
		return &policyError{fmt.Sprintf("redirect to %s refused: not an http(s) URL", displayURL(to))}
	}
	o := originOf(to)
	if o == originOf(from) || upgrade(from, to) || (p.rootOrigin != "" && o == p.rootOrigin) || p.allowed[o] {
		return nil
	}
	return &policyError{fmt.Sprintf("redirect from %s to %s refused: another origin, not in Options.AllowOrigins (--spec-allow-origin)", displayURL(from), displayURL(to))}
}

// upgrade is a redirect from http to https on the same host.
func upgrade(from, to *url.URL) bool {
	return strings.EqualFold(from.Scheme, "http") && strings.EqualFold(to.Scheme, "https") && hostOf(from.Hostname()) == hostOf(to.Hostname())
}

// rootFetchKey marks the context of the requests that fetch the spec
// itself, whose host the operator named.
type rootFetchKey struct{}

func isRootFetch(ctx context.Context) bool {
	v, _ := ctx.Value(rootFetchKey{}).(bool)
	return v
}

// checkAddr says whether ip, which host resolved to, may be dialed.
func (p *policy) checkAddr(ctx context.Context, host string, ip netip.Addr) error {
	class, kind := classify(ip)
	switch class {
	case never:
		return &policyError{fmt.Sprintf("refusing to connect to %s (%s): %s addresses are never dialed", ip, host, kind)}
	case private:
		host = hostOf(host)
		if p.local || p.rootLiteral || p.allowedHosts[host] || (isRootFetch(ctx) && host == p.rootHost) {
			return nil
		}
		return &policyError{fmt.Sprintf("refusing to connect to %s (%s): a %s address, dialed for the spec's $refs only when the spec is local or its URL names a loopback or private address literally, or for the origins of Options.AllowOrigins", ip, host, kind)}
	}
	return nil
}

// dialGuard dials for a session's own client, checking each address after
// resolution and dialing that very address.
type dialGuard struct {
	p      *policy
	dialer net.Dialer
	// lookup resolves a host name; tests replace it.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// proxy picks the proxy for a request (http.ProxyFromEnvironment).
	proxy func(*http.Request) (*url.URL, error)

	mu      sync.Mutex
	proxies map[string]bool // host:port of the proxies in use
}

func newDialGuard(p *policy) *dialGuard {
	return &dialGuard{
		p:      p,
		dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second},
		lookup: func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		},
		proxy:   http.ProxyFromEnvironment,
		proxies: map[string]bool{},
	}
}

// resolve returns the addresses of host, a name or an IP literal.
func (g *dialGuard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{ip}, nil
	}
	ips, err := g.lookup(ctx, host)
	for i, ip := range ips {
		ips[i] = ip.Unmap() // the resolver may answer IPv4 in IPv6 form
	}
	return ips, err
}

// DialContext is the dialer of the session's transport.
func (g *dialGuard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	g.mu.Lock()
	viaProxy := g.proxies[strings.ToLower(addr)]
	g.mu.Unlock()
	if viaProxy {
		// The proxy is the operator's; the target was checked in
		// proxyFor, by name, as well as a lookup allows.
		return g.dialer.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ips, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var refused, failed error
	for _, ip := range ips {
		if err := g.p.checkAddr(ctx, host, ip); err != nil {
			refused = err
			continue
		}
		c, err := g.dialer.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		failed = err
	}
	switch {
	case failed != nil:
		return nil, failed
	case refused != nil:
		return nil, refused
	default:
		return nil, fmt.Errorf("no address for %s", host)
	}
}

// precheck checks every address host resolves to now. It is what can be
// done when the loader does not dial itself (a proxy, Options.Client);
// DNS rebinding can defeat it.
func (g *dialGuard) precheck(ctx context.Context, host string) error {
	ips, err := g.resolve(ctx, host)
	if err != nil {
		return err
	}
	for _, ip := range ips {
		if err := g.p.checkAddr(ctx, host, ip); err != nil {
			return err
		}
	}
	return nil
}

// proxyFor is the Proxy of the session's transport.
func (g *dialGuard) proxyFor(req *http.Request) (*url.URL, error) {
	pu, err := g.proxy(req)
	if err != nil || pu == nil {
		return pu, err
	}
	if err := g.precheck(req.Context(), req.URL.Hostname()); err != nil {
		return nil, err
	}
	port := pu.Port()
	if port == "" {
		port = defaultPort(strings.ToLower(pu.Scheme))
	}
	g.mu.Lock()
	g.proxies[strings.ToLower(net.JoinHostPort(pu.Hostname(), port))] = true
	g.mu.Unlock()
	return pu, nil
}

// checkedTransport puts precheck in front of the transport of a client
// given in Options.Client, whose dialing the loader cannot see.
type checkedTransport struct {
	next http.RoundTripper
	g    *dialGuard
}

func (t *checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.g.precheck(req.Context(), req.URL.Hostname()); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.next.RoundTrip(req)
}

// newTransport returns the transport of a session's own client: the
// default transport's settings with the guard's dialer and proxy choice,
// and conf (nil: the system roots) for TLS.
func newTransport(g *dialGuard, conf *tls.Config) *http.Transport {
	var t *http.Transport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t = dt.Clone()
	} else {
		t = &http.Transport{ForceAttemptHTTP2: true, TLSHandshakeTimeout: 10 * time.Second}
	}
	t.Proxy = g.proxyFor
	t.DialContext = g.DialContext
	t.DialTLSContext = nil
	if conf != nil {
		t.TLSClientConfig = conf.Clone()
	}
	return t
}

// splitTransport sends the fetches of the spec itself and the others over
// two pools of connections: a connection dialed for the spec's own URL,
// where private addresses are allowed, must not carry a $ref later, which
// would then skip the check its own dial would get.
type splitTransport struct {
	root, refs *http.Transport
}

func (t *splitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if isRootFetch(req.Context()) {
		return t.root.RoundTrip(req)
	}
	return t.refs.RoundTrip(req)
}
