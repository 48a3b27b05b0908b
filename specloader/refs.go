package specloader

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
)

// Ref is a document that a spec's $refs pulled in, as a load read it.
type Ref struct {
	// Location is where the document was read: a file path, or a URL as
	// RedactURL shows it.
	Location string
	// SHA256 is the hash of the document's bytes.
	SHA256 [32]byte
}

// sortedRefs returns the documents the session read for $refs, by Location.
func (s *session) sortedRefs() []Ref {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.refs) == 0 {
		return nil
	}
	refs := slices.Clone(s.refs)
	slices.SortFunc(refs, func(a, b Ref) int { return cmp.Compare(a.Location, b.Location) })
	return refs
}

// RefsChanged reads again the documents of refs, which a load of the spec
// at loc listed in Result.ExternalRefs (in this process or an earlier one:
// a Ref holds no secret and can be stored), and reports whether any of them
// changed. loc and opts are those given to LoadData (loc from Read or
// Refetch), so that the same policy and limits apply, and so that a
// Location whose credentials were masked gets them back: a relative $ref
// inherits the userinfo and query of loc, and a masked Location that is not
// loc's with another path cannot be read again, and counts as changed. An
// error (a document gone, a server down: ErrFetch as for Read) says
// nothing about the others.
//
// With Refetch, it makes the whole of a split spec refreshable: the spec
// is unchanged when Refetch says notModified and RefsChanged says false.
func RefsChanged(ctx context.Context, loc *url.URL, refs []Ref, opts Options) (changed bool, err error) {
	sc := newScrubber(loc)
	defer func() { err = sc.error(err) }()
	if len(refs) == 0 {
		return false, nil
	}
	s, err := newSession(ctx, loc, opts)
	if err != nil {
		return false, fmt.Errorf("checking referenced documents: %w", err)
	}
	defer s.close()
	for _, r := range refs {
		u := refURL(r.Location, loc)
		if u == nil {
			return true, nil
		}
		data, err := s.readRef(nil, u)
		if err != nil {
			return false, fmt.Errorf("checking referenced documents: %w", err)
		}
		if sha256.Sum256(data) != r.SHA256 {
			return true, nil
		}
	}
	return false, nil
}

// refURL turns a Ref's Location back into the URL read: a file path into
// a file URL, a URL as is, and a masked URL into loc with the path of the
// Location when masking that gives the Location back. nil otherwise.
func refURL(location string, loc *url.URL) *url.URL {
	if !strings.Contains(location, "://") {
		if !filepath.IsAbs(location) {
			return nil
		}
		return fileURL(location)
	}
	u, err := url.Parse(location)
	if err != nil {
		return nil
	}
	if !strings.Contains(location, redacted) {
		return u
	}
	if loc == nil || !isHTTP(loc) {
		return nil
	}
	c := *loc
	c.Path, c.RawPath, c.Fragment, c.RawFragment = u.Path, u.RawPath, "", ""
	if displayURL(&c) != location {
		return nil
	}
	return &c
}
