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

	// src is the URL read, with the credentials a relative $ref inherits
	// from the spec's URL; nil in a Ref made elsewhere (decoded from a
	// cache), which RefsChanged then rebuilds from Location.
	src *url.URL
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
// at loc listed in Result.ExternalRefs, and reports whether any of them
// changed. loc and opts are those given to LoadData (loc from Read or
// Refetch), so that the same policy and limits apply. A Ref that did not
// come from a load in this process and whose Location had credentials
// masked cannot be read again: it counts as changed. An error (a document
// gone, a server down: ErrFetch as for Read) says nothing about the others.
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
		u := r.src
		if u == nil {
			if u = refURL(r.Location); u == nil {
				return true, nil
			}
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

// refURL turns a Ref's Location back into the URL to read; nil when it was
// masked (RedactURL) and so no longer names what was read.
func refURL(loc string) *url.URL {
	if !strings.Contains(loc, "://") {
		if !filepath.IsAbs(loc) {
			return nil
		}
		return fileURL(loc)
	}
	if strings.Contains(loc, redacted) {
		return nil
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil
	}
	return u
}
