package bridge_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// TestToolOperation checks that a tool says which operation it calls, and
// still does after a round trip through the tool cache's snapshot.
func TestToolOperation(t *testing.T) {
	ops := allOperations(t, "../testdata/specs/petstore.3.0.yaml")
	opts := bridge.Options{BaseURL: "http://127.0.0.1:1/v3"}
	orig, err := bridge.New(ops, opts)
	if err != nil {
		t.Fatal(err)
	}
	data, err := orig.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	restored, err := bridge.NewFromSnapshot(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := bridge.Operation{Method: "GET", Path: "/pet/{petId}", OperationID: "getPetById", Tags: []string{"pet"}}
	for name, c := range map[string]*bridge.Catalog{"built": orig, "restored": restored} {
		tool, ok := c.Lookup("getPetById")
		if !ok {
			t.Fatalf("%s: no getPetById", name)
		}
		if diff := cmp.Diff(want, tool.Operation()); diff != "" {
			t.Errorf("%s: Operation() mismatch (-want +got):\n%s", name, diff)
		}
		ping, ok := c.Lookup("ping")
		if !ok || !cmp.Equal(ping.Operation(), bridge.Operation{}) {
			t.Errorf("%s: ping's Operation() = %+v, want the zero Operation", name, ping.Operation())
		}
	}
}
