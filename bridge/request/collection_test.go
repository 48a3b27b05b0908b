package request

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
)

// TestCollectionDelims: a parameter marked as a Swagger 2.0 collection
// joins its items, and those of the arrays in it, by its delimiters, in
// each location: escaped in a path, query or cookie (but for the comma),
// as they are in a header; delimiters inside values are escaped.
func TestCollectionDelims(t *testing.T) {
	ab := []any{"a", "b"}
	nested := []any{[]any{"a", "b"}, []any{"c"}, "d"}
	for _, tc := range []struct {
		name    string
		in      Location
		style   string
		explode bool
		delims  string
		value   any
		want    string // the path value, query pairs, header value or cookie pairs
		err     string
	}{
		{"path ssv", InPath, "simple", false, " ", ab, "a%20b", ""},
		{"path tsv", InPath, "simple", false, "\t", ab, "a%09b", ""},
		{"path pipes", InPath, "simple", false, "|", ab, "a%7Cb", ""},
		{"path nested", InPath, "simple", false, "|,", nested, "a,b%7Cc%7Cd", ""},
		{"path delimiter in a value", InPath, "simple", false, "|", []any{"a|b", "c/d"}, "", `"a|b" holds "|"`},
		{"path comma in a value", InPath, "simple", false, ",", []any{"a,b", "c"}, "a%2Cb,c", ""},
		{"query nested delimiter in a value", InQuery, "form", false, ", ", []any{[]any{"a b"}, "c"}, "", `"a b" holds " "`},
		{"query tsv", InQuery, "form", false, "\t", ab, "q=a%09b", ""},
		{"query multi nested", InQuery, "form", true, ",|", nested, "q=a%7Cb&q=c&q=d", ""},
		{"query nested three levels", InQuery, "form", false, ", \t", []any{[]any{[]any{"a", "b"}, "c"}, "d"}, "q=a%09b%20c,d", ""},
		{"query nested too deep", InQuery, "form", false, ",|", []any{[]any{[]any{"a"}}}, "", "cannot serialize nested"},
		{"query null and empty items", InQuery, "form", false, "|,", []any{nil, []any{}, []any{"a", nil}}, "q=%7C%7Ca,", ""},
		{"query object in the array", InQuery, "form", false, ",|", []any{map[string]any{"k": "v"}}, "q%5B0%5D%5Bk%5D=v", ""},
		{"header ssv", InHeader, "simple", false, " ", ab, "a b", ""},
		{"header tsv", InHeader, "simple", false, "\t", ab, "a\tb", ""},
		{"header nested", InHeader, "simple", false, "|,", nested, "a,b|c|d", ""},
		{"header object in the array", InHeader, "simple", false, ",|", []any{map[string]any{"k": "v"}}, `[{"k":"v"}]`, ""},
		{"cookie pipes", InCookie, "form", false, "|", ab, "q=a%7Cb", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := ParamSpec{Name: "q", In: tc.in, Style: tc.style, Explode: tc.explode, Delims: tc.delims}
			var got string
			var err error
			switch tc.in {
			case InPath:
				got, err = s.encodePath(tc.value)
			case InQuery:
				var b []byte
				b, err = s.appendQuery(nil, tc.value)
				got = string(b)
			case InHeader:
				got, err = s.headerValue(tc.value)
			case InCookie:
				var pairs []string
				pairs, err = s.cookiePairs(tc.value)
				got = strings.Join(pairs, "; ")
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %q, %v; want an error containing %q", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %q; want %q", got, tc.want)
			}
		})
	}
}

// TestCollectionBody: form and multipart properties whose Encoding Object
// carries a Swagger 2.0 collectionFormat.
func TestCollectionBody(t *testing.T) {
	explode := func(b bool) *bool { return &b }
	enc := map[string]*openapi3.Encoding{
		"tsv":    {Style: "form", Explode: explode(false), Extensions: map[string]any{CollectionFormatExtension: "tsv"}},
		"nested": {Style: "pipeDelimited", Explode: explode(false), Extensions: map[string]any{CollectionFormatExtension: "pipes,ssv"}},
		"multi":  {Style: "form", Explode: explode(true), Extensions: map[string]any{CollectionFormatExtension: "multi,csv"}},
	}
	value := map[string]any{
		"tsv":    []any{"a", "b"},
		"nested": []any{[]any{"a", "b"}, "c"},
		"multi":  []any{[]any{"a", "b"}, "c"},
	}
	form, err := NewBody(&openapi3.RequestBody{Content: openapi3.Content{"application/x-www-form-urlencoded": {Encoding: enc}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := form.encode(value)
	if err != nil {
		t.Fatal(err)
	}
	if want := "multi=a,b&multi=c&nested=a%20b%7Cc&tsv=a%09b"; string(got) != want {
		t.Errorf("form body %q; want %q", got, want)
	}

	mp, err := NewBody(&openapi3.RequestBody{Content: openapi3.Content{"multipart/form-data": {Encoding: enc}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mp.boundary = "b"
	got, _, err = mp.encode(value)
	if err != nil {
		t.Fatal(err)
	}
	part := func(name, v string) string {
		return "--b\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + v + "\r\n"
	}
	want := part("multi", "a,b") + part("multi", "c") + part("nested", "a b|c") + part("tsv", "a\tb") + "--b--\r\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("multipart body (-want +got):\n%s", diff)
	}

	bad := map[string]*openapi3.Encoding{"x": {Extensions: map[string]any{CollectionFormatExtension: "nope"}}}
	if _, err := NewBody(&openapi3.RequestBody{Content: openapi3.Content{"multipart/form-data": {Encoding: bad}}}, Options{}); err == nil || !strings.Contains(err.Error(), `property "x"`) {
		t.Errorf("NewBody with a bad collection format: %v; want an error naming the property", err)
	}
}
