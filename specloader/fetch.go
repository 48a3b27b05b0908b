package specloader

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// maxRefDocuments caps the documents one load reads for $refs. With
// Options.Timeout per fetch, it bounds how long a spec can keep the loader
// busy; real split specs have tens of files.
const maxRefDocuments = 1000

// session carries what one Load or LoadData call needs while kin-openapi
// calls back into it for $refs: the context, the limits, the client, the
// fetch policy, and the documents read so far.
type session struct {
	ctx   context.Context
	opts  Options
	pol   *policy
	guard *dialGuard
	// client is made on the first fetch (most loads read files only).
	clientOnce sync.Once
	client     *http.Client
	// own holds the session's own transports, closed with it; nil when
	// the client is Options.Client.
	own *splitTransport

	// origin is the origin of the spec when it is at a URL (see originOf):
	// the only place Options.Header is sent. "" for a file or no location.
	origin string
	// remote is true when the spec came from a URL; its $refs may then only
	// point to URLs, never to local files.
	remote bool

	mu     sync.Mutex
	cache  map[string][]byte // documents read, by URL; seeded with the spec itself
	budget int64             // bytes left for documents pulled in by $refs
	refs   []Ref             // documents pulled in by $refs, in the order read
	// rootKey is the cache key of the spec itself; "" without a location.
	rootKey string
	// pruning is set while a pruned model is resolved: the spec itself
	// is then not to be read (decodePruned says why).
	pruning bool
}

func newSession(ctx context.Context, root *url.URL, opts Options) (*session, error) {
	pol, err := newPolicy(root, opts.AllowOrigins)
	if err != nil {
		return nil, err
	}
	s := &session{
		ctx:    ctx,
		opts:   opts,
		pol:    pol,
		guard:  newDialGuard(pol),
		cache:  make(map[string][]byte),
		budget: opts.maxBytes(),
	}
	if root != nil && isHTTP(root) {
		s.origin = originOf(root)
		s.remote = true
	}
	return s, nil
}

// close releases the connections of the session's own transport.
func (s *session) close() {
	if s.own != nil {
		s.own.root.CloseIdleConnections()
		s.own.refs.CloseIdleConnections()
	}
}

// setRoot records the spec's own bytes, which kin-openapi reads again when a
// $ref into the spec fails to resolve on the parsed model.
func (s *session) setRoot(loc *url.URL, data []byte) {
	if loc != nil {
		s.rootKey = cacheKey(loc)
		s.cache[s.rootKey] = data
	}
}

// httpClient returns the client for this session: one of its own, whose
// dialer checks addresses (guard.go), or Options.Client behind a check of
// the addresses its host resolves to. Both follow redirects only as the
// policy allows and drop Options.Header on a redirect to another origin.
// Neither has a Timeout: fetch bounds each request, body included, by
// Options.Timeout through its context.
func (s *session) httpClient() *http.Client {
	var c http.Client
	if s.opts.Client != nil {
		c = *s.opts.Client
		rt := c.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		c.Transport = &checkedTransport{next: rt, g: s.guard}
	} else {
		s.own = &splitTransport{root: newTransport(s.guard, s.opts.TLS), refs: newTransport(s.guard, s.opts.TLS)}
		c.Transport = s.own
	}
	next := c.CheckRedirect
	header := s.opts.Header
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if err := s.pol.redirectAllowed(first, req.URL); err != nil {
			return err
		}
		if originOf(req.URL) != originOf(first) && !upgrade(first, req.URL) {
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
			return nil, fmt.Errorf("URL %s has no host", displayURL(u))
		}
		return u, nil
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("file URL %s names a host; only local files can be read", displayURL(u))
		}
		if u.Path == "" {
			return nil, fmt.Errorf("file URL %s has no path", displayURL(u))
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
		return fmt.Errorf("location %s is neither an http(s) URL nor a file:// URL with an absolute path", displayURL(u))
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

// displayURL is how a location appears in errors and Result fields: a file
// as its path, a URL as RedactURL shows it.
func displayURL(u *url.URL) string {
	if isFile(u) {
		return filepath.FromSlash(u.Path)
	}
	return RedactURL(u.String())
}

func cacheKey(u *url.URL) string {
	c := *u
	c.Fragment = ""
	return c.String()
}

// sizeError is a document over Options.MaxBytes: never an ErrFetch.
type sizeError struct{ msg string }

func (e *sizeError) Error() string { return e.msg }

func tooLarge(n, max int64) error {
	if n < 0 {
		return &sizeError{fmt.Sprintf("document exceeds the %d-byte limit (Options.MaxBytes, --spec-max-bytes)", max)}
	}
	return &sizeError{fmt.Sprintf("document is %d bytes, over the %d-byte limit (Options.MaxBytes, --spec-max-bytes)", n, max)}
}

// readFile reads a local file within max bytes, and returns what it knew
// of the file when it opened it. Every failure is a plain error: a missing
// or unreadable file is a mistake to fix, not an outage to wait out.
func readFile(ctx context.Context, u *url.URL, max int64) ([]byte, fs.FileInfo, error) {
	if ctx.Err() != nil {
		return nil, nil, context.Cause(ctx)
	}
	// Opened without blocking: open(2) of a FIFO waits for a writer, and
	// a spec path replaced by one hung the reload that read it, then the
	// exit that waited for the reload. A FIFO, device or socket is read
	// through Go's poller, bounded by ctx (its deadline, or 30 s) and
	// abandoned when ctx ends; a FIFO without a writer reads as empty.
	f, err := os.OpenFile(filepath.FromSlash(u.Path), os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, nil, err // *fs.PathError, which names the file
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		deadline, ok := ctx.Deadline()
		if !ok {
			deadline = time.Now().Add(30 * time.Second)
		}
		_ = f.SetReadDeadline(deadline) // fails for what the poller cannot watch
		defer context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })()
	}
	var data []byte
	if fi.Mode().IsRegular() && fi.Size() > 0 && fi.Size() <= max {
		data, err = readSized(f, max, fi.Size())
	} else {
		data, err = readLimited(f, max)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading file %s: %w", filepath.FromSlash(u.Path), err)
	}
	return data, fi, nil
}

