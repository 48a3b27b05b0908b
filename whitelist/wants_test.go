package whitelist_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

func TestWants(t *testing.T) {
	policy := &whitelist.Policy{Entries: []whitelist.Entry{
		{Method: "GET", Path: "/pets/:id"},
		{Method: "delete", Path: "/pets/{petId}/photos/{n}.png"},
		{OperationID: "createPet"},
		{Tag: "store"},
	}}
	type op struct {
		method, path, id string
		tags             []string
	}
	tests := []struct {
		name   string
		policy *whitelist.Policy
		op     op
		want   bool
	}{
		{"nil policy", nil, op{"GET", "/pets", "listPets", nil}, false},
		{"empty policy", &whitelist.Policy{}, op{"GET", "/pets", "listPets", nil}, false},
		{"all", whitelist.All(), op{"TRACE", "/anything", "", nil}, true},
		{"path by shape", policy, op{"GET", "/pets/{petId}", "", nil}, true},
		{"path spelled as the entry", policy, op{"GET", "/pets/:id", "", nil}, true},
		{"method in any case", policy, op{"get", "/pets/{x}", "", nil}, true},
		{"other method", policy, op{"PUT", "/pets/{petId}", "", nil}, false},
		{"other shape", policy, op{"GET", "/pets/{petId}/photos", "", nil}, false},
		{"trailing slash", policy, op{"GET", "/pets/{petId}/", "", nil}, false},
		{"literal segment", policy, op{"GET", "/pets/mine", "", nil}, false},
		{"entry method lower case", policy, op{"DELETE", "/pets/{a}/photos/{b}.png", "", nil}, true},
		{"param inside a segment", policy, op{"DELETE", "/pets/{a}/photos/{b}.jpg", "", nil}, false},
		{"operationId", policy, op{"POST", "/pets", "createPet", nil}, true},
		{"operationId is case-sensitive", policy, op{"POST", "/pets", "CreatePet", nil}, false},
		{"tag", policy, op{"GET", "/store/inventory", "", []string{"x", "store"}}, true},
		{"tag is case-sensitive", policy, op{"GET", "/store/inventory", "", []string{"Store"}}, false},
		{"no selector matches", policy, op{"GET", "/users", "getUsers", []string{"user"}}, false},
		{"invalid entry matches on each selector", &whitelist.Policy{Entries: []whitelist.Entry{{Path: "/a", OperationID: "b"}}},
			op{"PATCH", "/a", "", nil}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.policy.Wants(tt.op.method, tt.op.path, tt.op.id, tt.op.tags); got != tt.want {
				t.Errorf("Wants(%s %s, %q, %q) = %v, want %v", tt.op.method, tt.op.path, tt.op.id, tt.op.tags, got, tt.want)
			}
		})
	}
}

func TestWantsDoesNotAllocate(t *testing.T) {
	policy := mustParse(t, `
tools:
  - {method: GET, path: "/repos/{owner}/{repo}/issues/{issue_number}"}
  - {method: POST, path: /repos/:owner/:repo/pulls}
  - operationId: search/code
  - tag: users
`)
	tags := []string{"issues"}
	allocs := testing.AllocsPerRun(100, func() {
		policy.Wants("POST", "/repos/{owner}/{repo}/pulls", "pulls/create", tags)
		policy.Wants("GET", "/repos/{owner}/{repo}/issues/{n}/comments", "issues/list-comments", tags)
	})
	if allocs != 0 {
		t.Errorf("Wants allocates %v times per call pair, want 0", allocs)
	}
}

// TestWantsCoversSelect holds Wants to its promise over the corpus: for the
// shipped whitelists and for generated ones (every kind of selector and
// spelling, alone and mixed, including entries that match nothing or
// overlap), every operation Select picks from the whole document is wanted,
// and Select on the document reduced to the wanted operations picks the
// same operations with the same overrides, or fails when it fails on the
// whole one.
func TestWantsCoversSelect(t *testing.T) {
	specs, err := filepath.Glob(filepath.Join("..", "testdata", "specs", "*.*"))
	if err != nil {
		t.Fatal(err)
	}
	shipped := map[string][]string{"petstore.3.0.yaml": {filepath.Join("..", "whitelist.yaml")}}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "whitelists", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		stem := strings.TrimSuffix(filepath.Base(f), ".yaml")
		matches, err := filepath.Glob(filepath.Join("..", "testdata", "specs", stem+".*"))
		if err != nil || len(matches) != 1 {
			t.Fatalf("%s: want one spec named %s.*, found %v", f, stem, matches)
		}
		name := filepath.Base(matches[0])
		shipped[name] = append(shipped[name], f)
	}

	for _, path := range specs {
		name := filepath.Base(path)
		if strings.HasSuffix(name, ".tsv") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if fi, err := os.Stat(path); err == nil && fi.Size() > 1<<20 && (testing.Short() || raceEnabled) {
				t.Skip("kin-openapi takes seconds to load a spec this large under -race or -short")
			}
			doc, err := readSpec(name)
			if err != nil {
				t.Skipf("kin-openapi cannot load it as is: %v", err)
			}
			var policies []namedPolicy
			for _, f := range shipped[name] {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				policies = append(policies, namedPolicy{filepath.Base(f), mustParse(t, string(data))})
			}
			policies = append(policies, namedPolicy{"all", whitelist.All()})
			policies = append(policies, generatedPolicies(t, name, doc)...)
			picks := 0
			for _, p := range policies {
				picks += checkWantsCoversSelect(t, doc, p)
			}
			if picks == 0 && doc.Paths.Len() > 0 {
				t.Error("no policy selected anything: the test proves nothing")
			}
		})
	}
}

