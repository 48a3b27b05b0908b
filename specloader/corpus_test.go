package specloader_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/specloader"
)

const corpusDir = "../testdata/specs"

// corpusSummary is what a corpus spec must load to.
type corpusSummary struct {
	Version    string
	Operations int // path operations: what becomes a tool
	WebhookOps int // webhook operations, which never do
	Repaired   bool
}

// corpus lists every spec in testdata/specs with what it must load to. The
// numbers come from MANIFEST.tsv, which TestCorpusMatchesManifest holds this
// table to. Repaired marks the specs kin-openapi refuses as published.
var corpus = map[string]corpusSummary{
	"petstore.2.0.yaml":              {Version: "2.0", Operations: 20},
	"petstore-minimal.2.0.json":      {Version: "2.0", Operations: 1},
	"petstore.3.0.yaml":              {Version: "3.0.0", Operations: 20},
	"petstore.3.1.json":              {Version: "3.1.0", Operations: 20},
	"parameters-style.3.0.yaml":      {Version: "3.0.3", Operations: 25},
	"security-schemes.3.1.yaml":      {Version: "3.1.0", Operations: 15},
	"schema-circular.3.0.yaml":       {Version: "3.0.3", Operations: 3},
	"polymorphism.3.0.yaml":          {Version: "3.0.3", Operations: 13},
	"file-uploads.3.0.yaml":          {Version: "3.0.3", Operations: 3},
	"form-data.3.0.yaml":             {Version: "3.0.3", Operations: 1},
	"server-variables.3.0.yaml":      {Version: "3.0.3", Operations: 4},
	"callbacks.3.0.yaml":             {Version: "3.0.0", Operations: 1},
	"webhooks-only.3.1.yaml":         {Version: "3.1.0", Operations: 0, WebhookOps: 2},
	"schema-types.3.1.yaml":          {Version: "3.1.0", Operations: 23},
	"scalar-galaxy.3.1.yaml":         {Version: "3.1.1", Operations: 9, WebhookOps: 1, Repaired: true},
	"rclone-rc.3.1.yaml":             {Version: "3.1.0", Operations: 101},
	"figma-rest.3.1.yaml":            {Version: "3.1.0", Operations: 54},
	"okta-management.2.0.yaml":       {Version: "2.0", Operations: 340},
	"blockfrost.3.0.yaml":            {Version: "3.0.3", Operations: 129},
	"github-api.3.0.json":            {Version: "3.0.3", Operations: 1223},
	"jira-platform.3.0.json":         {Version: "3.0.1", Operations: 499},
	"digitalocean.3.0.json":          {Version: "3.0.0", Operations: 290, Repaired: true},
	"twilio-messaging-v1.3.0.json":   {Version: "3.0.1", Operations: 50},
	"google-drive-v3.3.0.json":       {Version: "3.0.0", Operations: 50},
	"discourse.3.1.json":             {Version: "3.1.0", Operations: 84},
	"xkcd.3.0.json":                  {Version: "3.0.0", Operations: 2},
	"stripe.3.0.json":                {Version: "3.0.0", Operations: 452},
	"aws-sqs.3.0.json":               {Version: "3.0.0", Operations: 46},
	"aws-sns.3.0.json":               {Version: "3.0.0", Operations: 84},
	"aws-s3.3.0.json":                {Version: "3.0.0", Operations: 97},
	"box.3.0.json":                   {Version: "3.0.2", Operations: 260},
	"bungie.3.0.json":                {Version: "3.0.0", Operations: 134},
	"asana.3.0.json":                 {Version: "3.0.0", Operations: 167},
	"id4i.3.0.json":                  {Version: "3.0.0", Operations: 107},
	"adyen-config-webhooks.3.1.json": {Version: "3.1.0", Operations: 0, WebhookOps: 11},
	"adyen-management.3.1.json":      {Version: "3.1.0", Operations: 132},
	"twilio-api-v2010.3.0.json":      {Version: "3.0.1", Operations: 195},
	"apivideo.3.0.json":              {Version: "3.0.0", Operations: 47, Repaired: true},
	"daniweb.3.0.json":               {Version: "3.0.0", Operations: 67},
	"enode.3.0.json":                 {Version: "3.0.0", Operations: 28, Repaired: true},
	"revai.3.0.json":                 {Version: "3.0.1", Operations: 7, Repaired: true},
	"rumble.3.0.json":                {Version: "3.0.0", Operations: 116, Repaired: true},
	"swaggerhub.3.0.json":            {Version: "3.0.0", Operations: 87, Repaired: true},
	"useapi.3.0.json":                {Version: "3.0.2", Operations: 8},
	"weatherbit.3.0.json":            {Version: "3.0.0", Operations: 47},
	"mineskin.3.0.json":              {Version: "3.0.3", Operations: 9},
}

