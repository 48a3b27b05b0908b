package transport

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// parseTrustedProxies reads HTTPOptions.TrustedProxies: CIDR prefixes or
// single addresses.
func parseTrustedProxies(entries []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if p, err := netip.ParsePrefix(e); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(e)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR prefix", e)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// trusted reports whether a is in one of the prefixes.
func trusted(prefixes []netip.Prefix, a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedFor returns next with the client's address taken from
// X-Forwarded-For when the request comes from a trusted proxy: the
// rightmost address of the header that is not itself a trusted proxy (the
// left part of the header is whatever the client wrote, so it is never
// believed). A request from any other address keeps its own, whatever
// header it sends. Everything after it (per-IP quotas and caps, the
// caller's address in logs) then sees the client instead of the proxy.
func forwardedFor(prefixes []netip.Prefix, next http.Handler) http.Handler {
	if len(prefixes) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if client, ok := forwardedClient(prefixes, r); ok {
			r2 := r.WithContext(r.Context())
			r2.RemoteAddr = netip.AddrPortFrom(client, 0).String()
			r = r2
		}
		next.ServeHTTP(w, r)
	})
}

// forwardedClient is the client address X-Forwarded-For gives for r, when
// r's peer is a trusted proxy and the header names one.
func forwardedClient(prefixes []netip.Prefix, r *http.Request) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !trusted(prefixes, peer) {
		return netip.Addr{}, false
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	var last netip.Addr
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := hopAddr(hops[i])
		if !ok {
			break // garbage: nothing left of it is believed
		}
		last = a
		if !trusted(prefixes, a) {
			return a, true
		}
	}
	// Every hop a trusted proxy: the leftmost one that parsed.
	return last, last.IsValid()
}

// hopAddr reads one X-Forwarded-For entry: an address, possibly with a
// port or in brackets.
func hopAddr(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}
