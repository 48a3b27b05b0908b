package specloader_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// TestFileRefsStayInSpecDir: a local spec's $refs read files under its own
// directory; one reaching outside it (../, an absolute path, a file:// URL)
// is refused, and names the file, unless a file:///dir entry of
// AllowOrigins covers it. A spec from anywhere (a download) must not pull
// the operator's other files into its tools or its errors.
func TestFileRefsStayInSpecDir(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "schemas"), 0o755); err != nil {
		t.Fatal(err)
	}
	pet := []byte("Pet: {type: object, properties: {name: {type: string}}}\n")
	for _, p := range []string{filepath.Join(root, "outside.yaml"), filepath.Join(sub, "schemas", "pet.yaml")} {
		if err := os.WriteFile(p, pet, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.ToSlash(filepath.Join(root, "outside.yaml"))
	for _, tc := range []struct {
		ref   string
		allow []string
		ok    bool
	}{
		{"schemas/pet.yaml#/Pet", nil, true},
		{"./schemas/../schemas/pet.yaml#/Pet", nil, true},
		{"../outside.yaml#/Pet", nil, false},
		{outside + "#/Pet", nil, false},
		{"file://" + outside + "#/Pet", nil, false},
		{"schemas/../../outside.yaml#/Pet", nil, false},
		{"../outside.yaml#/Pet", []string{"file://" + filepath.ToSlash(root)}, true},
	} {
		spec := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "` + tc.ref + `"}
`
		path := filepath.Join(sub, "openapi.yaml")
		if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := specloader.Load(t.Context(), path, specloader.Options{AllowOrigins: tc.allow})
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s (allow %q): %v", tc.ref, tc.allow, err)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "outside the spec's directory")):
			t.Errorf("%s: %v; want it refused as outside the spec's directory", tc.ref, err)
		}
	}
}
