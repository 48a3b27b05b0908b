package specloader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// session carries what one Load or LoadData call needs while kin-openapi
// calls back into it for $refs: the context, the limits, the client, and the
// documents read so far.
type session struct {
	ctx    context.Context
	opts   Options
	client *http.Client

	// origin is scheme://host of the spec when it was fetched from a URL:
	// the only place Options.Header is sent. "" for a file or no location.
	origin string
	// remote is true when the spec came from a URL; its $refs may then only
	// point to URLs, never to local files.
	remote bool

	mu     sync.Mutex
	cache  map[string][]byte // documents read, by URL; seeded with the spec itself
	budget int64             // bytes left for documents pulled in by $refs
	// rootKey is the cache key of the spec itself; "" without a location.
	rootKey string
	// pruning is set while a pruned model is resolved: the spec itself
	// is then not to be read (decodePruned says why).
	pruning bool
}

func newSession(ctx context.Context, root *url.URL, opts Options) *session {
	s := &session{
		ctx:    ctx,
		opts:   opts,
		cache:  make(map[string][]byte),
		budget: opts.maxBytes(),
	}
	if root != nil && isHTTP(root) {
		s.origin = originOf(root)
		s.remote = true
	}
	s.client = s.httpClient()
	return s
}

// setRoot records the spec's own bytes, which kin-openapi reads again when a
// $ref into the spec fails to resolve on the parsed model.
func (s *session) setRoot(loc *url.URL, data []byte) {
	if loc != nil {
		s.rootKey = cacheKey(loc)
		s.cache[s.rootKey] = data
	}
}

// httpClient returns the client for this session: Options.Client, or one of
// its own, in both cases made to drop Options.Header on a redirect to
// another host.
func (s *session) httpClient() *http.Client {
	var c http.Client
	if s.opts.Client != nil {
		c = *s.opts.Client
	} else {
		c.Timeout = s.opts.timeout()
	}
	if len(s.opts.Header) == 0 {
		return &c
	}
	next := c.CheckRedirect
	header := s.opts.Header
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if originOf(req.URL) != originOf(via[0].URL) {
			for k := range header {
				req.Header.Del(k)
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// parseSource turns a Load source into a URL: http(s) as given, a file path
// or file:// URL as file:///absolute/path.
func parseSource(source string) (*url.URL, error) {
	if source == "" {
		return nil, errors.New("no source given")
	}
	if !strings.Contains(source, "://") {
		abs, err := filepath.Abs(source)
		if err != nil {
			return nil, fmt.Errorf("resolving path: %w", err)
		}
		return fileURL(abs), nil
	}
	u, err := url.Parse(source)
	if err != nil {
		return nil, fmt.Errorf("parsing URL: %w", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return nil, fmt.Errorf("URL %s has no host", u.Redacted())
		}
		return u, nil
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("file URL %s names a host; only local files can be read", source)
		}
		if u.Path == "" {
			return nil, fmt.Errorf("file URL %s has no path", source)
		}
		return fileURL(filepath.Clean(filepath.FromSlash(u.Path))), nil
	default:
		return nil, fmt.Errorf("unsupported URL scheme %q (want a file path, file://, http:// or https://)", u.Scheme)
	}
}

// checkLocation vets a LoadData location, which kin-openapi joins $refs to.
func checkLocation(u *url.URL) error {
	switch {
	case isHTTP(u) && u.Host != "":
		return nil
	case isFile(u) && filepath.IsAbs(filepath.FromSlash(u.Path)):
		return nil
	default:
		return fmt.Errorf("location %s is neither an http(s) URL nor a file:// URL with an absolute path", u.Redacted())
	}
}

func fileURL(abs string) *url.URL {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows: C:/x → /C:/x
	}
	return &url.URL{Scheme: "file", Path: p}
}

func isHTTP(u *url.URL) bool {
	s := strings.ToLower(u.Scheme)
	return s == "http" || s == "https"
}

func isFile(u *url.URL) bool {
	return (u.Scheme == "" || strings.EqualFold(u.Scheme, "file")) && u.Host == "" && u.Path != ""
}

func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// displayURL is how a location appears in errors: without userinfo, and a
// file as its path.
func displayURL(u *url.URL) string {
	if isFile(u) {
		return filepath.FromSlash(u.Path)
	}
	return u.Redacted()
}

func cacheKey(u *url.URL) string {
	c := *u
	c.Fragment = ""
	return c.String()
}

func tooLarge(n, max int64) error {
	if n < 0 {
		return fmt.Errorf("document exceeds the %d-byte limit (Options.MaxBytes)", max)
	}
	return fmt.Errorf("document is %d bytes, over the %d-byte limit (Options.MaxBytes)", n, max)
}

// readRoot reads the spec itself and returns its bytes and final location
// (the URL after redirects).
func (s *session) readRoot(loc *url.URL) ([]byte, *url.URL, error) {
	if isHTTP(loc) {
		return s.fetch(loc, true, s.opts.maxBytes())
	}
	data, err := readFile(s.ctx, loc, s.opts.maxBytes())
	return data, loc, err
}

func readFile(ctx context.Context, u *url.URL, max int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.FromSlash(u.Path))
	if err != nil {
		return nil, &fetchError{err} // *fs.PathError, which names the file
	}
	defer f.Close()
	var data []byte
	if fi, serr := f.Stat(); serr == nil && fi.Mode().IsRegular() && fi.Size() > 0 && fi.Size() <= max {
		data, err = readSized(f, max, fi.Size())
	} else {
		data, err = readLimited(f, max)
	}
	if err != nil {
		return nil, fmt.Errorf("reading file %s: %w", filepath.FromSlash(u.Path), err)
	}
	return data, nil
}

