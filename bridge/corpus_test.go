package bridge_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// corpusDir holds the real-world specs of issue 4 (MANIFEST.tsv lists them).
const corpusDir = "../testdata/specs"

// corpusWant is what a corpus spec must give: the load error, or the
// declared version, the operations the whitelist selects, the tools built
// and the operations skipped, each with a substring of its reason.
type corpusWant struct {
	LoadErr    string // non-empty: specloader.Load fails with an error containing it
	Version    string
	Operations int
	Tools      int
	Skipped    map[string]string // "METHOD /path" → substring of the reason
}

// corpus is the expected outcome for every spec of testdata/specs. Every
// spec loads. An operation is skipped only when it cannot be expressed;
// each skip here is a real inexpressible case, with its reason.
var corpus = map[string]corpusWant{
	"adyen-config-webhooks.3.1.json": {Version: "3.1.0"},
	"adyen-management.3.1.json":      {Version: "3.1.0", Operations: 132, Tools: 132},
	"asana.3.0.json":                 {Version: "3.0.0", Operations: 167, Tools: 167},
	"aws-s3.3.0.json":                {Version: "3.0.0", Operations: 97, Tools: 97},
	"aws-sns.3.0.json":               {Version: "3.0.0", Operations: 84, Tools: 84},
	"aws-sqs.3.0.json":               {Version: "3.0.0", Operations: 46, Tools: 46},
	"box.3.0.json":                   {Version: "3.0.2", Operations: 260, Tools: 260},
	"bungie.3.0.json":                {Version: "3.0.0", Operations: 134, Tools: 134},
	"id4i.3.0.json":                  {Version: "3.0.0", Operations: 107, Tools: 107},
	"stripe.3.0.json":                {Version: "3.0.0", Operations: 452, Tools: 452},
	"twilio-api-v2010.3.0.json":      {Version: "3.0.1", Operations: 195, Tools: 195},
	"blockfrost.3.0.yaml":            {Version: "3.0.3", Operations: 129, Tools: 129},
	"callbacks.3.0.yaml":             {Version: "3.0.0", Operations: 1, Tools: 1},
	"digitalocean.3.0.json":          {Version: "3.0.0", Operations: 290, Tools: 290},
	"discourse.3.1.json":             {Version: "3.1.0", Operations: 84, Tools: 84},
	"figma-rest.3.1.yaml":            {Version: "3.1.0", Operations: 54, Tools: 54},
	"file-uploads.3.0.yaml":          {Version: "3.0.3", Operations: 3, Tools: 3},
	"form-data.3.0.yaml":             {Version: "3.0.3", Operations: 1, Tools: 1},
	"github-api.3.0.json":            {Version: "3.0.3", Operations: 1223, Tools: 1223},
	"google-drive-v3.3.0.json":       {Version: "3.0.0", Operations: 50, Tools: 50},
	"jira-platform.3.0.json": {Version: "3.0.1", Operations: 499, Tools: 498, Skipped: map[string]string{
		// multipart/form-data with a `type: string, format: binary` schema:
		// the part has no name (the real API wants "file"), and there is no
		// other media type to fall back on.
		"POST /rest/api/3/issue/{issueIdOrKey}/attachments": "multipart/form-data with a schema that is not an object",
	}},
	"okta-management.2.0.yaml":     {Version: "2.0", Operations: 340, Tools: 340},
	"parameters-style.3.0.yaml":    {Version: "3.0.3", Operations: 25, Tools: 25},
	"petstore-minimal.2.0.json":    {Version: "2.0", Operations: 1, Tools: 1},
	"petstore.2.0.yaml":            {Version: "2.0", Operations: 20, Tools: 20},
	"petstore.3.0.yaml":            {Version: "3.0.0", Operations: 20, Tools: 20},
	"petstore.3.1.json":            {Version: "3.1.0", Operations: 20, Tools: 20},
	"polymorphism.3.0.yaml":        {Version: "3.0.3", Operations: 13, Tools: 13},
	"rclone-rc.3.1.yaml":           {Version: "3.1.0", Operations: 101, Tools: 101},
	"scalar-galaxy.3.1.yaml":       {Version: "3.1.1", Operations: 9, Tools: 9},
	"schema-circular.3.0.yaml":     {Version: "3.0.3", Operations: 3, Tools: 3},
	"schema-types.3.1.yaml":        {Version: "3.1.0", Operations: 23, Tools: 23},
	"security-schemes.3.1.yaml":    {Version: "3.1.0", Operations: 15, Tools: 15},
	"server-variables.3.0.yaml":    {Version: "3.0.3", Operations: 4, Tools: 4},
	"twilio-messaging-v1.3.0.json": {Version: "3.0.1", Operations: 50, Tools: 50},
	"webhooks-only.3.1.yaml":       {Version: "3.1.0"},
	"xkcd.3.0.json":                {Version: "3.0.0", Operations: 2, Tools: 2},
	"apivideo.3.0.json":            {Version: "3.0.0", Operations: 47, Tools: 47},
	"daniweb.3.0.json":             {Version: "3.0.0", Operations: 67, Tools: 67},
	"enode.3.0.json":               {Version: "3.0.0", Operations: 28, Tools: 28},
	"revai.3.0.json":               {Version: "3.0.1", Operations: 7, Tools: 7},
	"rumble.3.0.json":              {Version: "3.0.0", Operations: 116, Tools: 116},
	"swaggerhub.3.0.json":          {Version: "3.0.0", Operations: 87, Tools: 87},
	"useapi.3.0.json":              {Version: "3.0.2", Operations: 8, Tools: 8},
	"weatherbit.3.0.json":          {Version: "3.0.0", Operations: 47, Tools: 47},
	"mineskin.3.0.json":            {Version: "3.0.3", Operations: 9, Tools: 9},
}

