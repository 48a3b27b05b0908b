package bridge_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestGoldenToolsList records the full tools/list output for each spec in
// testdata/specs that has a whitelist in testdata/whitelists. Refresh with
// go test ./bridge -run Golden -update and review the diff.
func TestGoldenToolsList(t *testing.T) {
	wls, err := filepath.Glob("../testdata/whitelists/*.yaml")
	if err != nil || len(wls) == 0 {
		t.Fatalf("no whitelists: %v", err)
	}
	for _, wl := range wls {
		name := strings.TrimSuffix(filepath.Base(wl), ".yaml")
		t.Run(name, func(t *testing.T) {
			specs, _ := filepath.Glob("../testdata/specs/" + name + ".*")
			if len(specs) != 1 {
				t.Fatalf("want one spec for whitelist %s, got %v", wl, specs)
			}
			res, err := specloader.Load(t.Context(), specs[0], specloader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(wl)
			if err != nil {
				t.Fatal(err)
			}
			pol, err := whitelist.Parse(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			ops, err := pol.Select(res.Doc)
			if err != nil {
				t.Fatal(err)
			}
			b, err := bridge.New(ops, bridge.Options{BaseURL: "https://upstream.example/v1", Version: "golden"})
			if err != nil {
				t.Fatal(err)
			}
			cs := connect(t, b)
			lt, err := cs.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(lt.Tools, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "golden", name+".tools.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("tools/list for %s mismatch (-want +got):\n%s", name, cmp.Diff(string(want), string(got)))
			}
		})
	}
}
