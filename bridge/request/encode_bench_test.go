package request

import (
	"fmt"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// BenchmarkAppendQuery serializes a typical mix of query parameters into a
// reused buffer, as the request builder does per call.
func BenchmarkAppendQuery(b *testing.B) {
	params := []struct {
		spec  ParamSpec
		value any
	}{
		{paramBenchSpec(b, "q", "form", true), "hello world & more"},
		{paramBenchSpec(b, "per_page", "form", true), float64(100)},
		{paramBenchSpec(b, "labels", "form", false), []any{"bug", "help wanted", "good first issue"}},
		{paramBenchSpec(b, "ids", "form", true), []any{float64(1), float64(2), float64(3), float64(4)}},
		{paramBenchSpec(b, "filter", "deepObject", true), map[string]any{"state": "open", "since": "2024-01-01T00:00:00Z", "user": map[string]any{"login": "octocat"}}},
		{paramBenchSpec(b, "sort", "pipeDelimited", false), []any{"created", "updated"}},
	}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		for _, p := range params {
			var err error
			if buf, err = p.spec.appendQuery(buf, p.value); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.SetBytes(int64(len(buf)))
}

func paramBenchSpec(b *testing.B, name, style string, explode bool) ParamSpec {
	b.Helper()
	s, err := NewParamSpec(&openapi3.Parameter{Name: name, In: "query", Style: style, Explode: &explode}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkEncodeJSONBody encodes a decoded JSON body of about 16 KiB.
func BenchmarkEncodeJSONBody(b *testing.B) {
	spec, err := NewBody(&openapi3.RequestBody{Content: openapi3.Content{"application/json": &openapi3.MediaType{}}}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	items := make([]any, 0, 64)
	for i := range 64 {
		items = append(items, map[string]any{
			"id":    float64(i),
			"name":  fmt.Sprintf("item-%d", i),
			"tags":  []any{"alpha", "beta", "gamma"},
			"price": 12.5 + float64(i),
			"ok":    i%2 == 0,
			"note":  strings.Repeat("lorem ipsum <dolor> ", 8),
		})
	}
	body := map[string]any{"items": items, "cursor": nil}
	data, _, err := spec.encode(body)
	if err != nil {
		b.Fatal(err)
	}
	if len(data) < 14<<10 || len(data) > 18<<10 {
		b.Fatalf("benchmark body is %d bytes, want about 16 KiB", len(data))
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := spec.encode(body); err != nil {
			b.Fatal(err)
		}
	}
}
