package bridge_test

import (
	"testing"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// BenchmarkNewGitHub builds every tool of GitHub's REST spec (1,223
// operations) with bridge.New and the options cmd/mcpbridge uses by
// default. Loading the spec is not timed (specloader has its own
// benchmarks); the README quotes this figure for the build step.
func BenchmarkNewGitHub(b *testing.B) {
	res, err := corpusLoad(b, "github-api.3.0.json")
	if err != nil {
		b.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		br, err := bridge.New(ops, bridge.Options{BaseURL: "https://api.github.com"})
		if err != nil {
			b.Fatal(err)
		}
		if br.Len() != len(ops) {
			b.Fatalf("%d tools for %d operations", br.Len(), len(ops))
		}
	}
}

// BenchmarkSnapshotGitHub restores GitHub's 1,223 tools from a snapshot,
// the cached restart's share of provisioning.
func BenchmarkSnapshotGitHub(b *testing.B) {
	res, err := corpusLoad(b, "github-api.3.0.json")
	if err != nil {
		b.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		b.Fatal(err)
	}
	opts := bridge.Options{BaseURL: "https://api.github.com"}
	br, err := bridge.New(ops, opts)
	if err != nil {
		b.Fatal(err)
	}
	snap, err := br.Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(snap)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := bridge.NewFromSnapshot(snap, opts)
		if err != nil {
			b.Fatal(err)
		}
		if c.Len() != br.Len() {
			b.Fatalf("%d tools restored, want %d", c.Len(), br.Len())
		}
	}
}
