package specloader

import (
	"context"
	"fmt"
	"net/url"
)

// Read returns the raw bytes of the spec document at source and where they
// came from (after redirects), with Load's limits, headers and timeouts,
// without parsing them. Callers that cache what they build from a spec hash
// these bytes first and call LoadData only on a miss. Errors wrap ErrFetch.
func Read(ctx context.Context, source string, opts Options) ([]byte, *url.URL, error) {
	loc, err := parseSource(source)
	if err != nil {
		return nil, nil, fmt.Errorf("loading spec %s: %w", source, err)
	}
	name := source
	if isHTTP(loc) {
		name = loc.Redacted()
	}
	s := newSession(ctx, loc, opts)
	data, loc, err := s.readRoot(loc)
	if err != nil {
		return nil, nil, fmt.Errorf("loading spec %s: %w", name, err)
	}
	return data, loc, nil
}