// corpusToolName is what MCP clients and model APIs accept.
var corpusToolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// corpusLoaded caches each spec's load for the tests of this package:
// GitHub's 13 MB spec takes seconds to load, and TestCorpus and TestOracle
// both need every spec. The loaded documents are only read.
var corpusLoaded sync.Map // file name → *corpusEntry

type corpusEntry struct {
	once sync.Once
	res  *specloader.Result
	err  error
}

// corpusLoad loads testdata/specs/name with specloader, once per test binary.
func corpusLoad(t testing.TB, name string) (*specloader.Result, error) {
	t.Helper()
	v, _ := corpusLoaded.LoadOrStore(name, &corpusEntry{})
	e := v.(*corpusEntry)
	e.once.Do(func() {
		e.res, e.err = specloader.Load(t.Context(), filepath.Join(corpusDir, name), specloader.Options{})
	})
	return e.res, e.err
}

// corpusFiles lists the spec files of testdata/specs and checks that the
// corpus table covers exactly them.
func corpusFiles(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Fatalf("reading %s: %v", corpusDir, err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() || e.Name() == "MANIFEST.tsv" {
			continue
		}
		names = append(names, e.Name())
	}
	var tableNames []string
	for name := range corpus {
		tableNames = append(tableNames, name)
	}
	slices.Sort(tableNames)
	if diff := cmp.Diff(tableNames, names); diff != "" {
		t.Fatalf("the corpus table does not list exactly the files of %s (-table +files):\n%s", corpusDir, diff)
	}
	return names
}

// corpusSkipUnderRace skips, under -race, a subtest on one of the large
// specs ([corpusLarge]): the race detector makes each cost minutes, and they
// take the code paths the other specs take. Without -race (go test
// ./bridge/, or CI's go test -run 'Corpus|Oracle' ./bridge/) every one is
// checked. Call it from the spec's own subtest: it skips t.
func corpusSkipUnderRace(t *testing.T, name string) {
	t.Helper()
	if bridge.RaceEnabled && corpusLarge(name) {
		t.Skipf("%s is checked without -race only (CI's corpus step): too slow under the race detector", name)
	}
}

// corpusLarge reports a spec over 600 KB (GitHub, Stripe, Jira, Bungie,
// DigitalOcean, Box, Twilio's v2010, S3, Adyen): under -race these cost
// minutes, and the corpus tests take no path on them the smaller specs do
// not take; CI checks every spec without -race.
func corpusLarge(name string) bool {
	fi, err := os.Stat(filepath.Join(corpusDir, name))
	return err == nil && fi.Size() > 600<<10
}