type namedPolicy struct {
	name string
	p    *whitelist.Policy
}

// generatedPolicies returns single-entry policies for a sample of the
// operations of doc (each selector, each spelling of the path) and for
// every tag, then random mixes of those and of entries matching nothing.
func generatedPolicies(t *testing.T, name string, doc *openapi3.T) []namedPolicy {
	t.Helper()
	ops, err := whitelist.All().Select(doc)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(len(name)), uint64(len(ops))))
	sample := slices.Clone(ops)
	rng.Shuffle(len(sample), func(i, j int) { sample[i], sample[j] = sample[j], sample[i] })
	sample = sample[:min(len(sample), 40)]

	var entries []whitelist.Entry
	for _, op := range sample {
		entries = append(entries,
			whitelist.Entry{Method: op.Method, Path: op.Path},
			whitelist.Entry{Method: strings.ToLower(op.Method), Path: renameParams(op.Path, false)},
			whitelist.Entry{Method: op.Method, Path: renameParams(op.Path, true)},
		)
		if op.Op.OperationID != "" {
			entries = append(entries, whitelist.Entry{OperationID: op.Op.OperationID})
		}
	}
	tags := map[string]bool{}
	for _, op := range ops {
		for _, tag := range op.Op.Tags {
			if !tags[tag] {
				tags[tag] = true
				entries = append(entries, whitelist.Entry{Tag: tag})
			}
		}
	}
	misses := []whitelist.Entry{
		{OperationID: "noSuchOperation"},
		{Tag: "no-such-tag"},
		{Method: "GET", Path: "/no/such/{path}"},
	}

	var out []namedPolicy
	for _, e := range entries {
		out = append(out, namedPolicy{fmt.Sprintf("%+v", e), &whitelist.Policy{Entries: []whitelist.Entry{e}}})
	}
	for i := range 30 {
		n := 1 + rng.IntN(8)
		var mix []whitelist.Entry
		for range n {
			if len(entries) > 0 {
				mix = append(mix, entries[rng.IntN(len(entries))])
			}
		}
		if i%5 == 0 {
			mix = append(mix, misses[rng.IntN(len(misses))])
		}
		out = append(out, namedPolicy{fmt.Sprintf("mix #%d", i), &whitelist.Policy{Entries: mix}})
	}
	for _, e := range misses {
		out = append(out, namedPolicy{fmt.Sprintf("miss %+v", e), &whitelist.Policy{Entries: []whitelist.Entry{e}}})
	}
	return out
}

// renameParams renames each {param} of a path template, or writes it in the
// :name form when the whole segment is a parameter and colon is set.
func renameParams(path string, colon bool) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if colon && strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") && strings.Count(s, "{") == 1 {
			segs[i] = ":p" + fmt.Sprint(i)
			continue
		}
		var b strings.Builder
		for {
			open := strings.IndexByte(s, '{')
			n := strings.IndexByte(s[max(open, 0):], '}')
			if open < 0 || n < 0 {
				break
			}
			fmt.Fprintf(&b, "%s{renamed%d}", s[:open], i)
			s = s[open+n+1:]
		}
		b.WriteString(s)
		segs[i] = b.String()
	}
	return strings.Join(segs, "/")
}

// checkWantsCoversSelect checks policy p against doc (see
// TestWantsCoversSelect) and returns how many operations it selects.
func checkWantsCoversSelect(t *testing.T, doc *openapi3.T, np namedPolicy) int {
	t.Helper()
	p := np.p
	full, fullErr := p.Select(doc)
	for _, op := range full {
		if !p.Wants(op.Method, op.Path, op.Op.OperationID, op.Op.Tags) {
			t.Errorf("%s: Select picks %s %s (operationId %q, tags %q), Wants rejects it", np.name, op.Method, op.Path, op.Op.OperationID, op.Op.Tags)
		}
	}
	reduced := onlyWanted(doc, p.Wants)
	got, err := p.Select(reduced)
	if (fullErr == nil) != (err == nil) {
		t.Errorf("%s: Select on the whole document: %v; on the wanted operations: %v", np.name, fullErr, err)
		return 0
	}
	if diff := cmp.Diff(picked(full), picked(got)); diff != "" {
		t.Errorf("%s: Select on the wanted operations differs (-whole +wanted):\n%s", np.name, diff)
	}
	return len(full)
}

// onlyWanted returns a copy of doc whose paths hold only the operations
// keep accepts, as specloader's Options.Keep loads it.
func onlyWanted(doc *openapi3.T, keep func(method, path, operationID string, tags []string) bool) *openapi3.T {
	out := *doc
	out.Paths = openapi3.NewPaths()
	for path, item := range doc.Paths.Map() {
		if item == nil {
			continue
		}
		reduced := *item
		reduced.AdditionalOperations = maps.Clone(item.AdditionalOperations)
		kept := 0
		for method, op := range item.Operations() {
			if keep(method, path, op.OperationID, op.Tags) {
				kept++
				continue
			}
			reduced.SetOperation(method, nil)
		}
		if kept > 0 {
			out.Paths.Set(path, &reduced)
		}
	}
	return &out
}

// picked drops the pointers of selected operations.
func picked(ops []whitelist.Operation) []selected {
	var out []selected
	for _, op := range ops {
		out = append(out, selected{
			Route: op.Method + " " + op.Path, OperationID: op.Op.OperationID, Name: op.Name,
			Description: op.Description, Title: op.Title, Annotations: op.Annotations, Timeout: op.Timeout,
		})
	}
	return out
}
