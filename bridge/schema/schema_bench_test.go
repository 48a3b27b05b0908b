package schema

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// BenchmarkConvertGitHub converts the request body and 2xx response schemas
// of every operation of GitHub's REST spec (1,223 operations), one converter
// per tool schema as bridge.New does. Loading the spec is not timed.
func BenchmarkConvertGitHub(b *testing.B) {
	doc := schemaTestLoadSpec(b, "../../testdata/specs/github-api.3.0.json")
	type opSchemas struct{ req, resp []*openapi3.SchemaRef }
	var ops []opSchemas
	for _, p := range doc.Paths.Keys() {
		item := doc.Paths.Value(p)
		for _, method := range sortedKeys(item.Operations()) {
			op := item.Operations()[method]
			var o opSchemas
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, ct := range sortedKeys(op.RequestBody.Value.Content) {
					o.req = append(o.req, op.RequestBody.Value.Content[ct].Schema)
				}
			}
			_, o.resp = schemaTestOpSchemas(op, item)
			ops = append(ops, o)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, o := range ops {
			for _, set := range []struct {
				dir  Direction
				refs []*openapi3.SchemaRef
			}{{Request, o.req}, {Response, o.resp}} {
				c := NewConverter(set.dir)
				for _, r := range set.refs {
					c.Convert(r)
				}
				_ = c.Defs()
			}
		}
	}
	b.ReportMetric(float64(len(ops)), "operations")
}
