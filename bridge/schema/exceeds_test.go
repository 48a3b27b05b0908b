package schema

import (
	"path/filepath"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestOutputExceedsCorpus checks OutputExceeds against the schemas it
// stands in for: over every operation of every corpus spec, in each output
// mode and at several limits, whenever it says "over the limit" the schema
// BuildOutput makes does encode to more than the limit (or there is none),
// so that skipping the build never drops a schema that would have been
// kept. It also reports how often it spares a build.
func TestOutputExceedsCorpus(t *testing.T) {
	paths, err := filepath.Glob("../../testdata/specs/*.*.*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no specs: %v", err)
	}
	limits := []int{1, 512, 4096, 16384}
	var ops, over, caught, spared int
	for _, path := range paths {
		if filepath.Base(path) == "MANIFEST.tsv" {
			continue
		}
		if (testing.Short() || raceEnabled) && largeSpec(path) {
			continue // the run without -race (CI's corpus step) covers them
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			doc := schemaTestLoadSpec(t, path) // skips a spec kin-openapi cannot load
			if doc.Paths == nil {
				return
			}
			sample := 1
			if largeSpec(path) || raceEnabled {
				sample = 4 // one operation in four: a minute otherwise
			}
			exceedsCheck(t, doc, limits, sample, &ops, &over, &caught, &spared)
		})
	}
	if spared == 0 {
		t.Error("OutputExceeds never reported a schema over a limit")
	}
	t.Logf("%d operations; %d tolerant output schemas over 4 KiB, %d of them known without a build; %d (operation, limit) builds spared over %d limits", ops, over, caught, spared, len(limits))
}

func exceedsCheck(t *testing.T, doc *openapi3.T, limits []int, sample int, nops, over, caught, spared *int) {
	{
		for _, p := range doc.Paths.Keys() {
			ops := doc.Paths.Value(p).Operations()
			for _, method := range sortedKeys(ops) {
				op := ops[method]
				if *nops++; *nops%sample != 0 {
					continue
				}
				sizes := map[string]int{}
				for _, mode := range []string{OutputTolerant, OutputStrict} {
					s, _ := BuildOutput(op, mode, nil)
					if s == nil {
						sizes[mode] = -1
						continue
					}
					raw, err := Marshal(s)
					if err != nil {
						t.Fatalf("%s %s: %v", method, p, err)
					}
					sizes[mode] = len(raw)
				}
				for _, limit := range limits {
					if !OutputExceeds(op, limit) {
						continue
					}
					*spared++
					for mode, n := range sizes {
						if n >= 0 && n <= limit {
							t.Errorf("%s %s: OutputExceeds(%d) but the %s schema is %d bytes", method, p, limit, mode, n)
						}
					}
				}
				if n := sizes[OutputTolerant]; n > 4096 {
					*over++
					if OutputExceeds(op, 4096) {
						*caught++
					}
				}
			}
		}
	}
}
