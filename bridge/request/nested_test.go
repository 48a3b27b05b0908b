package request

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// Values of the nested tables: Stripe's line items (an array of objects
// holding an array) and metadata (an object holding arrays, an empty array,
// an empty object and a null, which write nothing).
var (
	nestedItems = []any{
		map[string]any{"price": "price_1", "quantity": float64(2), "tax_rates": []any{"txr_1", "txr_2"}},
		map[string]any{"price": "p 2"},
	}
	nestedMeta = map[string]any{"order_id": "6735", "tags": []any{"a", "b"}, "empty": []any{}, "none": nil, "obj": map[string]any{}}
	// nestedEsc needs escaping in keys and values, and has a null item.
	nestedEsc = map[string]any{"a b]": []any{"x&y=z/é", nil}, "k.1": map[string]any{"[x]": "%"}}
)

// The wire text of nestedItems and nestedMeta as JSON, query-escaped.
const (
	nestedItemsJSON = "%5B%7B%22price%22%3A%22price_1%22%2C%22quantity%22%3A2%2C%22tax_rates%22%3A%5B%22txr_1%22%2C%22txr_2%22%5D%7D%2C%7B%22price%22%3A%22p%202%22%7D%5D"
	nestedMetaJSON  = "%7B%22empty%22%3A%5B%5D%2C%22none%22%3Anull%2C%22obj%22%3A%7B%7D%2C%22order_id%22%3A%226735%22%2C%22tags%22%3A%5B%22a%22%2C%22b%22%5D%7D"
)

// nestedWant is the wire text per nested style; all, when set, is the
// text for every style (path, header and cookie values are JSON whatever
// the style).
type nestedWant struct {
	brackets, bracketsEmpty, dots, json string
	all                                 string
}

func (w nestedWant) of(s NestedStyle) string {
	if w.all != "" {
		return w.all
	}
	return map[NestedStyle]string{NestedBrackets: w.brackets, NestedBracketsEmpty: w.bracketsEmpty, NestedDots: w.dots, NestedJSON: w.json}[s]
}

