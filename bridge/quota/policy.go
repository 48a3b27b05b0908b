package quota

import (
	"errors"
	"fmt"
	"maps"
	"slices"

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
	// match wins, and Default applies when none does. A zero Limit here
	// exempts that caller from Default. Nil means no overrides.
	PerIdentity map[string]Limit
}

// ParsePolicy builds a Policy from its text form, as the configuration
// holds it: def for Default ("" means no default quota) and identities for
// PerIdentity, each read by [ParseLimit]. Every bad entry is reported at
// once, naming its identity.
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
		p.PerIdentity[id] = l
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
			if l, ok := p.PerIdentity[id.Subject]; ok {
				return l
			}
		}
		if l, ok := p.PerIdentity[BucketKey(id)]; ok {
			return l
		}
	}
	return p.Default
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
