package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatsDescriptionVariants: tools --stats counts the
// --max-description-length 200 settings by trimming the descriptions of
// the tools it built rather than building them again; the figures are
// those of a build with the setting (long, multi-paragraph, non-ASCII
// descriptions; a whitelist description override).
func TestStatsDescriptionVariants(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("Élan vital describes the résumé endpoint in detail. ", 12)
	spec := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"servers":[{"url":"http://127.0.0.1:1"}],"paths":{
"/a":{"get":{"operationId":"a","summary":"Short.","description":"` + long + `\n\nSecond paragraph ` + long + `",
  "parameters":[{"name":"q","in":"query","description":"` + long + `","schema":{"type":"string"}}],
  "responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"type":"object","properties":{"x":{"type":"string"}}}}}}}}},
"/b":{"post":{"operationId":"b","description":"<b>&amp;</b> ` + long + `","responses":{"200":{"description":"ok"}}}},
"/c":{"get":{"operationId":"c","responses":{"200":{"description":"ok"}}}}}}`
	specPath := filepath.Join(dir, "spec.json")
	wl := filepath.Join(dir, "whitelist.yaml")
	if err := os.WriteFile(specPath, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wl, []byte("tools:\n  - operationId: a\n  - operationId: b\n    description: \""+long+long+"\"\n  - operationId: c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stats := func(args ...string) (total int, variants map[string]int) {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(t.Context(), append([]string{"tools", "--spec", specPath, "--whitelist", wl, "--no-cache", "--stats", "--json"}, args...), nil, &out, &errb); err != nil {
			t.Fatalf("tools --stats %q: %v\n%s", args, err, errb.String())
		}
		var st struct {
			Bytes    int `json:"toolsListBytes"`
			Variants []struct {
				Setting string `json:"setting"`
				Bytes   int    `json:"bytes"`
			} `json:"toolsListBySetting"`
		}
		if err := json.Unmarshal(out.Bytes(), &st); err != nil {
			t.Fatal(err)
		}
		variants = map[string]int{}
		for _, v := range st.Variants {
			variants[v.Setting] = v.Bytes
		}
		return st.Bytes, variants
	}
	_, variants := stats()
	for setting, args := range map[string][]string{
		"--max-description-length 200":                         {"--max-description-length", "200"},
		"--schema-detail compact --max-description-length 200": {"--schema-detail", "compact", "--max-description-length", "200"},
	} {
		if built, _ := stats(args...); variants[setting] != built {
			t.Errorf("%s: --stats counts %d bytes, a build with it lists %d", setting, variants[setting], built)
		}
	}
}
