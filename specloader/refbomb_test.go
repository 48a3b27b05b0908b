package specloader_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// TestRefAliasBomb: a YAML document pulled in by a relative $ref is held to
// the alias limit of the main document. Nested anchors there (4 aliases of
// 4 aliases, 9 levels deep: 2.9 million nodes) loaded through kin-openapi's per-schema
// decoders, which defeat go-yaml's own limit: 8 levels of 8 took over
// 10 GB and ten minutes.
func TestRefAliasBomb(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: t, version: \"1\"}\npaths: {}\ncomponents:\n  schemas:\n")
	b.WriteString("    L0: &L0 {type: object, properties: {a: {type: string}}}\n")
	const levels = 9
	for i := 1; i <= levels; i++ {
		name, prev := "L"+string(rune('0'+i)), "*L"+string(rune('0'+i-1))
		b.WriteString("    " + name + ": &" + name + " {type: object, properties: {a: " + prev + ", b: " + prev + ", c: " + prev + ", d: " + prev + "}}\n")
	}
	main := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /x:
    post:
      requestBody:
        content:
          application/json:
            schema: {$ref: "./bomb.yaml#/components/schemas/L9"}
      responses: {"200": {description: ok}}
`
	for name, data := range map[string]string{"bomb.yaml": b.String(), "openapi.yaml": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, err := specloader.Load(t.Context(), filepath.Join(dir, "openapi.yaml"), specloader.Options{})
	if err == nil || !strings.Contains(err.Error(), "aliases expand") || !strings.Contains(err.Error(), "bomb.yaml") {
		t.Fatalf("Load with an alias bomb behind a $ref: %v, want an error about its aliases", err)
	}
}
