package specloader_test

import (
	"encoding/json"
	"net/url"
	"path/filepath"
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// The GitHub benchmarks compare the loader with the two ways kin-openapi
// offers to read the same 13 MB JSON spec. Run one at a time under
// /usr/bin/time -v for peak memory:
//
//	go test -c -o /tmp/specloader.test ./specloader
//	/usr/bin/time -v /tmp/specloader.test -test.run '^$' -test.bench 'LoadGitHub$' -test.benchtime 1x

var githubSpec = filepath.Join(corpusDir, "github-api.3.0.json")

// BenchmarkLoadGitHub is the loader end to end: read, decode, resolve,
// validate.
func BenchmarkLoadGitHub(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := specloader.Load(b.Context(), githubSpec, specloader.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// githubPicks are 20 operations an agent would typically use, with small
// and very large response schemas: the whitelist cmd/mcpbench starts the
// GitHub spec with.
var githubPicks = []string{
	"repos/get", "repos/list-for-org", "repos/get-content", "repos/list-commits",
	"repos/compare-commits", "issues/list-for-repo", "issues/get", "issues/create",
	"issues/create-comment", "issues/list-comments", "pulls/list", "pulls/get",
	"pulls/create", "pulls/list-files", "search/issues-and-pull-requests",
	"search/code", "search/repositories", "users/get-by-username",
	"actions/list-workflow-runs-for-repo", "git/get-ref",
}

// keepIDs is an Options.Keep that keeps the operations with these ids.
func keepIDs(ids ...string) func(method, path, operationID string, tags []string) bool {
	return func(_, _, id string, _ []string) bool { return slices.Contains(ids, id) }
}

// BenchmarkLoadGitHubPruned20 is BenchmarkLoadGitHub with Options.Keep
// selecting 20 operations: what a whitelisted bridge loads. On the 2-core
// development machine: about 50 ms, 29 MB and 185k allocations (13 MB of
// them the file), against 0.7 s, 281 MB and 2.8M for the whole document.
func BenchmarkLoadGitHubPruned20(b *testing.B) {
	opts := specloader.Options{Keep: keepIDs(githubPicks...)}
	b.ReportAllocs()
	for b.Loop() {
		res, err := specloader.Load(b.Context(), githubSpec, opts)
		if err != nil {
			b.Fatal(err)
		}
		if !res.Pruned {
			b.Fatal("not pruned")
		}
	}
}

// BenchmarkGitHubKinLoader is kin-openapi's loader, which reads JSON
// through its YAML parser (no validation).
func BenchmarkGitHubKinLoader(b *testing.B) {
	data, loc := githubData(b)
	b.ReportAllocs()
	for b.Loop() {
		l := openapi3.NewLoader()
		l.IsExternalRefsAllowed = true
		if _, err := l.LoadFromDataWithPath(data, loc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGitHubKinUnmarshalJSON is json.Unmarshal into openapi3.T, then
// ResolveRefsIn (no validation).
func BenchmarkGitHubKinUnmarshalJSON(b *testing.B) {
	data, loc := githubData(b)
	b.ReportAllocs()
	for b.Loop() {
		doc := &openapi3.T{}
		if err := json.Unmarshal(data, doc); err != nil {
			b.Fatal(err)
		}
		if err := openapi3.NewLoader().ResolveRefsIn(doc, loc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateGitHub is the share of BenchmarkLoadGitHub spent in
// kin-openapi's lenient validation.
func BenchmarkValidateGitHub(b *testing.B) {
	res, err := specloader.Load(b.Context(), githubSpec, specloader.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = res.Doc.Validate(b.Context(), openapi3.EnableMultiError(), openapi3.DisableExamplesValidation(),
			openapi3.DisableSchemaDefaultsValidation(), openapi3.DisableSchemaPatternValidation())
	}
}

func githubData(b *testing.B) ([]byte, *url.URL) {
	b.Helper()
	abs, err := filepath.Abs(githubSpec)
	if err != nil {
		b.Fatal(err)
	}
	return mustRead(b, abs), &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
}
