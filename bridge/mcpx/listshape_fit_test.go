package mcpx

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFitToolTitles covers the titles a built tool never has (the bridge
// always sets both titles alike; a go-sdk user of the same server may not):
// only a title that repeats the other is dropped, and a client finds the
// title where its revision looks.
func TestFitToolTitles(t *testing.T) {
	tests := []struct {
		name           string
		title, annot   string // the definition's title and annotations.title
		noAnnotations  bool
		version        string
		wantTop, wantA string // sent: title, annotations.title
	}{
		{name: "equal, new", title: "T", annot: "T", version: "2025-06-18", wantTop: "T"},
		{name: "equal, unknown revision", title: "T", annot: "T", version: "", wantTop: "T"},
		{name: "equal, old", title: "T", annot: "T", version: "2025-03-26", wantA: "T"},
		{name: "differ, new", title: "T", annot: "A", version: "2025-11-25", wantTop: "T", wantA: "A"},
		{name: "differ, old", title: "T", annot: "A", version: "2025-03-26", wantTop: "T", wantA: "A"},
		{name: "top only, old", title: "T", noAnnotations: true, version: "2024-11-05", wantA: "T"},
		{name: "top only, new", title: "T", noAnnotations: true, version: "2025-06-18", wantTop: "T"},
		{name: "annotations only, new", annot: "A", version: "2026-07-28", wantTop: "A"},
		{name: "annotations only, old", annot: "A", version: "2025-03-26", wantA: "A"},
		{name: "none", noAnnotations: true, version: "2025-06-18"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := &mcp.Tool{Name: "x", Title: tt.title}
			if !tt.noAnnotations {
				def.Annotations = &mcp.ToolAnnotations{Title: tt.annot}
			}
			before := *def
			k := classNew
			if tt.version != "" && tt.version < titleSince {
				k = classOld
			}
			got := fitTool(k, def)
			gotA := ""
			if got.Annotations != nil {
				gotA = got.Annotations.Title
				if *got.Annotations == (hints{}) {
					t.Errorf("empty annotations sent")
				}
			}
			if got.Title != tt.wantTop || gotA != tt.wantA {
				t.Errorf("fitTool(%q) titles = %q, %q; want %q, %q", tt.version, got.Title, gotA, tt.wantTop, tt.wantA)
			}
			if diff := cmp.Diff(before, *def); diff != "" {
				t.Errorf("the definition changed (-before +after):\n%s", diff)
			}
		})
	}
}
