package specloader_test

import (
	"bytes"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// TestRestoreValidatorFile: a validator stored by one process lets the
// next skip reading an unchanged file (changed bytes behind an unchanged
// size and mtime go unseen, which proves no read happened), and is worth
// nothing for another source, a changed file or a racy read.
func TestRestoreValidatorFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "openapi.yaml")
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	writeFile(t, path, "openapi: 3.0.3 # one\n", old)
	_, _, v, _, err := specloader.Refetch(t.Context(), path, specloader.Options{}, specloader.Validator{})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := v.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored, []byte(dir)) {
		t.Errorf("stored validator names the source: %s", stored)
	}

	restored := specloader.RestoreValidator(path, stored)
	if !restored.Known() || restored.SHA256 != v.SHA256 || restored.Size != v.Size || !restored.ModTime.Equal(v.ModTime) {
		t.Fatalf("restored %+v; want the stored one %+v", restored, v)
	}
	writeFile(t, path, "openapi: 3.0.3 # two\n", old)
	data, _, v2, notModified, err := specloader.Refetch(t.Context(), path, specloader.Options{}, restored)
	if err != nil || !notModified || data != nil || v2.SHA256 != v.SHA256 {
		t.Errorf("Refetch with the restored validator = %q, notModified %v, %v; want nil, true, the stored digest", data, notModified, err)
	}

	// A new mtime: read.
	writeFile(t, path, "openapi: 3.0.3 # two\n", old.Add(time.Minute))
	data, _, _, notModified, err = specloader.Refetch(t.Context(), path, specloader.Options{}, restored)
	if err != nil || notModified || string(data) != "openapi: 3.0.3 # two\n" {
		t.Errorf("Refetch after a change = %q, notModified %v, %v; want the new bytes", data, notModified, err)
	}

	// Another source, garbage: nothing known.
	if r := specloader.RestoreValidator(filepath.Join(dir, "other.yaml"), stored); r.Known() {
		t.Errorf("validator of %s restored for another file: %+v", path, r)
	}
	for _, junk := range []string{"", "{", `{"source_sha256":"x"}`, "null"} {
		if r := specloader.RestoreValidator(path, []byte(junk)); r.Known() {
			t.Errorf("RestoreValidator(%q) = %+v; want the zero Validator", junk, r)
		}
	}

	// A racy read (the file was modified within racyWindow of being
	// read): the restored validator does not spare the read.
	now := time.Now().Truncate(time.Second)
	writeFile(t, path, "openapi: 3.0.3 # one\n", now)
	_, _, v, _, err = specloader.Refetch(t.Context(), path, specloader.Options{}, specloader.Validator{})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ = v.MarshalBinary()
	writeFile(t, path, "openapi: 3.0.3 # six\n", now)
	data, _, _, notModified, err = specloader.Refetch(t.Context(), path, specloader.Options{}, specloader.RestoreValidator(path, stored))
	if err != nil || notModified || string(data) != "openapi: 3.0.3 # six\n" {
		t.Errorf("Refetch after a racy read = %q, notModified %v, %v; want the new bytes", data, notModified, err)
	}
}

// TestRestoreValidatorURL: a restored ETag is sent, and a 304 spares the
// download; a URL without validators restores to nothing.
func TestRestoreValidatorURL(t *testing.T) {
	vs := &versionedServer{}
	vs.set("openapi: 3.0.3 # v1\n", `"v1"`)
	srv := httptest.NewServer(vs)
	t.Cleanup(srv.Close)
	src := srv.URL + "/openapi.yaml?token=s3cret"
	_, _, v, _, err := specloader.Refetch(t.Context(), src, specloader.Options{}, specloader.Validator{})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := v.MarshalBinary()
	if bytes.Contains(stored, []byte("s3cret")) {
		t.Errorf("stored validator carries the URL's credentials: %s", stored)
	}
	data, _, _, notModified, err := specloader.Refetch(t.Context(), src, specloader.Options{}, specloader.RestoreValidator(src, stored))
	if full, not, inm := vs.counts(); err != nil || !notModified || data != nil || full != 1 || not != 1 || inm != `"v1"` {
		t.Errorf("Refetch with the restored ETag = %q, notModified %v, %v; %d full answers, %d 304s, If-None-Match %q; want nil, true, 1, 1, \"v1\"", data, notModified, err, full, not, inm)
	}

	vs.set("openapi: 3.0.3 # v1\n", "")
	_, _, v, _, err = specloader.Refetch(t.Context(), src, specloader.Options{}, specloader.Validator{})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ = v.MarshalBinary()
	if r := specloader.RestoreValidator(src, stored); r.Known() {
		t.Errorf("a URL without ETag or Last-Modified restored %+v; want nothing", r)
	}
}
