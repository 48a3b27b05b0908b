package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	write("openapi.yaml", `openapi: 3.0.3
info: {title: split, version: "1"}
servers: [{url: "http://127.0.0.1:9/api"}]
paths:
  /pets:
    post:
      operationId: addPet
      requestBody:
        content:
          application/json:
            schema: {$ref: "./pet.yaml#/Pet"}
      responses: {"200": {description: ok}}
`)
	write("pet.yaml", "Pet: {type: object, properties: {name: {type: string}}}\n")
	fs := flagSet("serve")
	if err := fs.Parse([]string{"--spec", filepath.Join(dir, "openapi.yaml"), "--all-operations", "--cache-dir", filepath.Join(dir, "cache")}); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &app{cfg: cfg, log: zap.NewNop()}
	schemaOf := func(cached bool) string {
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
