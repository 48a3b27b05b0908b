package bridge

import (
	"encoding/json"
	"strings"
	"testing"
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
