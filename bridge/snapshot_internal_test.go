package bridge

import (
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSnapHintsRoundTrip: every combination of annotations comes back
// from the snapshot's form as it was, and go-sdk's type has no field the
// form leaves out.
func TestSnapHintsRoundTrip(t *testing.T) {
	if n := reflect.TypeFor[mcp.ToolAnnotations]().NumField(); n != 5 {
		t.Fatalf("mcp.ToolAnnotations has %d fields, snapHints keeps 5: add the new one", n)
	}
	if (*snapHints)(nil).annotations() != nil {
		t.Fatal("nil hints give annotations")
	}
	opts := []*bool{nil, new(bool), func() *bool { b := true; return &b }()}
	n := 0
	for _, ro := range []bool{false, true} {
		for _, id := range []bool{false, true} {
			for _, de := range opts {
				for _, ow := range opts {
					for _, title := range []string{"", "List the pets"} {
						a := &mcp.ToolAnnotations{ReadOnlyHint: ro, IdempotentHint: id, DestructiveHint: de, OpenWorldHint: ow, Title: title}
						got := newSnapHints(a).annotations()
						if !reflect.DeepEqual(got, a) {
							t.Errorf("%+v came back as %+v", a, got)
						}
						n++
					}
				}
			}
		}
	}
	if n != 72 {
		t.Fatalf("%d combinations", n)
	}
}
