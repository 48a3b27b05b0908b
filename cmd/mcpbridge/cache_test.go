package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestCacheKeyCoversReferencedFiles checks that a cached build is reused
// only while the documents the spec's $refs pull in are unchanged.
func TestCacheKeyCoversReferencedFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("openapi.yaml", petSpec(`{$ref: "./pet.yaml#/Pet"}`))
	write("pet.yaml", "Pet: {type: object, properties: {name: {type: string}}}\n")
	a := serveApp(t, "--spec", filepath.Join(dir, "openapi.yaml"), "--all-operations", "--cache-dir", filepath.Join(dir, "cache"))
	schemaOf := func(cached bool) string { t.Helper(); return firstSchema(t, a, cached) }
	first := schemaOf(false)
	if !strings.Contains(first, `"name"`) {
		t.Fatalf("schema %s lacks the referenced property", first)
	}
	if again := schemaOf(true); again != first {
		t.Errorf("cached schema differs:\n%s\n%s", again, first)
	}
	write("pet.yaml", "Pet: {type: object, properties: {nickname: {type: string}}}\n")
	if changed := schemaOf(false); !strings.Contains(changed, `"nickname"`) {
		t.Errorf("a changed referenced file did not rebuild: %s", changed)
	}
	schemaOf(true)
}

// TestCacheSkipsUnchangedSpec: a restart on a spec file of the same size
// and modification time takes its digest from the cache's index and does
// not read it (bytes changed behind the file system's back go unseen); a
// build the cache cannot serve reads it after all; the index names no path.
func TestCacheSkipsUnchangedSpec(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "openapi.yaml")
	old := time.Now().Add(-time.Hour)
	write := func(prop string) {
		t.Helper()
		doc := petSpec(`{type: object, properties: {` + prop + `: {type: string}}}`)
		if err := os.WriteFile(spec, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(spec, old, old); err != nil {
			t.Fatal(err)
		}
	}
	write("name")
	cache := filepath.Join(dir, "cache")
	a := serveApp(t, "--spec", spec, "--all-operations", "--cache-dir", cache)
	schemaOf := func(cached bool) string { t.Helper(); return firstSchema(t, a, cached) }
	if s := schemaOf(false); !strings.Contains(s, `"name"`) {
		t.Fatalf("first build: %s", s)
	}
	write("nick") // same size, same mtime
	if s := schemaOf(true); !strings.Contains(s, `"name"`) {
		t.Errorf("restart on an unchanged size and mtime read the spec: %s", s)
	}
	a.cfg.MaxDescription = 77 // another cache key: the cache has no entry
	if s := schemaOf(false); !strings.Contains(s, `"nick"`) {
		t.Errorf("a build the cache could not serve used stale bytes: %s", s)
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".spec") {
			continue
		}
		found = true
		data, err := os.ReadFile(filepath.Join(cache, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), dir) {
			t.Errorf("index entry %s names the spec's path: %s", e.Name(), data)
		}
	}
	if !found {
		t.Errorf("no index entry in %v", entries)
	}
}

// firstSchema builds a's tools with the cache and returns the first tool's
// input schema, failing unless the build was cached as wanted.
func firstSchema(t *testing.T, a *app, cached bool) string {
	t.Helper()
	bt, err := a.build(t.Context(), false, true)
	if err != nil {
		t.Fatal(err)
	}
	if bt.cached != cached {
		t.Fatalf("cached = %v; want %v", bt.cached, cached)
	}
	raw, err := json.Marshal(bt.cat.Defs()[0].InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// serveApp is the app of `mcpbridge serve args...`, configured but not run.
func serveApp(tb testing.TB, args ...string) *app {
	tb.Helper()
	fs := flagSet("serve")
	if err := fs.Parse(args); err != nil {
		tb.Fatal(err)
	}
	cfg, err := loadConfig(fs, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &app{cfg: cfg, log: zap.NewNop()}
}

// petSpec is a one-operation spec whose request body has schema.
func petSpec(schema string) string {
	return `openapi: 3.0.3
info: {title: pets, version: "1"}
servers: [{url: "http://127.0.0.1:9/api"}]
paths:
  /pets:
    post:
      operationId: addPet
      requestBody:
        content:
          application/json:
            schema: ` + schema + `
      responses: {"200": {description: ok}}
`
}

// TestCachePrunesStaleFiles: writing an entry removes the cache's own
// files left unused for cacheUnusedAge (entries of older binaries or
// specs, index entries of sources no longer served) and temporary files
// of writes killed cacheTmpAge ago; it keeps recent ones (another process
// may be writing or about to read them) and files that are not the
// cache's. A hit marks its entry used.
func TestCachePrunesStaleFiles(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "openapi.yaml")
	if err := os.WriteFile(spec, []byte(petSpec(`{type: object}`)), 0o600); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	hex := strings.Repeat("ab", 16)
	files := map[string]time.Duration{ // name → age
		"0" + hex[1:] + ".tools":           cacheUnusedAge + time.Hour,    // pruned
		"1" + hex[1:] + ".tools":           cacheUnusedAge - time.Hour,    // kept
		"2" + hex[1:] + ".spec":            cacheUnusedAge + time.Hour,    // pruned
		"3" + hex[1:] + ".tools.12345.tmp": cacheTmpAge + time.Minute,     // pruned
		"4" + hex[1:] + ".spec.678.tmp":    cacheTmpAge + time.Minute,     // pruned
		"5" + hex[1:] + ".tools.9.tmp":     cacheTmpAge - time.Minute,     // kept: a write under way
		"notes.txt":                        cacheUnusedAge + 24*time.Hour, // kept: not the cache's
		"x" + hex[1:] + ".tools":           cacheUnusedAge + time.Hour,    // kept: not a key
		"6" + hex[1:] + ".tools.backup":    cacheUnusedAge + time.Hour,    // kept: not the cache's
		"7" + hex[1:] + hex[1:] + ".tools": cacheUnusedAge + time.Hour,    // kept: not a key
	}
	for name, age := range files {
		p := filepath.Join(cache, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-age)
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	a := serveApp(t, "--spec", spec, "--all-operations", "--cache-dir", cache)
	firstSchema(t, a, false)
	for name, age := range files {
		_, err := os.Stat(filepath.Join(cache, name))
		pruned := (strings.HasSuffix(name, ".tmp") && age > cacheTmpAge) ||
			(!strings.HasSuffix(name, ".tmp") && age > cacheUnusedAge && name[0] != 'x' && name[0] != '6' && name[0] != '7' && name != "notes.txt")
		if pruned != os.IsNotExist(err) {
			t.Errorf("%s (age %s): pruned = %v; want %v (stat: %v)", name, age, os.IsNotExist(err), pruned, err)
		}
	}
	// The entry just written, used long ago, is marked used by a hit.
	written, _ := filepath.Glob(filepath.Join(cache, "*.tools"))
	entry := ""
	for _, p := range written {
		if st, err := os.Stat(p); err == nil && time.Since(st.ModTime()) < time.Hour {
			entry = p
		}
	}
	index, err := a.specIndexPath()
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-cacheUnusedAge + time.Hour)
	for _, p := range []string{entry, index} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	firstSchema(t, a, true)
	for _, p := range []string{entry, index} {
		if st, err := os.Stat(p); err != nil {
			t.Error(err)
		} else if time.Since(st.ModTime()) > time.Hour {
			t.Errorf("a hit did not mark %s used: modified %s", filepath.Base(p), st.ModTime())
		}
	}
}
