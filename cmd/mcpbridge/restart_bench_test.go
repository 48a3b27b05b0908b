package main

import (
	"path/filepath"
	"testing"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
)

// BenchmarkCachedRestart is a restart's provisioning on GitHub's spec, all
// operations, with a warm tool cache: the spec's inputs read (or, with the
// cache's index, only stat'ed), the tools restored from the cache entry
// and registered with a go-sdk server, as serve does before its first
// tools/list.
func BenchmarkCachedRestart(b *testing.B) {
	spec, err := filepath.Abs("../../testdata/specs/github-api.3.0.json")
	if err != nil {
		b.Fatal(err)
	}
	a := serveApp(b, "--spec", spec, "--all-operations", "--upstream", "http://127.0.0.1:9", "--cache-dir", b.TempDir())
	a.deferValidation = true                        // as serve's first provisioning
	first, err := a.build(b.Context(), false, true) // the first start fills the cache
	a.deferValidation = false
	if err != nil {
		b.Fatal(err)
	}
	// ... and, as serve does once validation is done, adds the encoded list.
	if first.later != nil {
		first.later(b.Context())
	}
	l := mcpx.New(bridge.NewRuntime(first.cat), mcpx.Options{}).EncodedList(first.cat)
	if l == nil || first.relist == nil {
		b.Fatal("no encoded list to cache")
	}
	first.cat.SetEncodedList(l)
	first.relist()
	b.ReportAllocs()
	for b.Loop() {
		bt, err := a.build(b.Context(), false, true)
		if err != nil {
			b.Fatal(err)
		}
		if !bt.cached || bt.cat.EncodedList() == nil {
			b.Fatal("not restored from the cache with its list")
		}
		mcpx.New(bridge.NewRuntime(bt.cat), mcpx.Options{})
	}
}