// ReadLocalFile reads the local file path within max bytes, as the spec
// is read: without blocking on a FIFO, bounded by ctx. For the whitelist
// and other files read beside the spec.
func ReadLocalFile(ctx context.Context, path string, max int64) ([]byte, error) {
	data, _, err := readFile(ctx, &url.URL{Path: filepath.ToSlash(path)}, max)
	return data, err
}

// readLimited reads r to the end, or fails once it passes max bytes with a
// sizeError.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
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
		return nil, err
	}
	if int64(buf.Len()) > max {
		return nil, tooLarge(-1, max)
	}
	return buf.Bytes(), nil
}

// fetched is a document read over HTTP.
type fetched struct {
	data               []byte
	etag, lastModified string
	// notModified is a 304 answer to a conditional request; data is nil.
	notModified bool
}

// fetch GETs u within Options.Timeout and MaxBytes. root marks the fetch of
// the spec itself, whose host the operator named (see checkAddr). cond,
// when it has an ETag or a Last-Modified, makes the request conditional.
// Options.Header goes to the spec's own origin only.
func (s *session) fetch(u *url.URL, root bool, cond *Validator) (*fetched, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.timeout())
	defer cancel()
	if root {
		ctx = context.WithValue(ctx, rootFetchKey{}, true)
	}
	name := displayURL(u)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("building the request for %s: %w", name, err)
	}
	if s.origin != "" && originOf(u) == s.origin {
		for k, v := range s.opts.Header {
			req.Header[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
		}
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.8")
	}
	conditional := cond != nil && (cond.ETag != "" || cond.LastModified != "")
	if conditional {
		if cond.ETag != "" {
			req.Header.Set("If-None-Match", cond.ETag)
		}
		if cond.LastModified != "" {
			req.Header.Set("If-Modified-Since", cond.LastModified)
		}
	}

	s.clientOnce.Do(func() { s.client = s.httpClient() })
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, s.requestError(ctx, name, err)
	}
	defer resp.Body.Close()
	f := &fetched{etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified")}
	switch code := resp.StatusCode; {
	case code >= 200 && code <= 299:
	case code == http.StatusNotModified && conditional:
		f.notModified = true
		return f, nil
	case transientStatus(code):
		return nil, &fetchError{fmt.Errorf("fetching %s: unexpected status %s", name, resp.Status)}
	default:
		return nil, fmt.Errorf("fetching %s: unexpected status %s", name, resp.Status)
	}
	max := s.opts.maxBytes()
	if resp.ContentLength > max {
		return nil, fmt.Errorf("fetching %s: %w", name, tooLarge(resp.ContentLength, max))
	}
	f.data, err = readLimited(resp.Body, max)
	if err != nil {
		var se *sizeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("reading %s: %w", name, err)
		case s.ctx.Err() != nil:
			return nil, fmt.Errorf("reading %s: %w", name, err)
		case ctx.Err() != nil:
			return nil, &fetchError{fmt.Errorf("reading %s: timed out after %v (Options.Timeout, --spec-timeout): %w", name, s.opts.timeout(), err)}
		default:
			return nil, &fetchError{fmt.Errorf("reading %s: %w", name, err)}
		}
	}
	return f, nil
}

