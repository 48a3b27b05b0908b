package specloader_test

import (
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// copyRefs copies testdata/refs into a new directory.
func copyRefs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/refs")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestExternalRefs(t *testing.T) {
	dir := copyRefs(t)
	res, err := specloader.Load(t.Context(), filepath.Join(dir, "openapi.yaml"), specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []specloader.Ref{
		{Location: filepath.Join(dir, "bodies.yaml"), SHA256: sha256.Sum256(mustRead(t, "testdata/refs/bodies.yaml"))},
		{Location: filepath.Join(dir, "schemas", "pet.yaml"), SHA256: sha256.Sum256(mustRead(t, "testdata/refs/schemas/pet.yaml"))},
	}
	if diff := cmp.Diff(want, res.ExternalRefs); diff != "" {
		t.Errorf("ExternalRefs (-want +got):\n%s", diff)
	}

	srv, _ := newSpecServer(t)
	res, err = specloader.Load(t.Context(), srv.URL+"/api/openapi.yaml", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want[0].Location, want[1].Location = srv.URL+"/api/bodies.yaml", srv.URL+"/api/schemas/pet.yaml"
	if diff := cmp.Diff(want, res.ExternalRefs); diff != "" {
		t.Errorf("ExternalRefs of a URL spec (-want +got):\n%s", diff)
	}

	res, err = specloader.Load(t.Context(), "testdata/invalid-doc.yaml", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExternalRefs != nil {
		t.Errorf("ExternalRefs of a spec in one document = %v; want nil", res.ExternalRefs)
	}
}

func TestRefsChanged(t *testing.T) {
	dir := copyRefs(t)
	data, loc, err := specloader.Read(t.Context(), filepath.Join(dir, "openapi.yaml"), specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := specloader.LoadData(t.Context(), data, loc, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := specloader.RefsChanged(t.Context(), loc, res.ExternalRefs, specloader.Options{}); err != nil || changed {
		t.Errorf("RefsChanged, nothing changed: %v, %v; want false", changed, err)
	}

	if err := os.WriteFile(filepath.Join(dir, "schemas", "pet.yaml"), []byte("type: object\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := specloader.RefsChanged(t.Context(), loc, res.ExternalRefs, specloader.Options{}); err != nil || !changed {
		t.Errorf("RefsChanged, pet.yaml changed: %v, %v; want true", changed, err)
	}

	if err := os.Remove(filepath.Join(dir, "bodies.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := specloader.RefsChanged(t.Context(), loc, res.ExternalRefs[:1], specloader.Options{}); err == nil {
		t.Error("RefsChanged with bodies.yaml gone: no error")
	}
}

// TestRefsChangedURL: the documents are read again under the same policy,
// with the credentials of the spec's URL that a relative $ref inherits; a
// masked Location that is not the spec's URL with another path cannot be
// read again, and counts as changed.
func TestRefsChangedURL(t *testing.T) {
	var pet atomic.Value
	pet.Store(petSchema)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("key") != "k-123" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/openapi.yaml":
			w.Write([]byte(refSpec("./pet.yaml")))
		case "/pet.yaml":
			w.Write([]byte(pet.Load().(string)))
		}
	}))
	t.Cleanup(srv.Close)
	data, loc, err := specloader.Read(t.Context(), srv.URL+"/openapi.yaml?key=k-123", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := specloader.LoadData(t.Context(), data, loc, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ExternalRefs) != 1 || res.ExternalRefs[0].Location != srv.URL+"/pet.yaml?key=REDACTED" {
		t.Fatalf("ExternalRefs = %v; want pet.yaml, its key masked", res.ExternalRefs)
	}
	if changed, err := specloader.RefsChanged(t.Context(), loc, res.ExternalRefs, specloader.Options{}); err != nil || changed {
		t.Errorf("RefsChanged, nothing changed: %v, %v; want false", changed, err)
	}
	masked := []specloader.Ref{{Location: srv.URL + "/pet.yaml?other=REDACTED", SHA256: res.ExternalRefs[0].SHA256}}
	if changed, err := specloader.RefsChanged(t.Context(), loc, masked, specloader.Options{}); err != nil || !changed {
		t.Errorf("RefsChanged, a masked Location not derived from the spec's URL: %v, %v; want true", changed, err)
	}
	pet.Store("type: string\n")
	if changed, err := specloader.RefsChanged(t.Context(), loc, res.ExternalRefs, specloader.Options{}); err != nil || !changed {
		t.Errorf("RefsChanged, pet.yaml changed: %v, %v; want true", changed, err)
	}
}
