package specloader

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// Validator identifies the version of a spec document a read returned, so
// that Refetch can tell whether the document changed since. Keep the one
// Refetch returns and pass it to the next call for the same source. The
// zero value knows nothing: the read it is given to is unconditional.
type Validator struct {
	// ETag and LastModified are the response headers of a URL, sent back
	// as If-None-Match and If-Modified-Since. Either may be empty.
	ETag, LastModified string

	// Size and ModTime are what the file system said of a file when it
	// was read. Zero for a URL.
	Size    int64
	ModTime time.Time

	// SHA256 is the hash of the document's bytes, of a file or a URL.
	SHA256 [32]byte

	// source is the location the validator belongs to (cacheKey); a
	// validator of another source is ignored. "" in the zero value.
	source string
	// readAt is when a file was read: ModTime is trusted only once its
	// tick was over when the file was read (see unchangedFile).
	readAt time.Time
}

// racyWindow is the mtime granularity assumed of file systems (FAT's is 2 s).
// A file read less than this after its last modification may have been
// modified again within the same tick, which ModTime cannot show.
const racyWindow = 2 * time.Second

// Read returns the raw bytes of the spec document at source and its
// location, with Load's limits, headers, timeouts and policy, without
// parsing them. Callers that cache what they build from a spec hash these
// bytes first and call LoadData(ctx, data, loc, opts) only on a miss.
//
// loc is the location as requested, not the one after redirects: a
// file:// URL with an absolute path, or the http(s) URL as given, with its
// credentials (userinfo, query), which relative $refs inherit. It is meant
// for LoadData only: print RedactURL(loc.String()), never loc itself.
//
// Errors wrap ErrFetch for what may heal by itself (see ErrFetch); a
// missing file, a 404 or a refused redirect is a plain error.
func Read(ctx context.Context, source string, opts Options) ([]byte, *url.URL, error) {
	data, loc, _, _, err := Refetch(ctx, source, opts, Validator{})
	return data, loc, err
}

// Refetch is Read for periodic refreshes: given the validator of the
// previous read of the same source, it reports notModified (with nil data)
// when the document is unchanged, and otherwise returns its bytes as Read
// does. v is the validator to pass next time, also when notModified; on an
// error it is the zero Validator and the caller keeps prev.
//
// For a URL it sends If-None-Match and If-Modified-Since from prev, and a
// 304 answer means notModified; a 200 answer whose bytes hash as prev's
// does too, for servers without validators. For a file, the same size and
// modification time as prev's mean notModified without reading (unless the
// previous read came within racyWindow of the modification); otherwise the
// file is read, and the same SHA-256 as prev's still means notModified.
//
// A Validator only tells about the spec document itself: the documents its
// $refs pull in are checked with RefsChanged.
func Refetch(ctx context.Context, source string, opts Options, prev Validator) (data []byte, loc *url.URL, v Validator, notModified bool, err error) {
	name := RedactURL(source)
	sc := newScrubber(nil)
	defer func() { err = sc.error(err) }()

	loc, err = parseSource(source)
	if err != nil {
		return nil, nil, Validator{}, false, fmt.Errorf("loading spec %s: %w", name, err)
	}
	sc = newScrubber(loc)
	if isHTTP(loc) {
		name = displayURL(loc)
	}
	s, err := newSession(ctx, loc, opts)
	if err != nil {
		return nil, nil, Validator{}, false, fmt.Errorf("loading spec %s: %w", name, err)
	}
	defer s.close()
	data, v, notModified, err = s.readRoot(loc, prev)
	if err != nil {
		return nil, nil, Validator{}, false, fmt.Errorf("loading spec %s: %w", name, err)
	}
	return data, loc, v, notModified, nil
}

// readRoot reads the spec itself, conditionally when prev belongs to loc.
func (s *session) readRoot(loc *url.URL, prev Validator) (data []byte, v Validator, notModified bool, err error) {
	key := cacheKey(loc)
	if prev.source != key {
		prev = Validator{}
	}
	if isHTTP(loc) {
		f, err := s.fetch(loc, true, &prev)
		if err != nil {
			return nil, Validator{}, false, err
		}
		if f.notModified {
			v = prev
			if f.etag != "" {
				v.ETag = f.etag
			}
			if f.lastModified != "" {
				v.LastModified = f.lastModified
			}
			return nil, v, true, nil
		}
		v = Validator{ETag: f.etag, LastModified: f.lastModified, SHA256: sha256.Sum256(f.data), source: key}
		if prev.source != "" && prev.SHA256 == v.SHA256 {
			return nil, v, true, nil
		}
		return f.data, v, false, nil
	}

	if prev.source != "" && unchangedFile(loc, prev) {
		return nil, prev, true, nil
	}
	readAt := time.Now()
	data, fi, err := readFile(s.ctx, loc, s.opts.maxBytes())
	if err != nil {
		return nil, Validator{}, false, err
	}
	v = Validator{Size: fi.Size(), ModTime: fi.ModTime(), SHA256: sha256.Sum256(data), source: key, readAt: readAt}
	if prev.source != "" && prev.SHA256 == v.SHA256 {
		return nil, v, true, nil
	}
	return data, v, false, nil
}

// unchangedFile reports whether the file at loc has the size and
// modification time prev saw, and prev's read came late enough after that
// modification for a later one to show in the time.
func unchangedFile(loc *url.URL, prev Validator) bool {
	fi, err := os.Stat(filepath.FromSlash(loc.Path))
	if err != nil || !fi.Mode().IsRegular() {
		return false // read it: that reports the error, or reads a pipe
	}
	return fi.Size() == prev.Size && fi.ModTime().Equal(prev.ModTime) && prev.readAt.Sub(prev.ModTime) >= racyWindow
}