// corpusBridge selects every operation of a loaded spec and builds a
// bridge toward baseURL.
func corpusBridge(t testing.TB, res *specloader.Result, baseURL string, client bridge.Doer) (*bridge.Catalog, []whitelist.Operation) {
	t.Helper()
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatalf("selecting operations: %v", err)
	}
	// The options cmd/mcpbridge uses by default, so that TestCorpus checks
	// the tools/list clients get (output schemas over 16 KiB left out;
	// TestSchemaCorpus converts and resolves every schema regardless).
	b, err := bridge.New(ops, bridge.Options{BaseURL: baseURL, Client: client, Version: "test"})
	if err != nil {
		t.Fatalf("bridge.New: %v", err)
	}
	return b, ops
}

// corpusStats is one row of the results table.
type corpusStats struct {
	Spec, Version            string
	Operations, Tools, Skips int
	SkipReasons              []string
	OracleOps, OracleValid   int
	JudgeOps                 int      // valid operations with parts validated by the second judge
	OracleExceptions         []string // operations that do not validate, with the reason
	OracleNotes              []string // operations routed alone or validated without an argument
}

// TestCorpus builds every operation of every corpus spec into a tool and
// checks the tools: a valid, unique name; an input schema that is a JSON
// object schema compiling as JSON Schema 2020-12 (with jsonschema-go, which
// go-sdk uses); the same for the output schema when there is one. Skipped
// operations must be exactly those of the table.
func TestCorpus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(srv.Close) // after the parallel subtests
	for _, name := range corpusFiles(t) {
		want := corpus[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			corpusSkipUnderRace(t, name)
			res, err := corpusLoad(t, name)
			if want.LoadErr != "" {
				if err == nil || !strings.Contains(err.Error(), want.LoadErr) {
					t.Fatalf("Load error = %v, want one containing %q", err, want.LoadErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			b, ops := corpusBridge(t, res, srv.URL, srv.Client())
			skipped := map[string]string{}
			for _, s := range b.Skipped() {
				skipped[s.Operation] = s.Reason
			}
			got := corpusWant{Version: res.Version, Operations: len(ops), Tools: len(b.OperationDefs())}
			wantCounts := want
			wantCounts.Skipped = nil
			if diff := cmp.Diff(wantCounts, got); diff != "" {
				t.Errorf("outcome mismatch (-want +got):\n%s", diff)
			}
			if got.Operations != got.Tools+len(skipped) {
				t.Errorf("%d operations, %d tools, %d skipped: some operations vanished", got.Operations, got.Tools, len(skipped))
			}
			for op, reason := range skipped {
				sub, ok := want.Skipped[op]
				switch {
				case !ok:
					t.Errorf("unexpected skip of %s: %s", op, reason)
				case !strings.Contains(reason, sub):
					t.Errorf("skip of %s: reason %q, want one containing %q", op, reason, sub)
				}
			}
			for op := range want.Skipped {
				if _, ok := skipped[op]; !ok {
					t.Errorf("%s should be skipped and is a tool", op)
				}
			}
			names := map[string]bool{}
			for _, tool := range b.OperationDefs() {
				if !corpusToolName.MatchString(tool.Name) {
					t.Errorf("tool name %q does not match %s", tool.Name, corpusToolName)
				}
				if names[tool.Name] {
					t.Errorf("tool name %q is used twice", tool.Name)
				}
				names[tool.Name] = true
				if err := corpusCheckSchema(tool.InputSchema, true); err != "" {
					t.Errorf("%s: input schema: %s", tool.Name, err)
				}
				if tool.OutputSchema != nil {
					if err := corpusCheckSchema(tool.OutputSchema, true); err != "" {
						t.Errorf("%s: output schema: %s", tool.Name, err)
					}
				}
			}
			t.Logf("%s (OpenAPI %s): %d operations, %d tools, %d skipped", name, res.Version, got.Operations, got.Tools, len(skipped))
			for _, s := range b.Skipped() {
				t.Logf("skipped %s: %s", s.Operation, s.Reason)
			}
		})
	}
}

// corpusCheckSchema unmarshals a tool schema into jsonschema.Schema and
// resolves it (2020-12); it returns "" when the schema is fine.
func corpusCheckSchema(v any, object bool) string {
	data, err := json.Marshal(v)
	if err != nil {
		return "marshal: " + err.Error()
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(data, &s); err != nil {
		return "not a JSON Schema: " + err.Error()
	}
	if object && s.Type != "object" {
		return `type is not "object"`
	}
	if _, err := s.Resolve(&jsonschema.ResolveOptions{}); err != nil {
		return "does not compile as 2020-12: " + err.Error()
	}
	return ""
}
