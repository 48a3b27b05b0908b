package transport

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// originPolicy decides which browser origins may call the MCP endpoints.
//
// The MCP transport spec requires servers to validate Origin to stop DNS
// rebinding and cross-site requests; go-sdk only checks Host on loopback
// listeners (see hostAllowed), so the Origin check is ours.
type originPolicy struct {
	// allowed holds normalized origins; empty means the loopback default.
	allowed map[string]bool
	// ownHost adds the request's own host to the loopback default. Only
	// with inbound auth: a DNS-rebinding page sends its own name as Host
	// and Origin alike, and on a listener that is not loopback (a
	// container's, published on the host's loopback) the Host check does
	// not apply, so without a credential to stop it the page would pass.
	ownHost bool
}

func newOriginPolicy(origins []string, ownHost bool) originPolicy {
	p := originPolicy{allowed: make(map[string]bool, len(origins)), ownHost: ownHost}
	for _, o := range origins {
		if n, err := normalizeOrigin(o); err == nil { // validated before
			p.allowed[n] = true
		}
	}
	return p
}

// allow reports whether the request's Origin header, if any, is allowed.
// Requests without Origin come from non-browser clients and are allowed.
// Browsers send one Origin header; a request with several is refused, since
// a proxy or framework behind us may read another one than the first.
func (p originPolicy) allow(r *http.Request) bool {
	values := r.Header.Values("Origin")
	if len(values) > 1 {
		return false
	}
	origin := ""
	if len(values) == 1 {
		origin = values[0]
	}
	if origin == "" {
		return true
	}
	n, err := normalizeOrigin(origin)
	if err != nil {
		return false // includes the opaque origin "null"
	}
	if len(p.allowed) > 0 {
		return p.allowed[n]
	}
	u, err := url.Parse(n)
	if err != nil {
		return false
	}
	return isLoopbackHost(u.Host) || p.ownHost && strings.EqualFold(u.Host, stripDefaultPort(u.Scheme, r.Host))
}

// cors writes the CORS response headers for an allowed cross-origin request
// and answers a preflight. It reports whether the request was a preflight
// (and so has been answered).
func cors(w http.ResponseWriter, r *http.Request) (preflight bool) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	// Retry-After: the REST facade's 429 says when to retry in it, and it is
	// not CORS-safelisted.
	h.Set("Access-Control-Expose-Headers", "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, Retry-After")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
	if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
		h.Set("Access-Control-Allow-Headers", req)
	}
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// hostPolicy holds the Host values a loopback listener accepts besides
// loopback names (HTTPOptions.AllowedHosts), normalized by normalizeHost.
type hostPolicy map[string]bool

func newHostPolicy(hosts []string) hostPolicy {
	if len(hosts) == 0 {
		return nil
	}
	p := make(hostPolicy, len(hosts))
	for _, h := range hosts {
		if n, err := normalizeHost(h); err == nil { // validated before
			p[n] = true
		}
	}
	return p
}

// allow reports whether host (a request's Host) is listed, whole or, for
// an entry without a port, by its name.
func (p hostPolicy) allow(host string) bool {
	if len(p) == 0 {
		return false
	}
	h := strings.ToLower(host)
	if p[h] {
		return true
	}
	name, _, err := net.SplitHostPort(h)
	return err == nil && p[name]
}

// normalizeHost checks an AllowedHosts entry, a host name or address with
// an optional port as a Host header carries it, and lower-cases it.
func normalizeHost(h string) (string, error) {
	if h == "" || strings.ContainsAny(h, "/@?# \t") {
		return "", fmt.Errorf("host %q is not of the form host[:port]", h)
	}
	u, err := url.Parse("http://" + h)
	if err != nil || u.Host != h || u.Hostname() == "" {
		return "", fmt.Errorf("host %q is not of the form host[:port]", h)
	}
	return strings.ToLower(h), nil
}

// hostAllowed is the DNS-rebinding check go-sdk applies to /mcp, applied to
// every MCP route: a request that reached a loopback listener must name a
// loopback host, or one of hosts (--allowed-host).
func hostAllowed(r *http.Request, hosts hostPolicy) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return true
	}
	if tcp, isTCP := local.(*net.TCPAddr); isTCP {
		// The usual listener: no formatting and parsing of the address on
		// every request.
		if !tcp.IP.IsLoopback() {
			return true
		}
	} else if !isLoopbackHost(local.String()) {
		return true
	}
	return isLoopbackHost(r.Host) || hosts.allow(r.Host)
}

// normalizeOrigin returns origin as lower-case scheme://host[:port], without
// a default port, or an error if it is not an http(s) origin.
func normalizeOrigin(origin string) (string, error) {
	u, err := url.Parse(origin)
	if err != nil {
		return "", fmt.Errorf("origin %q: %w", origin, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("origin %q is not of the form http(s)://host[:port]", origin)
	}
	scheme := strings.ToLower(u.Scheme)
	return scheme + "://" + strings.ToLower(stripDefaultPort(scheme, u.Host)), nil
}

// stripDefaultPort drops ":80" from an http host and ":443" from an https one,
// as browsers do in the Origin header.
func stripDefaultPort(scheme, host string) string {
	switch {
	case scheme == "http" && strings.HasSuffix(host, ":80"):
		return strings.TrimSuffix(host, ":80")
	case scheme == "https" && strings.HasSuffix(host, ":443"):
		return strings.TrimSuffix(host, ":443")
	}
	return host
}

// isLoopbackHost reports whether hostport ("host", "host:port", "[::1]:port")
// names localhost or a loopback IP.
func isLoopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.Trim(hostport, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
