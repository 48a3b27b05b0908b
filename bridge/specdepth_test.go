package bridge_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// itemsChainSpec is a spec whose one request body is an items chain n
// levels deep.
func itemsChainSpec(n int) []byte {
	schema := strings.Repeat(`{"type":"array","items":`, n) + `{"type":"string"}` + strings.Repeat(`}`, n)
	return []byte(`{"openapi":"3.0.3","info":{"title":"deep","version":"1"},"paths":{"/x":{"post":{"operationId":"x",` +
		`"requestBody":{"content":{"application/json":{"schema":` + schema + `}}},` +
		`"responses":{"200":{"description":"ok"}}}}}}`)
}

// TestSpecResourceDeepSchema: building openapi://spec costs depth × size
// (every kin-openapi level encodes the levels below it again), so a schema
// nested thousands of levels deep took seconds and gigabytes at start-up.
// Past the bound the resource is left out (the tools do not depend on it);
// a schema of ordinary depth is still served.
func TestSpecResourceDeepSchema(t *testing.T) {
	for _, tc := range []struct {
		depth int
		want  bool
	}{{40, true}, {3000, false}} {
		res, err := specloader.LoadData(context.Background(), itemsChainSpec(tc.depth), nil, specloader.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ops, err := whitelist.All().Select(res.Doc)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		cat, err := bridge.New(ops, bridge.Options{BaseURL: "http://127.0.0.1:1", Spec: res.Doc})
		if err != nil {
			t.Fatal(err)
		}
		if got := cat.Spec() != nil; got != tc.want {
			t.Errorf("depth %d: spec served %v, want %v (built in %v)", tc.depth, got, tc.want, time.Since(start))
		}
	}
}