// nestedParamCases pin the exact bytes of nested values per location,
// style and nested style.
var nestedParamCases = []struct {
	name  string
	param openapi3.Parameter
	value any
	want  nestedWant
}{
	{
		name: "form explode array of objects", param: paramTestQuery("form", true), value: nestedItems,
		want: nestedWant{
			brackets:      "color%5B0%5D%5Bprice%5D=price_1&color%5B0%5D%5Bquantity%5D=2&color%5B0%5D%5Btax_rates%5D%5B0%5D=txr_1&color%5B0%5D%5Btax_rates%5D%5B1%5D=txr_2&color%5B1%5D%5Bprice%5D=p%202",
			bracketsEmpty: "color%5B0%5D%5Bprice%5D=price_1&color%5B0%5D%5Bquantity%5D=2&color%5B0%5D%5Btax_rates%5D%5B%5D=txr_1&color%5B0%5D%5Btax_rates%5D%5B%5D=txr_2&color%5B1%5D%5Bprice%5D=p%202",
			dots:          "color.1.price=price_1&color.1.quantity=2&color.1.tax_rates.1=txr_1&color.1.tax_rates.2=txr_2&color.2.price=p%202",
			json:          "color=" + nestedItemsJSON,
		},
	},
	{
		// An exploded object: each property is its own pair, so the
		// convention starts at each property.
		name: "form explode object of arrays", param: paramTestQuery("form", true), value: nestedMeta,
		want: nestedWant{
			brackets:      "order_id=6735&tags%5B0%5D=a&tags%5B1%5D=b",
			bracketsEmpty: "order_id=6735&tags%5B%5D=a&tags%5B%5D=b",
			dots:          "order_id=6735&tags.1=a&tags.2=b",
			json:          "order_id=6735&tags=%5B%22a%22%2C%22b%22%5D",
		},
	},
	{
		name: "form no explode object of arrays", param: paramTestQuery("form", false), value: nestedMeta,
		want: nestedWant{
			brackets:      "color%5Border_id%5D=6735&color%5Btags%5D%5B0%5D=a&color%5Btags%5D%5B1%5D=b",
			bracketsEmpty: "color%5Border_id%5D=6735&color%5Btags%5D%5B%5D=a&color%5Btags%5D%5B%5D=b",
			dots:          "color.order_id=6735&color.tags.1=a&color.tags.2=b",
			json:          "color=" + nestedMetaJSON, // inside JSON, nulls and empties are kept
		},
	},
	{
		name: "pipeDelimited array of objects", param: paramTestQuery("pipeDelimited", false), value: []any{map[string]any{"a": "x|y"}},
		want: nestedWant{
			brackets:      "color%5B0%5D%5Ba%5D=x%7Cy",
			bracketsEmpty: "color%5B0%5D%5Ba%5D=x%7Cy",
			dots:          "color.1.a=x%7Cy",
			json:          "color=%5B%7B%22a%22%3A%22x%7Cy%22%7D%5D",
		},
	},
	{
		// Stripe's expand[]: deepObject arrays.
		name: "deepObject array of primitives", param: paramTestQuery("deepObject", true), value: []any{"customer", "invoice.subscription"},
		want: nestedWant{
			brackets:      "color%5B0%5D=customer&color%5B1%5D=invoice.subscription",
			bracketsEmpty: "color%5B%5D=customer&color%5B%5D=invoice.subscription",
			dots:          "color.1=customer&color.2=invoice.subscription",
			json:          "color=%5B%22customer%22%2C%22invoice.subscription%22%5D",
		},
	},
	{
		name: "deepObject array of objects", param: paramTestQuery("deepObject", true), value: nestedItems,
		want: nestedWant{
			brackets:      "color%5B0%5D%5Bprice%5D=price_1&color%5B0%5D%5Bquantity%5D=2&color%5B0%5D%5Btax_rates%5D%5B0%5D=txr_1&color%5B0%5D%5Btax_rates%5D%5B1%5D=txr_2&color%5B1%5D%5Bprice%5D=p%202",
			bracketsEmpty: "color%5B0%5D%5Bprice%5D=price_1&color%5B0%5D%5Bquantity%5D=2&color%5B0%5D%5Btax_rates%5D%5B%5D=txr_1&color%5B0%5D%5Btax_rates%5D%5B%5D=txr_2&color%5B1%5D%5Bprice%5D=p%202",
			dots:          "color.1.price=price_1&color.1.quantity=2&color.1.tax_rates.1=txr_1&color.1.tax_rates.2=txr_2&color.2.price=p%202",
			json:          "color=" + nestedItemsJSON,
		},
	},
	{
		// deepObject writes its first level itself; the convention goes on
		// below it.
		name: "deepObject object of arrays", param: paramTestQuery("deepObject", true), value: nestedMeta,
		want: nestedWant{
			brackets:      "color%5Border_id%5D=6735&color%5Btags%5D%5B0%5D=a&color%5Btags%5D%5B1%5D=b",
			bracketsEmpty: "color%5Border_id%5D=6735&color%5Btags%5D%5B%5D=a&color%5Btags%5D%5B%5D=b",
			dots:          "color%5Border_id%5D=6735&color%5Btags%5D.1=a&color%5Btags%5D.2=b",
			json:          "color%5Border_id%5D=6735&color%5Btags%5D=%5B%22a%22%2C%22b%22%5D",
		},
	},
	{
		// Delimiters inside keys and values are escaped; a null item is the
		// empty string at its index. Under dots a '.' in a key is %2E.
		name: "form explode escaping and null item", param: paramTestQuery("form", true), value: nestedEsc,
		want: nestedWant{
			brackets:      "a%20b%5D%5B0%5D=x%26y%3Dz%2F%C3%A9&a%20b%5D%5B1%5D=&k.1%5B%5Bx%5D%5D=%25",
			bracketsEmpty: "a%20b%5D%5B%5D=x%26y%3Dz%2F%C3%A9&a%20b%5D%5B%5D=&k.1%5B%5Bx%5D%5D=%25",
			dots:          "a%20b%5D.1=x%26y%3Dz%2F%C3%A9&a%20b%5D.2=&k%2E1.%5Bx%5D=%25",
			json:          "a%20b%5D=%5B%22x%26y%3Dz%2F%C3%A9%22%2Cnull%5D&k.1=%7B%22%5Bx%5D%22%3A%22%25%22%7D",
		},
	},
	{
		name: "deepObject escaping", param: paramTestQuery("deepObject", true), value: nestedEsc,
		want: nestedWant{
			brackets:      "color%5Ba%20b%5D%5D%5B0%5D=x%26y%3Dz%2F%C3%A9&color%5Ba%20b%5D%5D%5B1%5D=&color%5Bk.1%5D%5B%5Bx%5D%5D=%25",
			bracketsEmpty: "color%5Ba%20b%5D%5D%5B%5D=x%26y%3Dz%2F%C3%A9&color%5Ba%20b%5D%5D%5B%5D=&color%5Bk.1%5D%5B%5Bx%5D%5D=%25",
			dots:          "color%5Ba%20b%5D%5D.1=x%26y%3Dz%2F%C3%A9&color%5Ba%20b%5D%5D.2=&color%5Bk%2E1%5D.%5Bx%5D=%25",
			json:          "color%5Ba%20b%5D%5D=%5B%22x%26y%3Dz%2F%C3%A9%22%2Cnull%5D&color%5Bk.1%5D=%7B%22%5Bx%5D%22%3A%22%25%22%7D",
		},
	},
	{
		// allowReserved applies to the values, never to the keys.
		name: "allowReserved", param: paramTestReserved(), value: []any{map[string]any{"u": "a/b?c%2F&"}},
		want: nestedWant{
			brackets:      "color%5B0%5D%5Bu%5D=a/b?c%2F%26",
			bracketsEmpty: "color%5B0%5D%5Bu%5D=a/b?c%2F%26",
			dots:          "color.1.u=a/b?c%2F%26",
			json:          "color=%5B%7B%22u%22:%22a/b?c%2F%26%22%7D%5D",
		},
	},
	{
		// Empty arrays and objects write nothing; the null keeps its index.
		name: "empty items", param: paramTestQuery("form", true), value: []any{[]any{}, map[string]any{}, nil},
		want: nestedWant{brackets: "color%5B2%5D=", bracketsEmpty: "color%5B2%5D=", dots: "color.3=", json: "color=%5B%5B%5D%2C%7B%7D%2Cnull%5D"},
	},
	{
		name: "only empties", param: paramTestQuery("form", false), value: map[string]any{"a": []any{}, "b": map[string]any{}, "c": nil},
		want: nestedWant{brackets: "", bracketsEmpty: "", dots: "", json: "color=%7B%22a%22%3A%5B%5D%2C%22b%22%3A%7B%7D%2C%22c%22%3Anull%7D"},
	},
	{
		name: "deepObject empty array", param: paramTestQuery("deepObject", true), value: []any{},
		want: nestedWant{all: ""},
	},
	{
		name: "deepObject null property", param: paramTestQuery("deepObject", true), value: map[string]any{"a": nil, "b": []any{}, "c": map[string]any{}},
		want: nestedWant{all: ""},
	},
	// Path, header and cookie values that nest are their JSON text.
	{name: "header", param: paramTestHeader(false), value: nestedItems, want: nestedWant{all: `[{"price":"price_1","quantity":2,"tax_rates":["txr_1","txr_2"]},{"price":"p 2"}]`}},
	{name: "header explode object", param: paramTestHeader(true), value: map[string]any{"a": []any{float64(1)}}, want: nestedWant{all: `{"a":[1]}`}},
	{name: "path simple", param: paramTestPath("simple", false), value: nestedItems, want: nestedWant{all: nestedItemsJSON}},
	{name: "path label", param: paramTestPath("label", true), value: nestedMeta, want: nestedWant{all: "." + nestedMetaJSON}},
	{name: "path matrix", param: paramTestPath("matrix", true), value: nestedMeta, want: nestedWant{all: ";color=" + nestedMetaJSON}},
	{name: "path JSON dot segment", param: paramTestPath("simple", false), value: []any{[]any{"../x"}}, want: nestedWant{all: "%5B%5B%22..%2Fx%22%5D%5D"}},
	{name: "cookie", param: paramTestCookie(false), value: nestedItems, want: nestedWant{all: "color=" + nestedItemsJSON}},
}

