package whitelist_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

// fuzzPolicySeeds are whitelists of every shape: every key, anchors and
// aliases, resources, access lists, and broken ones.
var fuzzPolicySeeds = []string{
	"tools:\n  - operationId: listPets\n",
	"version: 1\ntools:\n  - {method: get, path: /pets/{petId}, name: get_pet, timeout: 1m30s, nestedStyle: dots, allowSlashes: [petId], pinned: true, maxItems: 5}\n",
	"tools:\n  - tag: pets\n    annotations: &q {readOnlyHint: true, openWorldHint: false}\n  - {operationId: createPets, annotations: *q, fields: [a.b, c], redact: {fields: [x]}}\n",
	"tools:\n  - operationId: showPetById\n    resource: {uri: \"api://pets/{petId}\", name: pet, mimeType: application/json, description: d}\n",
	"tools:\n  - operationId: listPets\n    allow: {keys: [\"api-key:0\"], subjects: [\"jwt:iss|sub\"], scopes: [read]}\n",
	"a: &a [x, y]\ntools: [{operationId: o, fields: *a}, *a, {operationId: *a}]\n",
	"tools:\n- operationId: x\n  fields: [a, a, '', null]\n  oprationId: y\n- listPets\n- [1]\n",
	"tools: []\n---\ntools: [1]\n", "- tools\n", "version: 2\n", "\t:", "&a [*a]", "tools:\n  - method: PATCH\n    path: \"/pets/{id}/{id}\"\n    resource: {uri: \"api://{a}{b}\"}\n",
}

// FuzzParse: Parse never panics on any input; what it accepts, Select
// takes against a real spec without panicking, and every resource URI it
// accepted parses again and matches nothing it should not.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzPolicySeeds {
		f.Add([]byte(s))
	}
	for _, name := range []string{"testdata/full.yaml", "testdata/broken.yaml", "../testdata/whitelists/petstore.3.0.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join("..", "testdata", "specs", "petstore.3.0.yaml"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		pol, err := whitelist.Parse(strings.NewReader(string(data)))
		if err != nil {
			for _, m := range messages(err) {
				if m == "" {
					t.Fatalf("Parse(%q): an empty problem in %q", data, err)
				}
			}
			return
		}
		if pol == nil {
			t.Fatalf("Parse(%q) returned neither a policy nor an error", data)
		}
		ops, err := pol.Select(doc)
		if err == nil && len(ops) > len(doc.Paths.Map())*8 {
			t.Fatalf("Select selected %d operations from a spec with %d paths", len(ops), len(doc.Paths.Map()))
		}
		for _, e := range pol.Entries {
			pol.Wants(e.Method, e.Path, e.OperationID, []string{e.Tag})
			if e.Resource == nil || e.Resource.URI == "" {
				continue
			}
			tpl, err := whitelist.ParseURITemplate(e.Resource.URI)
			if err != nil {
				t.Fatalf("accepted resource uri %q does not parse again: %v", e.Resource.URI, err)
			}
			if vals, ok := tpl.Match(e.Resource.URI); ok && tpl.Template() && len(vals) != len(tpl.Vars()) {
				t.Fatalf("%q matched itself with %d values for %d variables", e.Resource.URI, len(vals), len(tpl.Vars()))
			}
		}
	})
}

// TestParseLongListsLinear: a long fields list and a resource URI with many
// variables parse in time linear in their size. Both were quadratic (each
// item was checked against every earlier one): the 1 MiB list took 44 s,
// the 4 MiB one Parse admits minutes.
func TestParseLongListsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString("tools:\n  - operationId: listPets\n    fields:\n")
	for i := 0; i < 150_000; i++ {
		fmt.Fprintf(&b, "      - f%d\n", i)
	}
	b.WriteString("  - operationId: showPetById\n    resource:\n      uri: \"api://p")
	for i := 0; i < 60_000; i++ {
		fmt.Fprintf(&b, "/{v%d}", i)
	}
	b.WriteString("\"\n")
	start := time.Now()
	pol, err := whitelist.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	budget := 10 * time.Second // quadratic, it was minutes
	if raceEnabled {
		budget = 60 * time.Second // -race on a loaded machine took 16 s
	}
	if d := time.Since(start); d > budget {
		t.Errorf("Parse of %d bytes took %v", b.Len(), d)
	}
	if n := len(pol.Entries[0].Fields); n != 150_000 {
		t.Errorf("%d fields, want 150000", n)
	}
}
