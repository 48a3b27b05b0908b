// Package clientaddr names the network a caller without credentials is
// counted as, for quotas and caps.
package clientaddr

import (
	"net"
	"net/netip"
)

// Bucket is the caller's address (host:port or host) as quotas and caps
// count it: without the port, so that a new connection is the same caller,
// and for IPv6 its /64 network, which is what one host or customer is
// routinely given: counted by full address, one machine could cycle
// through 2^64 fresh quotas. IPv4 (and IPv4-mapped IPv6) stays the
// address. Something that is not an IP address is returned without its
// port, as it is.
func Bucket(addr string) string {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is4() {
		return ip.String()
	}
	p, err := ip.WithZone("").Prefix(64)
	if err != nil {
		return host
	}
	return p.String()
}
