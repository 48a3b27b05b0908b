package specloader_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// versionedServer serves one document with an ETag, answers
// If-None-Match, and counts what it answered.
type versionedServer struct {
	mu         sync.Mutex
	body, etag string
	full, not  int    // 200 and 304 answers
	lastINM    string // the If-None-Match of the last request
}

func (s *versionedServer) set(body, etag string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body, s.etag = body, etag
}

func (s *versionedServer) counts() (full, notModified int, inm string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.full, s.not, s.lastINM
}

func (s *versionedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastINM = r.Header.Get("If-None-Match")
	if s.etag != "" {
		w.Header().Set("ETag", s.etag)
		if s.lastINM == s.etag {
			s.not++
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	s.full++
	w.Write([]byte(s.body))
}

func TestRefetchURLETag(t *testing.T) {
	vs := &versionedServer{}
	vs.set("openapi: 3.0.3 # v1\n", `"v1"`)
	srv := httptest.NewServer(vs)
	t.Cleanup(srv.Close)
	src := srv.URL + "/openapi.yaml"

	data, loc, v, notModified, err := specloader.Refetch(t.Context(), src, specloader.Options{}, specloader.Validator{})
	if err != nil || notModified || string(data) != "openapi: 3.0.3 # v1\n" || v.ETag != `"v1"` || loc.String() != src {
		t.Fatalf("first Refetch = %q, %v, ETag %s, notModified %v, %v; want the document, its URL and its ETag", data, loc, v.ETag, notModified, err)
	}
	for range 3 {
		data, _, v, notModified, err = specloader.Refetch(t.Context(), src, specloader.Options{}, v)
		if err != nil || !notModified || data != nil {
			t.Fatalf("Refetch of an unchanged document = %q, notModified %v, %v; want nil, true", data, notModified, err)
		}
	}
	if full, not, _ := vs.counts(); full != 1 || not != 3 {
		t.Errorf("server answered 200 %d times, 304 %d times; want 1 and 3", full, not)
	}

	vs.set("openapi: 3.0.3 # v2\n", `"v2"`)
	data, _, v, notModified, err = specloader.Refetch(t.Context(), src, specloader.Options{}, v)
	if err != nil || notModified || string(data) != "openapi: 3.0.3 # v2\n" || v.ETag != `"v2"` {
		t.Errorf("Refetch of a changed document = %q, ETag %s, notModified %v, %v; want v2", data, v.ETag, notModified, err)
	}

	// A validator of another source is not sent there.
	other := httptest.NewServer(vs)
	t.Cleanup(other.Close)
	if _, _, _, notModified, err := specloader.Refetch(t.Context(), other.URL+"/openapi.yaml", specloader.Options{}, v); err != nil || notModified {
		t.Errorf("Refetch of another source with this validator: notModified %v, %v; want a full read", notModified, err)
	}
	if _, _, inm := vs.counts(); inm != "" {
		t.Errorf("another source got If-None-Match %s; want none", inm)
	}
}

// TestRefetchURLLastModified: If-Modified-Since, as http.ServeContent
// answers it.
func TestRefetchURLLastModified(t *testing.T) {
	mod := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var not int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		http.ServeContent(rec, r, "openapi.yaml", mod, bytes.NewReader([]byte("openapi: 3.0.3\n")))
		if rec.Code == http.StatusNotModified {
			mu.Lock()
			not++
			mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)

	_, _, v, _, err := specloader.Refetch(t.Context(), srv.URL, specloader.Options{}, specloader.Validator{})
	if err != nil || v.LastModified == "" {
		t.Fatalf("first Refetch: Last-Modified %q, %v", v.LastModified, err)
	}
	_, _, _, notModified, err := specloader.Refetch(t.Context(), srv.URL, specloader.Options{}, v)
	mu.Lock()
	defer mu.Unlock()
	if err != nil || !notModified || not != 1 {
		t.Errorf("Refetch with Last-Modified: notModified %v, %d 304s, %v; want true, 1", notModified, not, err)
	}
}

// TestRefetchURLNoValidators: a server without ETag or Last-Modified
// sends the document again, and the same bytes mean notModified.
func TestRefetchURLNoValidators(t *testing.T) {
	vs := &versionedServer{}
	vs.set("openapi: 3.0.3\n", "")
	srv := httptest.NewServer(vs)
	t.Cleanup(srv.Close)
	_, _, v, _, err := specloader.Refetch(t.Context(), srv.URL, specloader.Options{}, specloader.Validator{})
	if err != nil {
		t.Fatal(err)
	}
	data, _, _, notModified, err := specloader.Refetch(t.Context(), srv.URL, specloader.Options{}, v)
	if err != nil || !notModified || data != nil {
		t.Errorf("Refetch of the same bytes: %q, notModified %v, %v; want nil, true", data, notModified, err)
	}
	if full, _, _ := vs.counts(); full != 2 {
		t.Errorf("server answered 200 %d times; want 2", full)
	}
}

func writeFile(t *testing.T, path, body string, mod time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
}

func TestRefetchFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "openapi.yaml")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	writeFile(t, path, "openapi: 3.0.3 # one\n", old)

	data, loc, v, notModified, err := specloader.Refetch(t.Context(), path, specloader.Options{}, specloader.Validator{})
	if err != nil || notModified || string(data) != "openapi: 3.0.3 # one\n" || loc.Scheme != "file" {
		t.Fatalf("first Refetch = %q, %v, notModified %v, %v", data, loc, notModified, err)
	}
	if v.Size != int64(len(data)) || !v.ModTime.Equal(old) {
		t.Errorf("validator: size %d, mtime %v; want %d, %v", v.Size, v.ModTime, len(data), old)
	}

	// Same size, same mtime: not read at all, so even changed bytes
	// (written behind the file system's back) go unseen.
	writeFile(t, path, "openapi: 3.0.3 # two\n", old)
	data, _, v2, notModified, err := specloader.Refetch(t.Context(), path, specloader.Options{}, v)
	if err != nil || !notModified || data != nil || v2 != v {
		t.Errorf("Refetch with size and mtime unchanged = %q, notModified %v, %v; want nil, true, the same validator", data, notModified, err)
	}

	// A new mtime: read, and the new bytes come back.
	writeFile(t, path, "openapi: 3.0.3 # two\n", old.Add(time.Minute))
	data, _, v, notModified, err = specloader.Refetch(t.Context(), path, specloader.Options{}, v)
	if err != nil || notModified || string(data) != "openapi: 3.0.3 # two\n" {
		t.Errorf("Refetch after a change = %q, notModified %v, %v; want the new bytes", data, notModified, err)
	}

	// Touched, not changed: read, same hash, notModified, and the new
	// mtime is kept so that the next check needs no read.
	touched := old.Add(2 * time.Minute)
	writeFile(t, path, "openapi: 3.0.3 # two\n", touched)
	data, _, v, notModified, err = specloader.Refetch(t.Context(), path, specloader.Options{}, v)
	if err != nil || !notModified || data != nil || !v.ModTime.Equal(touched) {
		t.Errorf("Refetch after a touch = %q, notModified %v, mtime %v, %v; want nil, true, %v", data, notModified, v.ModTime, err, touched)
	}
}

