package whitelist_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

// loadSpec loads ../testdata/specs/<name> with kin-openapi, converting
// Swagger 2.0 documents (names containing ".2.0.") to OpenAPI 3.
func loadSpec(t testing.TB, name string) *openapi3.T {
	t.Helper()
	doc, err := readSpec(name)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func readSpec(name string) (*openapi3.T, error) {
	path := filepath.Join("..", "testdata", "specs", name)
	if !strings.Contains(name, ".2.0.") {
		doc, err := openapi3.NewLoader().LoadFromFile(path)
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", name, err)
		}
		return doc, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc2 openapi2.T
	if err := openapi2.UnmarshalFromData(data, &doc2); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", name, err)
	}
	doc, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, fmt.Errorf("converting %s: %w", name, err)
	}
	return doc, nil
}

// TestShippedWhitelists parses and applies every whitelist the repository
// ships: the root example and testdata/whitelists/<spec stem>.yaml.
func TestShippedWhitelists(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "whitelists", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{filepath.Join("..", "whitelist.yaml"): "petstore.3.0.yaml"}
	for _, f := range files {
		stem := strings.TrimSuffix(filepath.Base(f), ".yaml")
		specs, err := filepath.Glob(filepath.Join("..", "testdata", "specs", stem+".*"))
		if err != nil || len(specs) != 1 {
			t.Fatalf("%s: want exactly one spec named %s.*, found %v", f, stem, specs)
		}
		cases[f] = filepath.Base(specs[0])
	}
	if len(cases) < 4 {
		t.Fatalf("found %d whitelists, want at least 4", len(cases))
	}
	for file, spec := range cases {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p, err := whitelist.Parse(f)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			ops, err := p.Select(loadSpec(t, spec))
			if err != nil {
				t.Fatalf("Select against %s: %v", spec, err)
			}
			if len(ops) < len(p.Entries) {
				t.Errorf("%d operations for %d entries", len(ops), len(p.Entries))
			}
		})
	}
}

// TestAllSpecs runs All().Select over every small spec of the corpus: it
// must not fail, and its output must be sorted.
func TestAllSpecs(t *testing.T) {
	specs, err := filepath.Glob(filepath.Join("..", "testdata", "specs", "*.*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range specs {
		name := filepath.Base(path)
		if fi, err := os.Stat(path); err != nil || fi.Size() > 1<<20 || strings.HasSuffix(name, ".tsv") {
			continue // the big ones take seconds to load and test nothing new here
		}
		t.Run(name, func(t *testing.T) {
			doc, err := readSpec(name)
			if err != nil {
				// Loading is specloader's job; a spec kin-openapi cannot read
				// as is says nothing about selection.
				t.Skipf("kin-openapi cannot load it as is: %v", err)
			}
			ops, err := whitelist.All().Select(doc)
			if err != nil {
				t.Fatal(err)
			}
			rank := func(m string) int {
				return slices.Index([]string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"}, m)
			}
			for i := 1; i < len(ops); i++ {
				a, b := ops[i-1], ops[i]
				if a.Path > b.Path || a.Path == b.Path && rank(a.Method) >= rank(b.Method) {
					t.Errorf("out of order: %s %s before %s %s", a.Method, a.Path, b.Method, b.Path)
				}
			}
		})
	}
}
