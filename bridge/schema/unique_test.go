package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestUniqueItemsAgreesWithPairs: the one-pass check finds a duplicate
// exactly when comparing every pair with jsonEqual does.
func TestUniqueItemsAgreesWithPairs(t *testing.T) {
	values := []string{`1`, `1.0`, `-0`, `0`, `"1"`, `true`, `false`, `null`, `[]`, `{}`, `[1,2]`, `[2,1]`, `[1.0,2]`,
		`{"a":1,"b":2}`, `{"b":2,"a":1.0}`, `{"a":"1"}`, `"a\"b"`, `"a"`, `[null]`, `[[]]`, `{"a":{"b":[1]}}`, `{"a":{"b":[1.0]}}`}
	var decoded []any
	for _, v := range values {
		dec := json.NewDecoder(strings.NewReader(v))
		dec.UseNumber()
		var x any
		if err := dec.Decode(&x); err != nil {
			t.Fatal(err)
		}
		decoded = append(decoded, x)
	}
	for i := range decoded {
		for j := range decoded {
			a := []any{decoded[i], decoded[j]}
			want := i != j && !jsonEqual(decoded[i], decoded[j])
			if got := uniqueItems(a); got != want {
				t.Errorf("uniqueItems([%s, %s]) = %v, want %v", values[i], values[j], got, want)
			}
		}
	}
}

// BenchmarkExplainUniqueItems: explaining a long array whose last item
// repeats one (the argument error's path) is linear in the items.
func BenchmarkExplainUniqueItems(b *testing.B) {
	root := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
		"ids": {Type: "array", UniqueItems: true, Items: &jsonschema.Schema{Type: "integer"}}}}
	ids := make([]any, 0, 150001)
	for i := range 150000 {
		ids = append(ids, int64(i))
	}
	ids = append(ids, int64(149999))
	args := map[string]any{"ids": ids}
	b.ReportAllocs()
	for b.Loop() {
		if Explain(args, root) == "" {
			b.Fatal("no explanation")
		}
	}
}

// TestRegexFormatLength: a value of format regex is compiled to check it
// up to maxRegexFormat bytes; a longer one passes unchecked (compiling a
// 1 MB character class took Go's regexp half a minute and 3 GB).
func TestRegexFormatLength(t *testing.T) {
	bad := "[" + strings.Repeat(`\p{L}`, 100) // unterminated class
	if stringFormatOK("regex", bad) {
		t.Errorf("a short invalid regex passed")
	}
	long := "[" + strings.Repeat(`\p{L}`, maxRegexFormat/5+1) + "]"
	if !stringFormatOK("regex", long) {
		t.Errorf("a regex over %d bytes was checked", maxRegexFormat)
	}
}
