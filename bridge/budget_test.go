package bridge

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

func TestTrimDescription(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 80, "short"},
		{"Returns the pets that match every tag given, sorted by name.", 30, "Returns the pets that match…"},
		{"Ünïcödé ünïcödé ünïcödé", 12, "Ünïcöd…"},
		{"anything", 0, "anything"},
	} {
		if got := trimDescription(tc.in, tc.n); got != tc.want || (tc.n > 0 && len(got) > tc.n) {
			t.Errorf("trimDescription(%q, %d) = %q; want %q (at most %d bytes)", tc.in, tc.n, got, tc.want, tc.n)
		}
	}
}

func TestCompactSchema(t *testing.T) {
	in := `{"type":"object","properties":{"body":{"type":"object","description":"The pet.","properties":{"name":{"type":"string","description":"Its name.","examples":["rex"]},"description":{"type":"string","description":"a property named description"}}},"id":{"type":"integer","description":"Pet id.","enum":[1,2]}},"$defs":{"Tag":{"type":"object","title":"Tag","properties":{"n":{"type":"string","description":"x"}}}}}`
	got := string(compactSchema(json.RawMessage(in)))
	for _, keep := range []string{`"The pet."`, `"Pet id."`, `"enum":[1,2]`, `"description":{"type":"string"}`} {
		if !strings.Contains(got, keep) {
			t.Errorf("compact schema lost %s: %s", keep, got)
		}
	}
	for _, drop := range []string{`Its name.`, `"examples"`, `a property named description`, `"title":"Tag"`, `"description":"x"`} {
		if strings.Contains(got, drop) {
			t.Errorf("compact schema kept %s: %s", drop, got)
		}
	}
}

// TestCompactCatalog checks that the budget settings reach the built tools.
func TestCompactCatalog(t *testing.T) {
	res, err := specloader.Load(t.Context(), "../testdata/specs/petstore.3.0.yaml", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	full, err := New(ops, Options{BaseURL: "http://127.0.0.1:9"})
	if err != nil {
		t.Fatal(err)
	}
	compact, err := New(ops, Options{BaseURL: "http://127.0.0.1:9", SchemaDetail: SchemaCompact, MaxDescriptionLength: 40})
	if err != nil {
		t.Fatal(err)
	}
	outputs := 0
	for i, tl := range compact.Tools() {
		if tl.def.OutputSchema != nil {
			t.Errorf("%s: compact mode lists an output schema", tl.Name())
		}
		if !tl.Builtin() && len(tl.def.Description) > 40 {
			t.Errorf("%s: description of %d bytes over the limit", tl.Name(), len(tl.def.Description))
		}
		if full.Tools()[i].def.OutputSchema != nil {
			outputs++
		}
	}
	if outputs == 0 {
		t.Fatal("the full catalog declares no output schema: the test proves nothing")
	}
}