func TestLoadCorpus(t *testing.T) {
	for name, want := range corpus {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(corpusDir, name)
			res, err := specloader.Load(t.Context(), path, specloader.Options{})
			if err != nil {
				t.Fatalf("Load(%s): %v", name, err)
			}

			got := corpusSummary{Version: res.Version, Repaired: hasRepairs(res.Warnings)}
			for _, item := range res.Doc.Paths.Map() {
				got.Operations += len(item.Operations())
			}
			for _, item := range res.Doc.Webhooks {
				got.WebhookOps += len(item.Operations())
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load(%s) mismatch (-want +got):\n%s", name, diff)
			}
			if refs := unresolved(res.Doc); len(refs) != 0 {
				t.Errorf("Load(%s): %d refs left unresolved, first: %v", name, len(refs), refs[0])
			}

			abs, err := filepath.Abs(path)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := res.Location.String(), "file://"+filepath.ToSlash(abs); got != want {
				t.Errorf("Location = %s; want %s", got, want)
			}
			if got, want := res.Hash, fileHash(t, path); got != want {
				t.Errorf("Hash = %s; want %s", got, want)
			}
		})
	}
}

func hasRepairs(warnings []string) bool {
	for _, w := range warnings {
		if strings.HasPrefix(w, "repaired ") {
			return true
		}
	}
	return false
}

func fileHash(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// unresolved lists, by operation, the $refs an operation reaches whose value
// the loader left nil.
func unresolved(doc *openapi3.T) []string {
	var out []string
	check := func(where string, ok bool) {
		if !ok {
			out = append(out, where)
		}
	}
	content := func(where string, c openapi3.Content) {
		for mt, m := range c {
			check(where+" "+mt+" schema", m == nil || m.Schema == nil || m.Schema.Value != nil)
		}
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			for _, p := range append(item.Parameters, op.Parameters...) {
				check(where+" parameter "+p.Ref, p.Value != nil)
				if p.Value != nil && p.Value.Schema != nil {
					check(where+" parameter schema "+p.Value.Schema.Ref, p.Value.Schema.Value != nil)
				}
			}
			if rb := op.RequestBody; rb != nil {
				check(where+" requestBody "+rb.Ref, rb.Value != nil)
				if rb.Value != nil {
					content(where+" requestBody", rb.Value.Content)
				}
			}
			for code, r := range op.Responses.Map() {
				check(where+" response "+code+" "+r.Ref, r.Value != nil)
				if r.Value != nil {
					content(where+" response "+code, r.Value.Content)
				}
			}
		}
	}
	return out
}

// TestCorpusMatchesManifest keeps the corpus table honest: one entry per
// spec file, with the version and operation counts MANIFEST.tsv records.
func TestCorpusMatchesManifest(t *testing.T) {
	f, err := os.Open(filepath.Join(corpusDir, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	ops := regexp.MustCompile(`^(\d+)(?: \(\+(\d+) webhook ops\))?$`)
	manifest := map[string]corpusSummary{}
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 5 {
			t.Fatalf("MANIFEST.tsv: short line %q", sc.Text())
		}
		m := ops.FindStringSubmatch(cols[4])
		if m == nil {
			t.Fatalf("MANIFEST.tsv: %s: cannot read operations %q", cols[0], cols[4])
		}
		n, _ := strconv.Atoi(m[1])
		w, _ := strconv.Atoi(m[2] + "0")
		manifest[cols[0]] = corpusSummary{Version: cols[3], Operations: n, WebhookOps: w / 10}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}

	table := map[string]corpusSummary{}
	for name, s := range corpus {
		s.Repaired = false
		table[name] = s
	}
	if diff := cmp.Diff(manifest, table); diff != "" {
		t.Errorf("corpus table vs MANIFEST.tsv (-manifest +table):\n%s", diff)
	}

	files, err := filepath.Glob(filepath.Join(corpusDir, "*.*.*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if _, ok := corpus[filepath.Base(file)]; !ok {
			t.Errorf("%s is not in the corpus table", file)
		}
	}
}
