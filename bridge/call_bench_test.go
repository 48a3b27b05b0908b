package bridge

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// benchTool builds one petstore tool for the call-path micro-benchmarks.
func benchTool(b *testing.B, name string) (*Catalog, *Tool) {
	b.Helper()
	res, err := specloader.Load(b.Context(), "../testdata/specs/petstore.3.0.yaml", specloader.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		b.Fatal(err)
	}
	br, err := New(ops, Options{BaseURL: "https://petstore.example/v3"})
	if err != nil {
		b.Fatal(err)
	}
	for _, t := range br.tools {
		if t.def.Name == name {
			return br, t
		}
	}
	b.Fatalf("no tool %s", name)
	return nil, nil
}

var benchArgs = json.RawMessage(`{"body":{"id":10,"name":"doggie","category":{"id":1,"name":"Dogs"},"photoUrls":["https://example.com/a.png"],"tags":[{"id":1,"name":"good"}],"status":"available"}}`)

// BenchmarkValidateArgs: decode and validate one call's arguments.
func BenchmarkValidateArgs(b *testing.B) {
	_, t := benchTool(b, "addPet")
	in, err := t.input.Resolved()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		args, err := decodeArgs(benchArgs)
		if err != nil {
			b.Fatal(err)
		}
		if err := in.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildRequest: arguments to *http.Request (path, query, body,
// credentials).
func BenchmarkBuildRequest(b *testing.B) {
	br, t := benchTool(b, "addPet")
	args, err := decodeArgs(benchArgs)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := t.plan.Build(ctx, args, br.creds, br.userAgent); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildRequestQuery: a GET with path and query parameters.
func BenchmarkBuildRequestQuery(b *testing.B) {
	br, t := benchTool(b, "findPetsByStatus")
	args := map[string]any{"status": []any{"available", "pending"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := t.plan.Build(ctx, args, br.creds, br.userAgent); err != nil {
			b.Fatal(err)
		}
	}
}