// TestRefetchFileRacy: a file read within the mtime granularity of its
// last change may change again without its mtime showing it; it is hashed.
func TestRefetchFileRacy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "openapi.yaml")
	now := time.Now().Truncate(time.Second)
	writeFile(t, path, "openapi: 3.0.3 # one\n", now)
	_, _, v, _, err := specloader.Refetch(t.Context(), path, specloader.Options{}, specloader.Validator{})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "openapi: 3.0.3 # two\n", now) // same size, same second
	data, _, _, notModified, err := specloader.Refetch(t.Context(), path, specloader.Options{}, v)
	if err != nil || notModified || string(data) != "openapi: 3.0.3 # two\n" {
		t.Errorf("Refetch of a file changed within its mtime tick = %q, notModified %v, %v; want the new bytes", data, notModified, err)
	}
}

func TestRefetchErrors(t *testing.T) {
	_, _, v, _, err := specloader.Refetch(t.Context(), filepath.Join(t.TempDir(), "gone.yaml"), specloader.Options{}, specloader.Validator{})
	if err == nil || errors.Is(err, specloader.ErrFetch) || v != (specloader.Validator{}) {
		t.Errorf("Refetch of a missing file: %v (ErrFetch: %v), validator %+v; want a plain error and no validator", err, errors.Is(err, specloader.ErrFetch), v)
	}
}