// transientStatus is a status that may go away by itself.
func transientStatus(code int) bool {
	return code >= 500 || code == http.StatusRequestTimeout || code == http.StatusTooEarly || code == http.StatusTooManyRequests
}

// requestError classifies an error of Client.Do (see ErrFetch). The
// *url.Error net/http wraps it in is dropped: it quotes the URL with its
// query, and name says which URL it was.
func (s *session) requestError(ctx context.Context, name string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var pe *policyError
	switch {
	case errors.As(err, &pe), s.ctx.Err() != nil, certError(err):
		// Refused, canceled by the caller, or a certificate that will
		// not verify any better later.
		return fmt.Errorf("fetching %s: %w", name, err)
	case ctx.Err() != nil:
		return &fetchError{fmt.Errorf("fetching %s: timed out after %v (Options.Timeout, --spec-timeout): %w", name, s.opts.timeout(), err)}
	default:
		return &fetchError{fmt.Errorf("fetching %s: %w", name, err)}
	}
}

func certError(err error) bool {
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
	)
	return errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &hostname) || errors.As(err, &invalid)
}

// kinLoader returns a kin-openapi loader that reads external $refs through
// readRef, under this session's limits and policy. With a ReadFromURIFunc
// set, kin-openapi leaves every decision to it (IsExternalRefsAllowed is
// not checked then): readRef is the one gate for every document a $ref
// reaches.
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
// A spec from a URL may refer to URLs on its own origin and on those of
// Options.AllowOrigins, never to local files; a spec from a file or memory to
// files (by absolute path, or relative to its own file) under its own
// directory or a file:///dir of Options.AllowOrigins, and to URLs on the
// origins of Options.AllowOrigins. Headers go to the spec's own origin only.
// Documents are read once, count against a shared MaxBytes budget, and are
// recorded for Result.ExternalRefs.
func (s *session) readRef(_ *openapi3.Loader, u *url.URL) ([]byte, error) {
	key := cacheKey(u)
	s.mu.Lock()
	data, ok := s.cache[key]
	refused := s.pruning && key == s.rootKey
	full := len(s.refs) >= maxRefDocuments
	s.mu.Unlock()
	if refused {
		return nil, errPrunedMiss
	}
	if ok {
		return data, nil
	}
	if full {
		return nil, fmt.Errorf("reading %s: the spec's $refs reach more than %d documents", displayURL(u), maxRefDocuments)
	}

	var err error
	switch {
	case isHTTP(u):
		if err = s.pol.refAllowed(u); err == nil {
			var f *fetched
			if f, err = s.fetch(u, false, nil); err == nil {
				data = f.data
			}
		}
	case isFile(u):
		switch {
		case s.remote:
			err = fmt.Errorf("reference to local file %s from a spec loaded over HTTP is not allowed", u.Path)
		case !filepath.IsAbs(filepath.FromSlash(u.Path)):
			err = fmt.Errorf("relative reference %s cannot be resolved: the spec has no location", u.Path)
		default:
			if err = s.pol.fileAllowed(filepath.FromSlash(u.Path)); err == nil {
				data, _, err = readFile(s.ctx, u, s.opts.maxBytes())
			}
		}
	default:
		err = fmt.Errorf("unsupported reference %s: only http(s) URLs and files can be read", displayURL(u))
	}
	if err != nil {
		return nil, fmt.Errorf("reading referenced document: %w", err)
	}
	// kin-openapi decodes a referenced document's schemas as it does the
	// main document's, each with a decoder of its own: the same alias limit.
	if err := checkYAMLAliases(data); err != nil {
		return nil, fmt.Errorf("reading %s: %w", displayURL(u), err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.budget -= int64(len(data)); s.budget < 0 {
		return nil, fmt.Errorf("reading %s: documents pulled in by $refs exceed the %d-byte limit (Options.MaxBytes, --spec-max-bytes)", displayURL(u), s.opts.maxBytes())
	}
	s.cache[key] = data
	src := *u
	src.Fragment, src.RawFragment = "", ""
	s.refs = append(s.refs, Ref{Location: displayURL(&src), SHA256: sha256.Sum256(data)})
	return data, nil
}
