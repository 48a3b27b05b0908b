package quota

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/transport/clientaddr"
)

// Anonymous is the bucket of callers with neither an identity nor a known
// address: they share one quota.
const Anonymous = "anonymous"

// Policy says which Limit applies to which caller. The zero Policy sets no
// quota at all.
type Policy struct {
	// Default applies to every caller PerIdentity does not name; the zero
	// Limit means no quota for them.
	Default Limit
	// PerIdentity overrides Default for the callers it names. A key is
	// matched, in this order, against the caller's Identity.ID ("api-key:0",
	// "jwt:ISS|SUB", "local" for stdio), then its Identity.Subject (a JWT
	// "sub", whatever the issuer), then its bucket key (see [BucketKey]: the
	// remote host for an unauthenticated caller, or "anonymous"); the first
	// match wins, and Default applies when none does. A key in the form of
	// another kind of caller ("api-key:N", "jwt:...", "local", "anonymous",
	// an address) is never matched by a subject, which the IdP may have let
	// its holder choose. A zero Limit here exempts that caller from Default.
	// Nil means no overrides.
	PerIdentity map[string]Limit
}

// ParsePolicy builds a Policy from its text form, as the configuration
// holds it: def for Default ("" means no default quota) and identities for
// PerIdentity, each read by [ParseLimit]. An identity that is one IP
// address stands for the bucket the address is counted in (see
// [BucketKey]: "2001:db8::5" for "2001:db8::/64", "::ffff:192.0.2.7" for
// "192.0.2.7"); two entries for one bucket are an error. Every bad entry is
// reported at once, naming its identity.
func ParsePolicy(def string, identities map[string]string) (Policy, error) {
	var p Policy
	var errs []error
	if def != "" {
		l, err := ParseLimit(def)
		if err != nil {
			errs = append(errs, fmt.Errorf("default: %w", err))
		}
		p.Default = l
	}
	if len(identities) > 0 {
		p.PerIdentity = make(map[string]Limit, len(identities))
	}
	from := make(map[string]string, len(identities)) // PerIdentity key → identity as written
	for _, id := range slices.Sorted(maps.Keys(identities)) {
		if id == "" {
			errs = append(errs, errors.New("identities: an empty identity key matches no caller"))
			continue
		}
		l, err := ParseLimit(identities[id])
		if err != nil {
			errs = append(errs, fmt.Errorf("identity %q: %w", id, err))
			continue
		}
		key := id
		if _, err := netip.ParseAddr(id); err == nil {
			key = clientaddr.Bucket(id)
		}
		if by, dup := from[key]; dup {
			errs = append(errs, fmt.Errorf("identities %q and %q: both name the callers counted as %q", by, id, key))
			continue
		}
		from[key] = id
		p.PerIdentity[key] = l
	}
	return p, errors.Join(errs...)
}

// Validate reports every Limit of p outside the bounds, at once.
func (p Policy) Validate() error {
	var errs []error
	if err := p.Default.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("default: %w", err))
	}
	for _, id := range slices.Sorted(maps.Keys(p.PerIdentity)) {
		if err := p.PerIdentity[id].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("identity %q: %w", id, err))
		}
	}
	return errors.Join(errs...)
}

// Enabled reports whether p sets any quota; when it does not, cmd can leave
// the middleware out.
func (p Policy) Enabled() bool {
	if !p.Default.IsZero() {
		return true
	}
	for _, l := range p.PerIdentity {
		if !l.IsZero() {
			return true
		}
	}
	return false
}

// LimitFor is the Limit p applies to the caller, in the order PerIdentity
// documents; the zero Limit means no quota.
func (p Policy) LimitFor(id *bridge.Identity) Limit {
	if len(p.PerIdentity) > 0 {
		if id != nil && id.ID != "" {
			if l, ok := p.PerIdentity[id.ID]; ok {
				return l
			}
		}
		if id != nil && id.Subject != "" {
			if l, ok := p.PerIdentity[id.Subject]; ok && !namesCaller(id.Subject) {
				return l
			}
		}
		if l, ok := p.PerIdentity[BucketKey(id)]; ok {
			return l
		}
	}
	return p.Default
}

// namesCaller reports whether k has the form of a caller's ID or bucket key
// rather than of a JWT subject: an entry "api-key:3" or "127.0.0.1" is
// that key's or that address's, not a token's whose "sub" says the same.
func namesCaller(k string) bool {
	if strings.HasPrefix(k, "api-key:") || strings.HasPrefix(k, "jwt:") || k == bridge.Local.ID || k == Anonymous {
		return true
	}
	// An address or network has only these characters; most subjects have
	// others, and are told apart without parsing.
	for i := range len(k) {
		switch c := k[i]; {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F', c == '.', c == ':', c == '/':
		default:
			return false
		}
	}
	if _, err := netip.ParseAddr(k); err == nil {
		return true
	}
	_, err := netip.ParsePrefix(k)
	return err == nil
}

// BucketKey is what a caller's calls are counted against: Identity.Key()
// (the ID when authenticated), except that an unauthenticated caller's
// remote address counts without its port, so that opening new connections
// does not buy a fresh quota, and for IPv6 as its /64 network, so that
// cycling through a host's addresses does not either (clientaddr.Bucket);
// a caller with neither shares the "anonymous" bucket.
func BucketKey(id *bridge.Identity) string {
	k := id.Key()
	if k == "" {
		return Anonymous
	}
	if id.ID == "" {
		if b := clientaddr.Bucket(k); b != "" {
			return b
		}
	}
	return k
}