// readLimited reads r to the end, or fails once it passes max bytes. A read
// error is a fetchError; going over max is not.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, &fetchError{err}
	}
	if int64(len(data)) > max {
		return nil, tooLarge(-1, max)
	}
	return data, nil
}

// readSized is readLimited for a reader of a known size, read into one
// buffer of that size rather than one grown and copied as it fills (about
// 15 ms saved on a 13 MB spec). The size is a hint: a file that grew is
// still read to the end, within max.
func readSized(r io.Reader, max, size int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(r, max+1)); err != nil {
		return nil, &fetchError{err}
	}
	if int64(buf.Len()) > max {
		return nil, tooLarge(-1, max)
	}
	return buf.Bytes(), nil
}

// fetch GETs u within Options.Timeout and max bytes. withHeader sends
// Options.Header, which the caller allows only toward the spec's origin.
func (s *session) fetch(u *url.URL, withHeader bool, max int64) ([]byte, *url.URL, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.timeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("building request: %w", err)
	}
	if withHeader {
		for k, v := range s.opts.Header {
			req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
		}
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.8")
	}

	resp, err := s.client.Do(req)
	if err != nil {
		if s.ctx.Err() != nil {
			return nil, nil, fmt.Errorf("fetching %s: %w", u.Redacted(), err) // canceled by the caller
		}
		if ctx.Err() != nil {
			return nil, nil, &fetchError{fmt.Errorf("fetching %s: timed out after %v (Options.Timeout): %w", u.Redacted(), s.opts.timeout(), err)}
		}
		return nil, nil, &fetchError{fmt.Errorf("fetching %s: %w", u.Redacted(), err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, nil, &fetchError{fmt.Errorf("fetching %s: unexpected status %s", u.Redacted(), resp.Status)}
	}
	if resp.ContentLength > max {
		return nil, nil, fmt.Errorf("fetching %s: %w", u.Redacted(), tooLarge(resp.ContentLength, max))
	}
	data, err := readLimited(resp.Body, max)
	if err != nil {
		if ctx.Err() != nil && s.ctx.Err() == nil {
			return nil, nil, &fetchError{fmt.Errorf("reading %s: timed out after %v (Options.Timeout): %w", u.Redacted(), s.opts.timeout(), err)}
		}
		return nil, nil, fmt.Errorf("reading %s: %w", u.Redacted(), err)
	}
	final := u
	if resp.Request != nil && resp.Request.URL != nil {
		final = resp.Request.URL
	}
	return data, final, nil
}

// kinLoader returns a kin-openapi loader that reads external $refs through
// readRef, under this session's limits and policy.
func (s *session) kinLoader() *openapi3.Loader {
	l := openapi3.NewLoader()
	l.Context = s.ctx
	l.IsExternalRefsAllowed = true
	l.ReadFromURIFunc = s.readRef
	return l
}

// errPrunedMiss is what kin-openapi gets when it wants the spec's own bytes
// while resolving a pruned model.
var errPrunedMiss = errors.New("reading the spec again while resolving a pruned model")

// readRef is the openapi3.ReadFromURIFunc for documents that $refs point to.
// A spec from a URL may refer to URLs only; a spec from a file or memory to
// files (by absolute path, or relative to its own file) and URLs. Headers go
// to the spec's own origin only. Documents are read once and count against
// a shared MaxBytes budget.
func (s *session) readRef(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
	key := cacheKey(u)
	s.mu.Lock()
	data, ok := s.cache[key]
	refused := s.pruning && key == s.rootKey
	s.mu.Unlock()
	if refused {
		return nil, errPrunedMiss
	}
	if ok {
		return data, nil
	}

	var err error
	switch {
	case isHTTP(u):
		data, _, err = s.fetch(u, s.origin != "" && originOf(u) == s.origin, s.opts.maxBytes())
	case isFile(u):
		switch {
		case s.remote:
			err = fmt.Errorf("reference to local file %s from a spec loaded over HTTP is not allowed", u.Path)
		case !filepath.IsAbs(filepath.FromSlash(u.Path)):
			err = fmt.Errorf("relative reference %s cannot be resolved: the spec has no location", u.Path)
		default:
			data, err = readFile(s.ctx, u, s.opts.maxBytes())
		}
	default:
		err = fmt.Errorf("unsupported reference %s: only http(s) URLs and files can be read", u.Redacted())
	}
	if err != nil {
		return nil, fmt.Errorf("reading referenced document: %w", err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.budget -= int64(len(data)); s.budget < 0 {
		return nil, fmt.Errorf("reading %s: documents pulled in by $refs exceed the %d-byte limit (Options.MaxBytes)", displayURL(u), s.opts.maxBytes())
	}
	s.cache[key] = data
	return data, nil
}
