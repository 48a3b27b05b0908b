package specloader_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// newSpecServer serves testdata/refs under /api/ (so /api/openapi.yaml refers
// to /api/schemas/pet.yaml and /api/bodies.yaml) and records the
// Authorization header of every request.
func newSpecServer(t *testing.T) (*httptest.Server, *authLog) {
	t.Helper()
	log := &authLog{}
	files := http.StripPrefix("/api/", http.FileServer(http.Dir("testdata/refs")))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r.URL.Path, r.Header.Get("Authorization"))
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, log
}

type authLog struct {
	mu   sync.Mutex
	seen map[string]string // path → Authorization header
}

func (l *authLog) add(path, auth string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[string]string{}
	}
	l.seen[path] = auth
}

func (l *authLog) get(path string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	auth, ok := l.seen[path]
	return auth, ok
}

func TestLoadURL(t *testing.T) {
	srv, log := newSpecServer(t)
	src := srv.URL + "/api/openapi.yaml"
	res, err := specloader.Load(t.Context(), src, specloader.Options{
		Header: http.Header{"Authorization": {"Bearer s3cret"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	checkPetRefs(t, res) // ./schemas/pet.yaml resolved against the spec URL
	if got := res.Location.String(); got != src {
		t.Errorf("Location = %s; want %s", got, src)
	}
	if got, want := res.Hash, fileHash(t, "testdata/refs/openapi.yaml"); got != want {
		t.Errorf("Hash = %s; want %s", got, want)
	}
	for _, path := range []string{"/api/openapi.yaml", "/api/schemas/pet.yaml", "/api/bodies.yaml"} {
		if auth, ok := log.get(path); !ok || auth != "Bearer s3cret" {
			t.Errorf("%s: Authorization = %q (fetched: %v); want the configured header", path, auth, ok)
		}
	}
}

// TestHeaderStaysOnOrigin: a $ref to another origin, allowed by
// Options.AllowOrigins, gets no Options.Header, and neither does a redirect
// to one. After a redirect, relative $refs and Location still refer to the
// URL as requested.
func TestHeaderStaysOnOrigin(t *testing.T) {
	other, otherLog := newSpecServer(t)
	spec := strings.ReplaceAll(string(mustRead(t, "testdata/refs/openapi.yaml")), "./schemas/pet.yaml", other.URL+"/api/schemas/pet.yaml")
	spec = strings.ReplaceAll(spec, "./bodies.yaml", other.URL+"/api/bodies.yaml")

	var mu sync.Mutex
	var mainAuth string
	main := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, "/redirect/"); ok {
			http.Redirect(w, r, other.URL+"/api/"+rest, http.StatusFound) // the whole tree moved
			return
		}
		mu.Lock()
		mainAuth = r.Header.Get("Authorization")
		mu.Unlock()
		w.Write([]byte(spec))
	}))
	t.Cleanup(main.Close)
	opts := specloader.Options{Header: http.Header{"Authorization": {"Bearer s3cret"}}, AllowOrigins: []string{other.URL}}

	res, err := specloader.Load(t.Context(), main.URL+"/openapi.yaml", opts)
	if err != nil {
		t.Fatal(err)
	}
	checkPetRefs(t, res)
	mu.Lock()
	if mainAuth != "Bearer s3cret" {
		t.Errorf("spec fetched with Authorization %q; want the configured header", mainAuth)
	}
	mu.Unlock()
	if auth, _ := otherLog.get("/api/schemas/pet.yaml"); auth != "" {
		t.Errorf("$ref to another host sent Authorization %q; want none", auth)
	}

	src := main.URL + "/redirect/openapi.yaml"
	res, err = specloader.Load(t.Context(), src, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkPetRefs(t, res) // ./schemas/pet.yaml → /redirect/schemas/pet.yaml → other
	if auth, _ := otherLog.get("/api/openapi.yaml"); auth != "" {
		t.Errorf("redirect to another host sent Authorization %q; want none", auth)
	}
	if got := res.Location.String(); got != src {
		t.Errorf("Location after redirect = %s; want the URL as requested, %s", got, src)
	}
}

func TestLoadURLErrors(t *testing.T) {
	release := make(chan struct{})
	big := bytes.Repeat([]byte("#"), 4096)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-release:
			}
		case "/big":
			w.Header().Set("Content-Length", "4096") // refused before reading
			w.Write(big)
		case "/big-chunked":
			for range 4 {
				w.Write(big[:1024])
				w.(http.Flusher).Flush() // no Content-Length: caught while reading
			}
		case "/status/401", "/status/403", "/status/410", "/status/429", "/status/500", "/status/503":
			var code int
			fmt.Sscan(strings.TrimPrefix(r.URL.Path, "/status/"), &code)
			w.WriteHeader(code)
		case "/local-ref":
			w.Write([]byte("openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200': {$ref: '/etc/passwd'}\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // cleanups run last-in first-out: before srv.Close, which waits for handlers

	tests := []struct {
		name  string
		path  string
		opts  specloader.Options
		want  []string
		fetch bool // errors.Is(err, specloader.ErrFetch)
	}{
		// A status that may go away by itself is an ErrFetch (start
		// degraded, retry); one that will not is a plain error.
		{"404", "/missing.yaml", specloader.Options{}, []string{"/missing.yaml", "unexpected status 404 Not Found"}, false},
		{"401", "/status/401", specloader.Options{}, []string{"/status/401", "unexpected status 401 Unauthorized"}, false},
		{"403", "/status/403", specloader.Options{}, []string{"unexpected status 403 Forbidden"}, false},
		{"410", "/status/410", specloader.Options{}, []string{"unexpected status 410 Gone"}, false},
		{"429", "/status/429", specloader.Options{}, []string{"unexpected status 429 Too Many Requests"}, true},
		{"500", "/status/500", specloader.Options{}, []string{"unexpected status 500 Internal Server Error"}, true},
		{"503", "/status/503", specloader.Options{}, []string{"/status/503", "unexpected status 503 Service Unavailable"}, true},
		{"slow", "/slow", specloader.Options{Timeout: 50 * time.Millisecond}, []string{"/slow", "timed out after 50ms (Options.Timeout, --spec-timeout)"}, true},
		{"oversize", "/big", specloader.Options{MaxBytes: 1000}, []string{"/big", "4096 bytes, over the 1000-byte limit (Options.MaxBytes, --spec-max-bytes)"}, false},
		{"oversize chunked", "/big-chunked", specloader.Options{MaxBytes: 1000}, []string{"/big-chunked", "exceeds the 1000-byte limit (Options.MaxBytes, --spec-max-bytes)"}, false},
		{"local file ref", "/local-ref", specloader.Options{}, []string{"/local-ref", "reference to local file /etc/passwd from a spec loaded over HTTP is not allowed"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := specloader.Load(t.Context(), srv.URL+tt.path, tt.opts)
			if err == nil {
				t.Fatal("Load succeeded; want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load error %q does not contain %q", err, w)
				}
			}
			if got := errors.Is(err, specloader.ErrFetch); got != tt.fetch {
				t.Errorf("errors.Is(%q, ErrFetch) = %v; want %v", err, got, tt.fetch)
			}
		})
	}
}

func TestUnreachableIsFetchError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens there any more
	_, err := specloader.Load(t.Context(), addr+"/openapi.yaml", specloader.Options{})
	if !errors.Is(err, specloader.ErrFetch) {
		t.Errorf("Load from a closed server: %v; want an ErrFetch", err)
	}
}

func TestURLUserinfoNotInErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("me", "hunter2")
	_, err = specloader.Load(t.Context(), u.String(), specloader.Options{})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Load error %q: want an error without the password", err)
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// countingTransport counts the requests of a client given in Options.
type countingTransport struct {
	mu sync.Mutex
	n  int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func TestOptionsClient(t *testing.T) {
	srv, _ := newSpecServer(t)
	rt := &countingTransport{}
	res, err := specloader.Load(t.Context(), srv.URL+"/api/openapi.yaml", specloader.Options{Client: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	checkPetRefs(t, res)
	if rt.n != 3 {
		t.Errorf("Options.Client made %d requests; want 3 (the spec and its two $ref targets, each once)", rt.n)
	}
}

// TestFetchErrorKinds: what retrying cannot fix is not an ErrFetch: a
// certificate that does not verify. What may heal is, for a $ref as for
// the spec: a 503.
func TestFetchErrorKinds(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	_, err := specloader.Load(t.Context(), tlsSrv.URL+"/openapi.yaml", specloader.Options{})
	if err == nil || errors.Is(err, specloader.ErrFetch) || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("Load from a server with an unknown certificate authority: %v; want a plain certificate error", err)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/openapi.yaml" {
			w.Write([]byte(refSpec("./pet.yaml")))
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	_, err = specloader.Load(t.Context(), srv.URL+"/openapi.yaml", specloader.Options{})
	if !errors.Is(err, specloader.ErrFetch) || !strings.Contains(err.Error(), "pet.yaml: unexpected status 503") {
		t.Errorf("Load with a $ref answering 503: %v; want an ErrFetch naming it", err)
	}
}