func TestNestedParams(t *testing.T) {
	for _, tc := range nestedParamCases {
		for _, style := range NestedStyles() {
			t.Run(tc.name+"/"+string(style), func(t *testing.T) {
				p := tc.param
				s, err := NewParamSpec(&p, Options{Nested: style})
				if err != nil {
					t.Fatalf("NewParamSpec: %v", err)
				}
				got, err := paramSerialize(s, tc.value)
				if err != nil {
					t.Fatalf("serialize: %v", err)
				}
				if want := tc.want.of(style); got != want {
					t.Errorf("serialize(%v) mismatch (-want +got):\n%s", tc.value, cmp.Diff(want, got))
				}
			})
		}
	}
}

// TestNestedDefault checks that no nested style means brackets.
func TestNestedDefault(t *testing.T) {
	p := paramTestQuery("form", true)
	s, err := NewParamSpec(&p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.appendQuery(nil, nestedItems)
	if want := nestedParamCases[0].want.brackets; err != nil || string(got) != want {
		t.Errorf("appendQuery = %q, %v; want %q", got, err, want)
	}
}

// TestNestedNonNesting checks that values that do not nest keep the bytes
// of the OpenAPI table whatever the nested style.
func TestNestedNonNesting(t *testing.T) {
	for _, tc := range paramStyleCases {
		for _, style := range NestedStyles() {
			p := openapi3.Parameter{Name: "color", In: string(tc.in), Style: tc.style, Explode: paramBoolPtr(tc.explode)}
			s, err := NewParamSpec(&p, Options{Nested: style})
			if err != nil {
				t.Fatal(err)
			}
			got, err := paramSerialize(s, tc.value)
			if tc.style == "deepObject" && style != NestedBrackets {
				continue // the convention applies from deepObject's second level on
			}
			if err != nil || got != tc.want {
				t.Errorf("%s/%s/%v/%T with %s: got %q, %v; want %q", tc.in, tc.style, tc.explode, tc.value, style, got, err, tc.want)
			}
		}
	}
}

func TestNestedOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		param openapi3.Parameter
		opts  Options
		want  ParamSpec
		err   string
	}{
		{"query keeps the style", openapi3.Parameter{Name: "q", In: "query"}, Options{Nested: NestedDots}, ParamSpec{Name: "q", In: "query", Style: "form", Explode: true, Nested: NestedDots}, ""},
		{"path drops it", openapi3.Parameter{Name: "p", In: "path"}, Options{Nested: NestedDots}, ParamSpec{Name: "p", In: "path", Style: "simple"}, ""},
		{"unknown style", openapi3.Parameter{Name: "q", In: "query"}, Options{Nested: "rails"}, ParamSpec{}, `nested style "rails": want brackets, brackets-empty, dots or json`},
		{"allowSlashes path", openapi3.Parameter{Name: "p", In: "path"}, Options{AllowSlashes: true}, ParamSpec{Name: "p", In: "path", Style: "simple", AllowSlashes: true}, ""},
		{"allowSlashes query", openapi3.Parameter{Name: "q", In: "query"}, Options{AllowSlashes: true}, ParamSpec{}, "allowSlashes needs a path parameter of style simple"},
		{"allowSlashes label", openapi3.Parameter{Name: "p", In: "path", Style: "label"}, Options{AllowSlashes: true}, ParamSpec{}, "allowSlashes needs a path parameter of style simple"},
		{"allowSlashes content", openapi3.Parameter{Name: "p", In: "path", Content: openapi3.Content{"text/plain": {}}}, Options{AllowSlashes: true}, ParamSpec{}, "allowSlashes needs a path parameter of style simple"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewParamSpec(&tc.param, tc.opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("NewParamSpec error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NewParamSpec mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := NewBody(bodyDoc(t, `{"content":{"application/json":{}}}`), Options{Nested: "x"}); err == nil {
		t.Error("NewBody with an unknown nested style: want an error")
	}
	for _, s := range []string{"", "brackets", "brackets-empty", "dots", "json"} {
		if _, err := ParseNestedStyle(s); err != nil {
			t.Errorf("ParseNestedStyle(%q): %v", s, err)
		}
	}
	if n, _ := ParseNestedStyle(""); n != NestedBrackets {
		t.Errorf(`ParseNestedStyle("") = %q, want brackets`, n)
	}
}

// TestAllowSlashes covers paths as path parameters (GitHub's
// contents/{path}).
func TestAllowSlashes(t *testing.T) {
	type out struct {
		Wire string
		Err  string
	}
	for _, tc := range []struct {
		value any
		want  out
	}{
		{"docs/README.md", out{Wire: "docs/README.md"}},
		{"a b/c?d#e/f%2F;g", out{Wire: "a%20b/c%3Fd%23e/f%252F%3Bg"}},
		{"a/.hidden/v1.2", out{Wire: "a/.hidden/v1.2"}},
		{"a/.../b", out{Wire: "a/%2E%2E%2E/b"}},
		{`a\..\b/c`, out{Wire: `a%5C%2E%2E%5Cb/c`}},
		{"README.md", out{Wire: "README.md"}},
		{float64(7), out{Wire: "7"}},
		{"a/../b", out{Err: `"." or ".." segments`}},
		{"./a", out{Err: `"." or ".." segments`}},
		{"..", out{Err: `"." or ".." segments`}},
		{"/a", out{Err: "empty segments"}},
		{"a/", out{Err: "empty segments"}},
		{"a//b", out{Err: "empty segments"}},
		{"", out{Err: "empty segment"}},
		// Arrays and objects are not paths: written as without allowSlashes.
		{[]any{"a/b", "c"}, out{Wire: "a%2Fb,c"}},
	} {
		t.Run(fmt.Sprint(tc.value), func(t *testing.T) {
			s, err := NewParamSpec(&openapi3.Parameter{Name: "path", In: "path", Required: true}, Options{AllowSlashes: true})
			if err != nil {
				t.Fatal(err)
			}
			wire, err := s.encodePath(tc.value)
			got := out{Wire: wire}
			if err != nil {
				got = out{Err: tc.want.Err}
				if !strings.Contains(err.Error(), tc.want.Err) || tc.want.Err == "" {
					got.Err = err.Error()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("encodePath(%q) mismatch (-want +got):\n%s", tc.value, diff)
			}
		})
	}
	// Without allowSlashes, '/' stays escaped.
	s, err := NewParamSpec(&openapi3.Parameter{Name: "path", In: "path", Required: true}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.encodePath("docs/README.md"); err != nil || got != "docs%2FREADME.md" {
		t.Errorf("encodePath without allowSlashes = %q, %v; want docs%%2FREADME.md", got, err)
	}
}

// TestAllowSlashesBuild checks the URL Plan.Build sends: the slashes are
// real path separators, and the path cannot climb out of its prefix.
func TestAllowSlashesBuild(t *testing.T) {
	spec, err := NewParamSpec(&openapi3.Parameter{Name: "path", In: "path", Required: true}, Options{AllowSlashes: true})
	if err != nil {
		t.Fatal(err)
	}
	p := Plan{Label: "GET /repos/{path}", Method: "GET", Base: "https://api.test/v3",
		Path:   []Seg{{Lit: "/contents/", Param: -1}, {Param: 0}, {Lit: "/raw", Param: -1}},
		Params: []Param{{Arg: "path", Spec: spec}}}
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	req, err := p.Build(t.Context(), map[string]any{"path": "src/a b/main.go"}, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.URL.String(), "https://api.test/v3/contents/src/a%20b/main.go/raw"; got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
	if _, err := p.Build(t.Context(), map[string]any{"path": "../../admin"}, nil, "test"); err == nil {
		t.Error("Build(../../admin): want an argument error")
	}
}

// nestedBodyForm and nestedBodyMultipart are Stripe-like bodies: deepObject
// properties, a form property with only explode set (style form), a
// contentType-only property and an unstyled one (both JSON text, as OAS 3.1
// defines for unstyled properties, whatever the nested style).
const (
	nestedBodyForm = `{"content":{"application/x-www-form-urlencoded":{"schema":{"type":"object"},
		"encoding":{"metadata":{"style":"deepObject","explode":true},"expand":{"style":"deepObject","explode":true},
		"items":{"style":"deepObject","explode":true},"filter":{"explode":true},"plain":{"contentType":"text/plain"}}}}}`
	nestedBodyMultipart = `{"content":{"multipart/form-data":{"schema":{"type":"object","properties":{"file":{"type":"string","format":"binary"}}},
		"encoding":{"file_link_data":{"style":"deepObject","explode":true},"expand":{"style":"deepObject","explode":true},
		"tags":{"style":"pipeDelimited"},"file":{"style":"form"}}}}}`
)

var (
	nestedFormValue = map[string]any{
		"metadata": map[string]any{"order_id": "6735", "note": "a&b c"},
		"expand":   []any{"customer", "invoice.subscription"},
		"items":    []any{map[string]any{"price": "price_1", "tax_rates": []any{"txr_1"}}},
		"filter":   []any{map[string]any{"name": "tag:env", "values": []any{"prod", "dev"}}},
		"plain":    map[string]any{"k": "v"},
		"unstyled": map[string]any{"k": []any{"v"}},
		"empty":    []any{},
	}
	nestedMultipartValue = map[string]any{
		"file_link_data": map[string]any{"create": true, "meta": map[string]any{"a": []any{"x", "y"}}},
		"expand":         []any{"a"},
		"tags":           []any{"p", "q"},
		"file":           "aGk=",
		"purpose":        "dispute_evidence",
		"obj":            map[string]any{"k": "v"},
	}
)

// nestedPart is one multipart part with only a Content-Disposition name.
func nestedPart(name, value string) string {
	return "--BOUNDARY\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n"
}

func TestNestedBody(t *testing.T) {
	const formTail = "&plain=%7B%22k%22%3A%22v%22%7D&unstyled=%7B%22k%22%3A%5B%22v%22%5D%7D"
	form := nestedWant{
		brackets:      "expand%5B0%5D=customer&expand%5B1%5D=invoice.subscription&filter%5B0%5D%5Bname%5D=tag%3Aenv&filter%5B0%5D%5Bvalues%5D%5B0%5D=prod&filter%5B0%5D%5Bvalues%5D%5B1%5D=dev&items%5B0%5D%5Bprice%5D=price_1&items%5B0%5D%5Btax_rates%5D%5B0%5D=txr_1&metadata%5Bnote%5D=a%26b%20c&metadata%5Border_id%5D=6735" + formTail,
		bracketsEmpty: "expand%5B%5D=customer&expand%5B%5D=invoice.subscription&filter%5B0%5D%5Bname%5D=tag%3Aenv&filter%5B0%5D%5Bvalues%5D%5B%5D=prod&filter%5B0%5D%5Bvalues%5D%5B%5D=dev&items%5B0%5D%5Bprice%5D=price_1&items%5B0%5D%5Btax_rates%5D%5B%5D=txr_1&metadata%5Bnote%5D=a%26b%20c&metadata%5Border_id%5D=6735" + formTail,
		dots:          "expand.1=customer&expand.2=invoice.subscription&filter.1.name=tag%3Aenv&filter.1.values.1=prod&filter.1.values.2=dev&items.1.price=price_1&items.1.tax_rates.1=txr_1&metadata%5Bnote%5D=a%26b%20c&metadata%5Border_id%5D=6735" + formTail,
		json:          "expand=%5B%22customer%22%2C%22invoice.subscription%22%5D&filter=%5B%7B%22name%22%3A%22tag%3Aenv%22%2C%22values%22%3A%5B%22prod%22%2C%22dev%22%5D%7D%5D&items=%5B%7B%22price%22%3A%22price_1%22%2C%22tax_rates%22%3A%5B%22txr_1%22%5D%7D%5D&metadata%5Bnote%5D=a%26b%20c&metadata%5Border_id%5D=6735" + formTail,
	}
	// Unstyled parts (obj, purpose) and file parts are as without a nested
	// style; styled ones are the form pairs, decoded.
	file := "--BOUNDARY\r\nContent-Disposition: form-data; name=\"file\"; filename=\"file\"\r\nContent-Type: application/octet-stream\r\n\r\nhi\r\n"
	obj := "--BOUNDARY\r\nContent-Disposition: form-data; name=\"obj\"\r\nContent-Type: application/json\r\n\r\n{\"k\":\"v\"}\r\n"
	tail := obj + nestedPart("purpose", "dispute_evidence") + nestedPart("tags", "p|q") + "--BOUNDARY--\r\n"
	multipart := nestedWant{
		brackets: nestedPart("expand[0]", "a") + file + nestedPart("file_link_data[create]", "true") +
			nestedPart("file_link_data[meta][a][0]", "x") + nestedPart("file_link_data[meta][a][1]", "y") + tail,
		bracketsEmpty: nestedPart("expand[]", "a") + file + nestedPart("file_link_data[create]", "true") +
			nestedPart("file_link_data[meta][a][]", "x") + nestedPart("file_link_data[meta][a][]", "y") + tail,
		dots: nestedPart("expand.1", "a") + file + nestedPart("file_link_data[create]", "true") +
			nestedPart("file_link_data[meta].a.1", "x") + nestedPart("file_link_data[meta].a.2", "y") + tail,
		json: nestedPart("expand", `["a"]`) + file + nestedPart("file_link_data[create]", "true") +
			nestedPart("file_link_data[meta]", `{"a":["x","y"]}`) + tail,
	}
	for _, style := range NestedStyles() {
		t.Run("form/"+string(style), func(t *testing.T) {
			b, err := NewBody(bodyDoc(t, nestedBodyForm), Options{Nested: style})
			if err != nil {
				t.Fatal(err)
			}
			data, ct, err := b.encode(nestedFormValue)
			if err != nil || ct != "application/x-www-form-urlencoded" {
				t.Fatalf("encode: %q, %v", ct, err)
			}
			if diff := cmp.Diff(form.of(style), string(data)); diff != "" {
				t.Errorf("body mismatch (-want +got):\n%s", diff)
			}
		})
		t.Run("multipart/"+string(style), func(t *testing.T) {
			b, err := NewBody(bodyDoc(t, nestedBodyMultipart), Options{Nested: style})
			if err != nil {
				t.Fatal(err)
			}
			b.boundary = bodyBoundary
			data, _, err := b.encode(nestedMultipartValue)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if diff := cmp.Diff(multipart.of(style), string(data)); diff != "" {
				t.Errorf("body mismatch (-want +got):\n%s", diff)
			}
		})
	}
	// A key that would break the part's header is refused.
	b, err := NewBody(bodyDoc(t, nestedBodyMultipart), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.encode(map[string]any{"file_link_data": map[string]any{"a\r\nX-Evil: 1": "x"}}); err == nil || !strings.Contains(err.Error(), "control characters") {
		t.Errorf("encode(CRLF in a nested key) error = %v, want control characters", err)
	}
}

// TestNestedRoundTrip decodes what each convention writes, as a server
// reading it would (brackets and dots keys, JSON text), and compares the
// result with the value sent: random values of arrays and objects, keys
// and strings with bytes that need escaping.
func TestNestedRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		v := nestedRandom(rng, 0, true)
		if !nests(v) {
			continue
		}
		for _, style := range NestedStyles() {
			for _, pstyle := range []string{"form", "deepObject"} {
				p := paramTestQuery(pstyle, false)
				if _, isArr := v.([]any); pstyle == "deepObject" && isArr && style == NestedJSON {
					continue // written as color=<json>, checked under form
				}
				s, err := NewParamSpec(&p, Options{Nested: style})
				if err != nil {
					t.Fatal(err)
				}
				wire, err := s.appendQuery(nil, v)
				if err != nil {
					t.Fatalf("#%d %s %s: appendQuery(%s): %v", i, pstyle, style, nestedJSON(v), err)
				}
				got, err := nestedDecode(style, pstyle == "deepObject", string(wire))
				if err != nil {
					t.Fatalf("#%d %s %s: decoding %q: %v", i, pstyle, style, wire, err)
				}
				want := nestedExpect(v)
				if style == NestedJSON {
					if err := json.Unmarshal([]byte(nestedJSON(v)), &want); err != nil {
						t.Fatal(err)
					}
					if pstyle == "deepObject" {
						want = nestedExpectJSONFirstLevel(v)
					}
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("#%d %s %s: %s sent as %q decodes differently (-want +got):\n%s", i, pstyle, style, nestedJSON(v), wire, diff)
				}
			}
		}
	}
}

// nestedKeys are object keys with bytes to escape; none is an array
// index, which the conventions cannot tell from one.
var nestedKeys = []string{"a", "b c", "d&e=f", "é", "g.h", "i%j", "k+l", "m/n?"}

// nestedRandom makes a value; solid values are never empty once nulls and
// empty arrays/objects are left out (array items must be, or the indexes
// shift).
func nestedRandom(rng *rand.Rand, depth int, solid bool) any {
	k := rng.IntN(8)
	if depth >= 3 {
		k = 7
	}
	switch {
	case k < 2:
		n := 1 + rng.IntN(3)
		arr := make([]any, n)
		for i := range arr {
			arr[i] = nestedRandom(rng, depth+1, true)
		}
		return arr
	case k < 4:
		obj := map[string]any{}
		for range 1 + rng.IntN(3) {
			obj[nestedKeys[rng.IntN(len(nestedKeys))]] = nestedRandom(rng, depth+1, false)
		}
		if solid {
			obj["s"] = "solid"
		}
		return obj
	case k == 4 && !solid:
		return []any{nil, map[string]any{}, []any{}}[rng.IntN(3)]
	case k == 5:
		return float64(rng.IntN(100)) / 4
	case k == 6:
		return rng.IntN(2) == 0
	}
	return []string{"x", "", "a b&c=d/e?f#g", "日本", "50%", "a]b[c"}[rng.IntN(6)]
}

func nestedJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// nestedExpect is v as a bracket or dot reader gets it back: primitives as
// strings, null properties and empty arrays and objects gone, null items
// as "".
func nestedExpect(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			if e := nestedExpect(e); e != nil {
				m[k] = e
			}
		}
		if len(m) == 0 {
			return nil
		}
		return m
	case []any:
		if len(x) == 0 {
			return nil
		}
		a := make([]any, len(x))
		for i, e := range x {
			if e == nil {
				e = ""
			}
			a[i] = nestedExpect(e)
		}
		return a
	case nil:
		return nil
	}
	s, _ := scalarString(v)
	return s
}

// nestedExpectJSONFirstLevel is a deepObject object under NestedJSON as read
// back: the first level by key, primitives as strings, nested values as
// decoded JSON.
func nestedExpectJSONFirstLevel(v any) any {
	m := map[string]any{}
	for k, e := range v.(map[string]any) {
		switch x := e.(type) {
		case nil:
		case []any, map[string]any:
			if a, ok := x.([]any); ok && len(a) == 0 || ok == false && len(sortedKeys(x.(map[string]any))) == 0 {
				continue // an empty value writes nothing, even as JSON
			}
			var d any
			_ = json.Unmarshal([]byte(nestedJSON(e)), &d)
			m[k] = d
		default:
			m[k] = nestedExpect(e)
		}
	}
	return m
}

// nestedDecode reads color's value back from a query: bracket keys
// (decoded first, as Rack and qs do), dot keys (split before decoding, so
// an escaped '.' stays in its key) or JSON text.
func nestedDecode(style NestedStyle, deep bool, q string) (any, error) {
	root := &nestedNode{}
	for pair := range strings.SplitSeq(q, "&") {
		rawKey, rawValue, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("pair %q has no '='", pair)
		}
		value, err := url.PathUnescape(rawValue)
		if err != nil {
			return nil, err
		}
		var path []string
		switch {
		case style == NestedJSON:
			key, err := url.PathUnescape(rawKey)
			if err != nil {
				return nil, err
			}
			path = []string{key}
			if deep {
				name, sub, _ := strings.Cut(key, "[")
				path = []string{name, strings.TrimSuffix(sub, "]")}
			}
		case style == NestedDots:
			raw := rawKey
			if deep && strings.Contains(raw, "%5B") {
				// deepObject's own first level: color%5Bk%5D.
				name, rest, _ := strings.Cut(raw, "%5B")
				k, after, _ := strings.Cut(rest, "%5D")
				raw = name + "." + k + after
			}
			for seg := range strings.SplitSeq(raw, ".") {
				s, err := url.PathUnescape(seg)
				if err != nil {
					return nil, err
				}
				path = append(path, s)
			}
		default:
			key, err := url.PathUnescape(rawKey)
			if err != nil {
				return nil, err
			}
			name, rest, _ := strings.Cut(key, "[")
			path = []string{name}
			if rest != "" {
				rest = "[" + rest
			}
			for rest != "" {
				end := strings.IndexByte(rest, ']')
				if rest[0] != '[' || end < 0 {
					return nil, fmt.Errorf("key %q is not name[a][b]", key)
				}
				path = append(path, rest[1:end])
				rest = rest[end+1:]
			}
		}
		if path[0] != "color" {
			return nil, fmt.Errorf("key %q is not under color", rawKey)
		}
		leaf := any(value)
		if style == NestedJSON && (!deep || strings.HasPrefix(value, "[") || strings.HasPrefix(value, "{")) {
			// deepObject's primitive first-level properties are plain text.
			if err := json.Unmarshal([]byte(value), &leaf); err != nil {
				return nil, err
			}
		}
		if err := root.insert(path[1:], leaf, style == NestedDots); err != nil {
			return nil, fmt.Errorf("key %q: %w", rawKey, err)
		}
	}
	return root.value(), nil
}

// nestedNode is a value being decoded.
type nestedNode struct {
	leaf    any
	hasLeaf bool
	obj     map[string]*nestedNode
	arr     []*nestedNode
}

func (n *nestedNode) insert(path []string, leaf any, oneBased bool) error {
	if len(path) == 0 {
		if n.hasLeaf || n.obj != nil || n.arr != nil {
			return fmt.Errorf("set twice")
		}
		n.leaf, n.hasLeaf = leaf, true
		return nil
	}
	seg := path[0]
	if seg == "" { // brackets-empty: append
		child := &nestedNode{}
		n.arr = append(n.arr, child)
		return child.insert(path[1:], leaf, oneBased)
	}
	if i, err := strconv.Atoi(seg); err == nil {
		if oneBased {
			i--
		}
		if i < 0 || i > len(n.arr) {
			return fmt.Errorf("index %s out of order", seg)
		}
		if i == len(n.arr) {
			n.arr = append(n.arr, &nestedNode{})
		}
		return n.arr[i].insert(path[1:], leaf, oneBased)
	}
	if n.obj == nil {
		n.obj = map[string]*nestedNode{}
	}
	child := n.obj[seg]
	if child == nil {
		child = &nestedNode{}
		n.obj[seg] = child
	}
	return child.insert(path[1:], leaf, oneBased)
}

func (n *nestedNode) value() any {
	switch {
	case n.hasLeaf:
		return n.leaf
	case n.arr != nil:
		a := make([]any, len(n.arr))
		for i, c := range n.arr {
			a[i] = c.value()
		}
		return a
	case n.obj != nil:
		m := map[string]any{}
		for k, c := range n.obj {
			m[k] = c.value()
		}
		return m
	}
	return nil
}

// TestPathParamSchema checks that a path parameter's schema leaves out the
// values Build refuses: null, empty arrays and objects, and "" in style
// simple.
func TestPathParamSchema(t *testing.T) {
	one := 1
	three := 3
	for _, tc := range []struct {
		name string
		in   jsonschema.Schema
		spec ParamSpec
		want jsonschema.Schema
	}{
		{"string simple", jsonschema.Schema{Type: "string"}, ParamSpec{Style: "simple"}, jsonschema.Schema{Type: "string", MinLength: &one}},
		{"string label", jsonschema.Schema{Type: "string"}, ParamSpec{Style: "label"}, jsonschema.Schema{Type: "string"}},
		{"longer minimum kept", jsonschema.Schema{Type: "string", MinLength: &three}, ParamSpec{Style: "simple"}, jsonschema.Schema{Type: "string", MinLength: &three}},
		{"integer", jsonschema.Schema{Type: "integer"}, ParamSpec{Style: "simple"}, jsonschema.Schema{Type: "integer"}},
		{"array matrix", jsonschema.Schema{Type: "array"}, ParamSpec{Style: "matrix"}, jsonschema.Schema{Type: "array", MinItems: &one}},
		{"object", jsonschema.Schema{Type: "object"}, ParamSpec{Style: "simple"}, jsonschema.Schema{Type: "object", MinProperties: &one}},
		{"nullable string", jsonschema.Schema{Types: []string{"string", "null"}}, ParamSpec{Style: "simple"}, jsonschema.Schema{Type: "string", MinLength: &one}},
		{"no type", jsonschema.Schema{Ref: "#/$defs/Id"}, ParamSpec{Style: "simple"}, jsonschema.Schema{Ref: "#/$defs/Id", MinLength: &one, MinItems: &one, MinProperties: &one}},
		{"JSON content", jsonschema.Schema{Type: "string"}, ParamSpec{Style: "simple", ContentType: "application/json"}, jsonschema.Schema{Type: "string"}},
		// The enum loses the values the schema now refuses, so that neither
		// the listed schema nor the error message ("must be one of "", "x",
		// got """) contradicts itself.
		{"enum with empty string", jsonschema.Schema{Type: "string", Enum: []any{"", "x"}}, ParamSpec{Style: "simple"}, jsonschema.Schema{Type: "string", Enum: []any{"x"}, MinLength: &one}},
		{"nullable enum", jsonschema.Schema{Types: []string{"string", "null"}, Enum: []any{"a", nil}}, ParamSpec{Style: "label"}, jsonschema.Schema{Type: "string", Enum: []any{"a"}}},
		{"enum of only the empty string kept", jsonschema.Schema{Type: "string", Enum: []any{""}}, ParamSpec{Style: "simple"}, jsonschema.Schema{Type: "string", Enum: []any{""}, MinLength: &one}},
		{
			"allowSlashes", jsonschema.Schema{Type: "string", Description: "File path."}, ParamSpec{Style: "simple", AllowSlashes: true},
			jsonschema.Schema{Type: "string", MinLength: &one, Description: "File path.\n\nA path: '/' separates segments, which must not be empty, \".\" or \"..\"."},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			got := PathParamSchema(&in, tc.spec)
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("PathParamSchema mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.in, in); diff != "" {
				t.Errorf("PathParamSchema modified its argument (-before +after):\n%s", diff)
			}
		})
	}
}
