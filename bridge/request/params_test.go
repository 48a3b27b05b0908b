package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/google/go-cmp/cmp"
)

func paramBoolPtr(b bool) *bool { return &b }

// The values of the OpenAPI "Style Examples" table.
var (
	paramStyleString = "blue"
	paramStyleArray  = []any{"blue", "black", "brown"}
	paramStyleObject = map[string]any{"R": float64(100), "G": float64(200), "B": float64(150)}
)

// paramStyleCases is the OpenAPI 3.1.2 Style Examples table, for every
// location, style, explode and value kind (objects in sorted key order).
// kin is "" when kin-openapi's openapi3filter must decode the output back
// to the value; otherwise a substring of the error kin reports.
var paramStyleCases = []struct {
	in      Location
	style   string
	explode bool
	value   any
	want    string
	kin     string
}{
	// path
	{InPath, "simple", false, paramStyleString, "blue", ""},
	{InPath, "simple", false, paramStyleArray, "blue,black,brown", ""},
	{InPath, "simple", false, paramStyleObject, "B,150,G,200,R,100", ""},
	{InPath, "simple", true, paramStyleString, "blue", ""},
	{InPath, "simple", true, paramStyleArray, "blue,black,brown", ""},
	{InPath, "simple", true, paramStyleObject, "B=150,G=200,R=100", ""},
	{InPath, "label", false, paramStyleString, ".blue", ""},
	{InPath, "label", false, paramStyleArray, ".blue,black,brown", ""},
	{InPath, "label", false, paramStyleObject, ".B,150,G,200,R,100", ""},
	{InPath, "label", true, paramStyleString, ".blue", ""},
	{InPath, "label", true, paramStyleArray, ".blue.black.brown", ""},
	{InPath, "label", true, paramStyleObject, ".B=150.G=200.R=100", ""},
	{InPath, "matrix", false, paramStyleString, ";color=blue", ""},
	{InPath, "matrix", false, paramStyleArray, ";color=blue,black,brown", ""},
	{InPath, "matrix", false, paramStyleObject, ";color=B,150,G,200,R,100", ""},
	{InPath, "matrix", true, paramStyleString, ";color=blue", ""},
	{InPath, "matrix", true, paramStyleArray, ";color=blue;color=black;color=brown", ""},
	{InPath, "matrix", true, paramStyleObject, ";B=150;G=200;R=100", ""},
	// query
	{InQuery, "form", false, paramStyleString, "color=blue", ""},
	{InQuery, "form", false, paramStyleArray, "color=blue,black,brown", ""},
	{InQuery, "form", false, paramStyleObject, "color=B,150,G,200,R,100", ""},
	{InQuery, "form", true, paramStyleString, "color=blue", ""},
	{InQuery, "form", true, paramStyleArray, "color=blue&color=black&color=brown", ""},
	{InQuery, "form", true, paramStyleObject, "B=150&G=200&R=100", ""},
	{InQuery, "spaceDelimited", false, paramStyleString, "color=blue", "invalid serialization method"}, // n/a: written as form
	{InQuery, "spaceDelimited", false, paramStyleArray, "color=blue%20black%20brown", ""},
	{InQuery, "spaceDelimited", false, paramStyleObject, "color=B%20150%20G%20200%20R%20100", ""},
	{InQuery, "spaceDelimited", true, paramStyleString, "color=blue", "invalid serialization method"},                                               // n/a: as form
	{InQuery, "spaceDelimited", true, paramStyleArray, "color=blue&color=black&color=brown", ""},                                                    // n/a: as form explode
	{InQuery, "spaceDelimited", true, paramStyleObject, "B=150&G=200&R=100", "invalid serialization method"},                                        // n/a: as form explode
	{InQuery, "pipeDelimited", false, paramStyleString, "color=blue", "invalid serialization method"},                                               // n/a: as form
	{InQuery, "pipeDelimited", false, paramStyleArray, "color=blue%7Cblack%7Cbrown", ""},                                                            //
	{InQuery, "pipeDelimited", false, paramStyleObject, "color=B%7C150%7CG%7C200%7CR%7C100", ""},                                                    //
	{InQuery, "pipeDelimited", true, paramStyleString, "color=blue", "invalid serialization method"},                                                // n/a: as form
	{InQuery, "pipeDelimited", true, paramStyleArray, "color=blue&color=black&color=brown", ""},                                                     // n/a: as form explode
	{InQuery, "pipeDelimited", true, paramStyleObject, "B=150&G=200&R=100", "invalid serialization method"},                                         // n/a: as form explode
	{InQuery, "deepObject", true, paramStyleString, "color=blue", "invalid serialization method"},                                                   // n/a: as form
	{InQuery, "deepObject", true, paramStyleObject, "color%5BB%5D=150&color%5BG%5D=200&color%5BR%5D=100", ""},                                       //
	{InQuery, "deepObject", false, paramStyleObject, "color%5BB%5D=150&color%5BG%5D=200&color%5BR%5D=100", "is not supported by a query parameter"}, // explode ignored; kin rejects the document
	{InHeader, "simple", false, paramStyleString, "blue", ""},                                                                                       //
	{InHeader, "simple", false, paramStyleArray, "blue,black,brown", ""},                                                                            //
	{InHeader, "simple", false, paramStyleObject, "B,150,G,200,R,100", ""},                                                                          //
	{InHeader, "simple", true, paramStyleString, "blue", ""},                                                                                        //
	{InHeader, "simple", true, paramStyleArray, "blue,black,brown", ""},                                                                             //
	{InHeader, "simple", true, paramStyleObject, "B=150,G=200,R=100", ""},                                                                           //
	{InCookie, "form", false, paramStyleString, "color=blue", ""},                                                                                   //
	{InCookie, "form", false, paramStyleArray, "color=blue,black,brown", ""},                                                                        //
	{InCookie, "form", false, paramStyleObject, "color=B,150,G,200,R,100", ""},                                                                      //
	{InCookie, "form", true, paramStyleString, "color=blue", ""},                                                                                    //
	{InCookie, "form", true, paramStyleArray, "color=blue; color=black; color=brown", "invalid serialization method"},                               // kin: no exploded cookies
	{InCookie, "form", true, paramStyleObject, "B=150; G=200; R=100", "invalid serialization method"},                                               //
}

// paramSerialize runs the serializer for s.In and returns the wire text:
// the path segment, the raw query, the header value, or the Cookie header.
func paramSerialize(s ParamSpec, v any) (string, error) {
	switch s.In {
	case InPath:
		return s.encodePath(v)
	case InQuery:
		b, err := s.appendQuery(nil, v)
		return string(b), err
	case InHeader:
		return s.headerValue(v)
	}
	pairs, err := s.cookiePairs(v)
	return strings.Join(pairs, "; "), err
}

func TestParamStyles(t *testing.T) {
	for _, tc := range paramStyleCases {
		name := fmt.Sprintf("%s/%s/explode=%v/%T", tc.in, tc.style, tc.explode, tc.value)
		t.Run(name, func(t *testing.T) {
			p := &openapi3.Parameter{Name: "color", In: string(tc.in), Style: tc.style, Explode: paramBoolPtr(tc.explode), Required: true}
			s, err := NewParamSpec(p, Options{})
			if err != nil {
				t.Fatalf("NewParamSpec: %v", err)
			}
			got, err := paramSerialize(s, tc.value)
			if err != nil {
				t.Fatalf("serialize: %v", err)
			}
			if got != tc.want {
				t.Errorf("serialize(%v) = %q, want %q", tc.value, got, tc.want)
			}
			err = paramOracle(t, p, tc.value, got)
			switch {
			case tc.kin == "" && err != nil:
				t.Errorf("kin-openapi rejects %q: %v", got, err)
			case tc.kin != "" && (err == nil || !strings.Contains(err.Error(), tc.kin)):
				t.Errorf("kin-openapi on %q: got error %v, want one containing %q", got, err, tc.kin)
			}
		})
	}
}

// TestParamValues covers escaping, primitives, null and empty values.
func TestParamValues(t *testing.T) {
	type out struct {
		Wire string
		Err  bool
	}
	tests := []struct {
		name    string
		param   openapi3.Parameter
		value   any
		want    out
		noKin   bool // skip the kin round trip (documented kin limitation)
		kinNote string
	}{
		// Path escaping: the value can never change the path's shape.
		{name: "path traversal", param: paramTestPath("simple", false), value: "../admin", want: out{Wire: "%2E%2E%2Fadmin"}},
		{name: "path slash", param: paramTestPath("simple", false), value: "a/b", want: out{Wire: "a%2Fb"}},
		{name: "path query", param: paramTestPath("simple", false), value: "?x=1", want: out{Wire: "%3Fx%3D1"}},
		{name: "path fragment", param: paramTestPath("simple", false), value: "#frag", want: out{Wire: "%23frag"}},
		{name: "path escaped slash", param: paramTestPath("simple", false), value: "%2F", want: out{Wire: "%252F"}},
		{name: "path inner traversal", param: paramTestPath("simple", false), value: "a/../b\\..\\c", want: out{Wire: "a%2F%2E%2E%2Fb%5C%2E%2E%5Cc"}},
		{name: "path dotdot", param: paramTestPath("simple", false), value: "..", want: out{Wire: "%2E%2E"}},
		{name: "path dot", param: paramTestPath("simple", false), value: ".", want: out{Wire: "%2E"}},
		{name: "path dots", param: paramTestPath("simple", false), value: "...", want: out{Wire: "%2E%2E%2E"}},
		{name: "path inner dot kept", param: paramTestPath("simple", false), value: "v1.2", want: out{Wire: "v1.2"}},
		{name: "path semicolon space unicode", param: paramTestPath("simple", false), value: "a;b c/é", want: out{Wire: "a%3Bb%20c%2F%C3%A9"}},
		{name: "path array item dotdot", param: paramTestPath("simple", false), value: []any{"..", "a,b"}, want: out{Wire: "%2E%2E,a%2Cb"}, noKin: true, kinNote: "kin splits after decoding: a,b becomes two items"},
		{name: "path label escapes dots", param: paramTestPath("label", true), value: []any{"a.b", "c"}, want: out{Wire: ".a%2Eb.c"}, noKin: true},
		{name: "path label empty", param: paramTestPath("label", false), value: "", want: out{Wire: "%2E"}},
		{name: "path label explode two empties", param: paramTestPath("label", true), value: []any{"", ""}, want: out{Wire: "%2E%2E"}, noKin: true},
		{name: "path matrix empty", param: paramTestPath("matrix", false), value: "", want: out{Wire: ";color"}, noKin: true, kinNote: "kin wants ;color= (RFC 6570 gives ;color)"},
		{name: "path matrix explode empty item", param: paramTestPath("matrix", true), value: []any{"", "b"}, want: out{Wire: ";color;color=b"}, noKin: true},
		{name: "path matrix key escaped", param: paramTestPath("matrix", true), value: map[string]any{"a;b": "=", "c": ""}, want: out{Wire: ";a%3Bb=%3D;c"}, noKin: true},
		{name: "path empty string", param: paramTestPath("simple", false), value: "", want: out{Err: true}},
		{name: "path empty array", param: paramTestPath("simple", false), value: []any{}, want: out{Err: true}},
		{name: "path null", param: paramTestPath("simple", false), value: nil, want: out{Err: true}},
		{name: "path nested is JSON", param: paramTestPath("simple", false), value: []any{[]any{"x"}}, want: out{Wire: "%5B%5B%22x%22%5D%5D"}, noKin: true, kinNote: "kin has no decoding for nested path values"},
		{name: "path integer float", param: paramTestPath("simple", false), value: float64(3), want: out{Wire: "3"}},
		{name: "path json.Number", param: paramTestPath("simple", false), value: json.Number("12345678901234567890"), want: out{Wire: "12345678901234567890"}, noKin: true, kinNote: "int64 overflow"},
		{name: "path content json", param: paramTestContent(openapi3.ParameterInPath, "application/json"), value: map[string]any{"a": "b/c"}, want: out{Wire: "%7B%22a%22%3A%22b%2Fc%22%7D"}},

		// Primitives.
		{name: "float no exponent", param: paramTestQuery("form", true), value: 1e21, want: out{Wire: "color=1000000000000000000000"}, noKin: true},
		{name: "float fraction", param: paramTestQuery("form", true), value: 1.5, want: out{Wire: "color=1.5"}},
		{name: "small float", param: paramTestQuery("form", true), value: 0.0000001, want: out{Wire: "color=0.0000001"}},
		{name: "json.Number verbatim", param: paramTestQuery("form", true), value: json.Number("1.50"), want: out{Wire: "color=1.50"}},
		{name: "bool", param: paramTestQuery("form", true), value: true, want: out{Wire: "color=true"}},
		{name: "bool array", param: paramTestQuery("form", false), value: []any{true, false}, want: out{Wire: "color=true,false"}},
		{name: "number array", param: paramTestQuery("form", true), value: []any{float64(1), 2.5, json.Number("3")}, want: out{Wire: "color=1&color=2.5&color=3"}},

		// Query escaping.
		{name: "query space is %20", param: paramTestQuery("form", true), value: "a b+c", want: out{Wire: "color=a%20b%2Bc"}},
		{name: "query reserved escaped", param: paramTestQuery("form", true), value: "a&b=c#d/e?f", want: out{Wire: "color=a%26b%3Dc%23d%2Fe%3Ff"}},
		{name: "query comma in value", param: paramTestQuery("form", false), value: []any{"a,b", "c"}, want: out{Wire: "color=a%2Cb,c"}, noKin: true, kinNote: "kin splits after decoding"},
		{name: "query pipe in value", param: paramTestQuery("pipeDelimited", false), value: []any{"a|b", "c"}, want: out{Err: true}, noKin: true, kinNote: "%7C in a value reads as the delimiter"},
		{name: "query space in value", param: paramTestQuery("spaceDelimited", false), value: []any{"a b"}, want: out{Err: true}, noKin: true, kinNote: "%20 in a value reads as the delimiter"},
		{name: "query space in object key", param: paramTestQuery("spaceDelimited", false), value: map[string]any{"a b": "c"}, want: out{Err: true}, noKin: true, kinNote: "%20 in a key reads as the delimiter"},
		{name: "query space in exploded value", param: paramTestQuery("spaceDelimited", true), value: []any{"a b"}, want: out{Wire: "color=a%20b"}},
		{name: "query name escaped", param: openapi3.Parameter{Name: "a b[]", In: "query"}, value: "x", want: out{Wire: "a%20b%5B%5D=x"}},
		{name: "query unicode", param: paramTestQuery("form", true), value: "日本", want: out{Wire: "color=%E6%97%A5%E6%9C%AC"}},
		{name: "allowReserved", param: paramTestReserved(), value: "a/b?c:d@e!$'()*,;x&y=z+w#f[g]h%2Fi%zz~", want: out{Wire: "color=a/b?c:d@e!$'()*,%3Bx%26y%3Dz%2Bw%23f%5Bg%5Dh%2Fi%25zz~"}, noKin: true, kinNote: "%2F is kept, so the server decodes a/ where the value had %2F: allowReserved's contract"},
		{name: "allowReserved round trip", param: paramTestReserved(), value: "a/b?c:d@e!$'()*,x", want: out{Wire: "color=a/b?c:d@e!$'()*,x"}},
		{name: "allowReserved array", param: paramTestReserved(), value: []any{"a/b", "c d"}, want: out{Wire: "color=a/b&color=c%20d"}},
		{name: "content json query", param: paramTestContent(openapi3.ParameterInQuery, "application/json"), value: map[string]any{"lat": 1.5, "long": float64(-2)}, want: out{Wire: "color=%7B%22lat%22%3A1.5%2C%22long%22%3A-2%7D"}},
		{name: "content json string", param: paramTestContent(openapi3.ParameterInQuery, "application/json"), value: "x<y", want: out{Wire: "color=%22x%3Cy%22"}},
		{name: "content text/plain", param: paramTestContent(openapi3.ParameterInQuery, "text/plain"), value: "x y", want: out{Wire: "color=x%20y"}, noKin: true, kinNote: "kin decodes only application/json content"},

		// deepObject.
		{name: "deepObject nested", param: paramTestQuery("deepObject", true), value: map[string]any{"a": map[string]any{"b": "x", "c": float64(1)}, "d": "y"}, want: out{Wire: "color%5Ba%5D%5Bb%5D=x&color%5Ba%5D%5Bc%5D=1&color%5Bd%5D=y"}},
		{name: "deepObject array indexes", param: paramTestQuery("deepObject", true), value: map[string]any{"a": []any{"x", "y"}}, want: out{Wire: "color%5Ba%5D%5B0%5D=x&color%5Ba%5D%5B1%5D=y"}},
		{name: "deepObject array of objects", param: paramTestQuery("deepObject", true), value: map[string]any{"a": []any{map[string]any{"b": "x"}}}, want: out{Wire: "color%5Ba%5D%5B0%5D%5Bb%5D=x"}},
		{name: "deepObject key escaped", param: paramTestQuery("deepObject", true), value: map[string]any{"a]b": "x y"}, want: out{Wire: "color%5Ba%5Db%5D=x%20y"}, noKin: true},
		{name: "deepObject null skipped", param: paramTestQuery("deepObject", true), value: map[string]any{"a": nil, "b": "x"}, want: out{Wire: "color%5Bb%5D=x"}},
		{name: "deepObject array value", param: paramTestQuery("deepObject", true), value: []any{"x"}, want: out{Wire: "color%5B0%5D=x"}, noKin: true, kinNote: "kin: invalid serialization method (deepObject objects only)"},

		// null and empty.
		{name: "query null omitted", param: paramTestQuery("form", true), value: nil, want: out{Wire: ""}, noKin: true},
		{name: "query empty string", param: paramTestQuery("form", true), value: "", want: out{Wire: "color="}},
		{name: "query empty array omitted", param: paramTestQuery("form", false), value: []any{}, want: out{Wire: ""}, noKin: true},
		{name: "query empty object omitted", param: paramTestQuery("form", true), value: map[string]any{}, want: out{Wire: ""}, noKin: true},
		{name: "query null item", param: paramTestQuery("form", false), value: []any{"a", nil}, want: out{Wire: "color=a,"}, noKin: true},
		{name: "query null property", param: paramTestQuery("form", true), value: map[string]any{"a": nil, "b": "x"}, want: out{Wire: "b=x"}},
		{name: "query nested array", param: paramTestQuery("form", true), value: []any{map[string]any{"a": "b"}}, want: out{Wire: "color%5B0%5D%5Ba%5D=b"}, noKin: true, kinNote: "kin has no decoding for nested form values"},
		{name: "query NaN", param: paramTestQuery("form", true), value: math.NaN(), want: out{Err: true}},
		{name: "query unsupported type", param: paramTestQuery("form", true), value: struct{}{}, want: out{Err: true}},
		{name: "header null", param: paramTestHeader(false), value: nil, want: out{Wire: ""}, noKin: true},
		{name: "header empty array", param: paramTestHeader(false), value: []any{}, want: out{Wire: ""}, noKin: true},
		{name: "header not escaped", param: paramTestHeader(false), value: "a b/c%20", want: out{Wire: "a b/c%20"}},
		{name: "header CRLF", param: paramTestHeader(false), value: "a\r\nX-Evil: 1", want: out{Err: true}},
		{name: "header content json", param: paramTestContent(openapi3.ParameterInHeader, "application/json"), value: map[string]any{"a": []any{float64(1)}}, want: out{Wire: `{"a":[1]}`}},
		{name: "cookie null", param: paramTestCookie(true), value: nil, want: out{Wire: ""}, noKin: true},
		{name: "cookie escaped", param: paramTestCookie(false), value: []any{"a b", "c;d", "e,f"}, want: out{Wire: "color=a%20b,c%3Bd,e%2Cf"}, noKin: true, kinNote: "cookies are not percent-decoded by net/http"},
		{name: "cookie content json", param: paramTestContent(openapi3.ParameterInCookie, "application/json"), value: map[string]any{"a": "b c", "d": float64(1)}, want: out{Wire: "color={%22a%22:%22b%20c%22%2C%22d%22:1}"}, noKin: true, kinNote: "cookies are not percent-decoded by net/http"},
		{name: "cookie content json number", param: paramTestContent(openapi3.ParameterInCookie, "application/json"), value: float64(42), want: out{Wire: "color=42"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.param
			s, err := NewParamSpec(&p, Options{})
			if err != nil {
				t.Fatalf("NewParamSpec: %v", err)
			}
			wire, err := paramSerialize(s, tc.value)
			got := out{Wire: wire, Err: err != nil}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("serialize(%#v) mismatch (-want +got):\n%s\nerror: %v", tc.value, diff, err)
			}
			if got.Err || tc.noKin {
				return
			}
			if err := paramOracle(t, &p, tc.value, wire); err != nil {
				t.Errorf("kin-openapi rejects %q: %v", wire, err)
			}
		})
	}
}

func paramTestPath(style string, explode bool) openapi3.Parameter {
	return openapi3.Parameter{Name: "color", In: "path", Required: true, Style: style, Explode: paramBoolPtr(explode)}
}

func paramTestQuery(style string, explode bool) openapi3.Parameter {
	return openapi3.Parameter{Name: "color", In: "query", Required: true, Style: style, Explode: paramBoolPtr(explode)}
}

func paramTestReserved() openapi3.Parameter {
	p := paramTestQuery("form", true)
	p.AllowReserved = true
	return p
}

func paramTestHeader(explode bool) openapi3.Parameter {
	return openapi3.Parameter{Name: "color", In: "header", Required: true, Explode: paramBoolPtr(explode)}
}

func paramTestCookie(explode bool) openapi3.Parameter {
	return openapi3.Parameter{Name: "color", In: "cookie", Required: true, Explode: paramBoolPtr(explode)}
}

func paramTestContent(in, mediaType string) openapi3.Parameter {
	return openapi3.Parameter{Name: "color", In: in, Required: true,
		Content: openapi3.Content{mediaType: &openapi3.MediaType{}}}
}

func TestNewParamSpec(t *testing.T) {
	tests := []struct {
		name  string
		param openapi3.Parameter
		want  ParamSpec
		err   string
	}{
		{"path default", openapi3.Parameter{Name: "id", In: "path"}, ParamSpec{Name: "id", In: "path", Style: "simple"}, ""},
		{"query default", openapi3.Parameter{Name: "q", In: "query"}, ParamSpec{Name: "q", In: "query", Style: "form", Explode: true}, ""},
		{"header default", openapi3.Parameter{Name: "X-Id", In: "header"}, ParamSpec{Name: "X-Id", In: "header", Style: "simple"}, ""},
		{"cookie default", openapi3.Parameter{Name: "sid", In: "cookie"}, ParamSpec{Name: "sid", In: "cookie", Style: "form", Explode: true}, ""},
		{"form explode false", openapi3.Parameter{Name: "q", In: "query", Explode: paramBoolPtr(false)}, ParamSpec{Name: "q", In: "query", Style: "form"}, ""},
		{"pipe default no explode", openapi3.Parameter{Name: "q", In: "query", Style: "pipeDelimited"}, ParamSpec{Name: "q", In: "query", Style: "pipeDelimited"}, ""},
		{"deepObject always explodes", openapi3.Parameter{Name: "q", In: "query", Style: "deepObject", Explode: paramBoolPtr(false)}, ParamSpec{Name: "q", In: "query", Style: "deepObject", Explode: true}, ""},
		{"allowReserved query", openapi3.Parameter{Name: "q", In: "query", AllowReserved: true}, ParamSpec{Name: "q", In: "query", Style: "form", Explode: true, AllowReserved: true}, ""},
		{"allowReserved ignored outside query", openapi3.Parameter{Name: "id", In: "path", AllowReserved: true}, ParamSpec{Name: "id", In: "path", Style: "simple"}, ""},
		{"content", openapi3.Parameter{Name: "c", In: "query", Content: openapi3.Content{"application/json": {}}}, ParamSpec{Name: "c", In: "query", Style: "form", Explode: true, ContentType: "application/json"}, ""},
		{"content prefers json", openapi3.Parameter{Name: "c", In: "header", Content: openapi3.Content{"text/plain": {}, "application/vnd.x+json": {}}}, ParamSpec{Name: "c", In: "header", Style: "simple", ContentType: "application/vnd.x+json"}, ""},
		{"deepObject in path", openapi3.Parameter{Name: "id", In: "path", Style: "deepObject"}, ParamSpec{}, `style "deepObject" is not allowed in path`},
		{"form in header", openapi3.Parameter{Name: "h", In: "header", Style: "form"}, ParamSpec{}, `style "form" is not allowed in header`},
		{"matrix in query", openapi3.Parameter{Name: "q", In: "query", Style: "matrix"}, ParamSpec{}, `style "matrix" is not allowed in query`},
		{"simple in cookie", openapi3.Parameter{Name: "c", In: "cookie", Style: "simple"}, ParamSpec{}, `style "simple" is not allowed in cookie`},
		{"unknown style", openapi3.Parameter{Name: "q", In: "query", Style: "tsv"}, ParamSpec{}, `style "tsv" is not allowed`},
		{"unknown location", openapi3.Parameter{Name: "q", In: "formData"}, ParamSpec{}, `unsupported location "formData"`},
		{"collection tsv", openapi3.Parameter{Name: "q", In: "query", Explode: paramBoolPtr(false), Extensions: map[string]any{CollectionFormatExtension: "tsv"}}, ParamSpec{Name: "q", In: "query", Style: "form", Delims: "\t"}, ""},
		{"collection nested", openapi3.Parameter{Name: "h", In: "header", Extensions: map[string]any{CollectionFormatExtension: "ssv,pipes,csv"}}, ParamSpec{Name: "h", In: "header", Style: "simple", Delims: " |,"}, ""},
		{"collection multi", openapi3.Parameter{Name: "q", In: "query", Extensions: map[string]any{CollectionFormatExtension: "multi,tsv"}}, ParamSpec{Name: "q", In: "query", Style: "form", Explode: true, Delims: ",\t"}, ""},
		{"collection ignored by content", openapi3.Parameter{Name: "c", In: "query", Content: openapi3.Content{"application/json": {}}, Extensions: map[string]any{CollectionFormatExtension: "tsv"}}, ParamSpec{Name: "c", In: "query", Style: "form", Explode: true, ContentType: "application/json"}, ""},
		{"collection unknown", openapi3.Parameter{Name: "q", In: "query", Extensions: map[string]any{CollectionFormatExtension: "csv,semicolons"}}, ParamSpec{}, `x-mcpbridge-collection-format "csv,semicolons": want csv`},
		{"collection not a string", openapi3.Parameter{Name: "q", In: "query", Extensions: map[string]any{CollectionFormatExtension: []any{"tsv"}}}, ParamSpec{}, "must be a string"},
		{"no name", openapi3.Parameter{In: "query"}, ParamSpec{}, "no name"},
		{"bad header name", openapi3.Parameter{Name: "X Id", In: "header"}, ParamSpec{}, "not a valid header name"},
		{"bad cookie name", openapi3.Parameter{Name: "a;b", In: "cookie"}, ParamSpec{}, "not a valid cookie name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NewParamSpec(&tc.param, Options{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("NewParamSpec error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewParamSpec: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NewParamSpec mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAppendQuerySeparator checks that appendQuery joins onto existing
// query text with exactly one '&'.
func TestAppendQuerySeparator(t *testing.T) {
	s, err := NewParamSpec(&openapi3.Parameter{Name: "a", In: "query"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"", "x=1", "x=1&", "?"} {
		got, err := s.appendQuery([]byte(prefix), []any{"b", "c"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"": "a=b&a=c", "x=1": "x=1&a=b&a=c", "x=1&": "x=1&a=b&a=c", "?": "?a=b&a=c"}[prefix]
		if string(got) != want {
			t.Errorf("appendQuery(%q) = %q, want %q", prefix, got, want)
		}
	}
	// An error leaves the buffer as it was.
	for _, v := range []any{[]any{"ok", math.NaN()}, []any{"ok", []any{math.Inf(1)}}} {
		got, err := s.appendQuery([]byte("x=1"), v)
		if err == nil || string(got) != "x=1" {
			t.Errorf("appendQuery(%v) = %q, %v; want x=1 and an error", v, got, err)
		}
	}
}

// paramOracleSchema is a JSON Schema for v that only admits v itself (enum), so
// a passing kin-openapi validation proves the decoded value equals v.
func paramOracleSchema(v any) map[string]any {
	s := paramOracleType(v)
	s["enum"] = []any{paramOracleExpect(v)}
	return s
}

// paramOracleExpect is v as a server decodes it: null properties are not sent.
func paramOracleExpect(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			if e != nil {
				m[k] = paramOracleExpect(e)
			}
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = paramOracleExpect(e)
		}
		return a
	}
	return v
}

func paramOracleType(v any) map[string]any {
	switch x := v.(type) {
	case string:
		return map[string]any{"type": "string"}
	case bool:
		return map[string]any{"type": "boolean"}
	case float64, json.Number:
		return map[string]any{"type": "number"}
	case []any:
		items := map[string]any{"type": "string"}
		if len(x) > 0 && x[0] != nil {
			items = paramOracleType(x[0])
		}
		return map[string]any{"type": "array", "items": items}
	case map[string]any:
		props := map[string]any{}
		for k, e := range x {
			if e != nil {
				props[k] = paramOracleType(e)
			}
		}
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{}
}

// paramOracle validates the serialized wire text of one parameter with
// kin-openapi's openapi3filter: the request is routed by net/http's
// ServeMux (which matches escaped segments, so a value that changed the
// path's shape would not reach the handler), path values are unescaped as
// servers do, and the parameter schema pins the expected value.
func paramOracle(t *testing.T, p *openapi3.Parameter, v any, wire string) error {
	t.Helper()
	obj := map[string]any{"name": p.Name, "in": p.In, "required": true}
	if len(p.Content) > 0 {
		for mt := range p.Content {
			obj["content"] = map[string]any{mt: map[string]any{"schema": paramOracleSchema(v)}}
		}
	} else {
		obj["schema"] = paramOracleSchema(v)
		if p.Style != "" {
			obj["style"] = p.Style
		}
		if p.Explode != nil {
			obj["explode"] = *p.Explode
		}
		obj["allowReserved"] = p.AllowReserved
	}
	o := paramOracleRequest{method: http.MethodGet, path: "/items", rawPath: "/items", params: []any{obj}}
	switch p.In {
	case "path":
		o.path = "/items/{" + p.Name + "}"
		o.rawPath = "/items/" + wire
	case "query":
		o.rawQuery = wire
	case "header":
		o.header = http.Header{http.CanonicalHeaderKey(p.Name): {wire}}
	case "cookie":
		o.header = http.Header{"Cookie": {wire}}
	}
	_, err := o.validate(t)
	return err
}

// paramOracleRequest is one request checked by kin-openapi against a one-path
// document.
type paramOracleRequest struct {
	method, path      string // path template
	params            []any  // Parameter Objects (JSON)
	body              any    // Request Body Object (JSON) or nil
	rawPath, rawQuery string
	header            http.Header
	payload           []byte
}

// validate runs openapi3filter.ValidateRequest and returns the decoded
// body value (when the operation has one).
func (o paramOracleRequest) validate(t *testing.T) (any, error) {
	t.Helper()
	op := map[string]any{"responses": map[string]any{"200": map[string]any{"description": "ok"}}}
	if len(o.params) > 0 {
		op["parameters"] = o.params
	}
	if o.body != nil {
		op["requestBody"] = o.body
	}
	docJSON, err := json.Marshal(map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "oracle", "version": "1"},
		"paths":   map[string]any{o.path: map[string]any{strings.ToLower(o.method): op}},
	})
	if err != nil {
		t.Fatalf("marshaling oracle doc: %v", err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(docJSON)
	if err != nil {
		t.Fatalf("loading oracle doc: %v", err)
	}
	if err := doc.Validate(t.Context()); err != nil {
		return nil, fmt.Errorf("oracle document rejected: %w", err)
	}
	target := o.rawPath
	if o.rawQuery != "" {
		target += "?" + o.rawQuery
	}
	req := httptest.NewRequestWithContext(t.Context(), o.method, target, bytes.NewReader(o.payload))
	for k, vs := range o.header {
		req.Header[k] = vs
	}
	var (
		routed  bool
		value   any
		valErr  error
		mux     = http.NewServeMux()
		varName = regexp.MustCompile(`\{([^}]+)\}`)
	)
	mux.HandleFunc(o.method+" "+o.path, func(w http.ResponseWriter, r *http.Request) {
		routed = true
		pathParams := map[string]string{}
		for _, m := range varName.FindAllStringSubmatch(o.path, -1) {
			pathParams[m[1]] = r.PathValue(m[1])
		}
		item := doc.Paths.Value(o.path)
		in := &openapi3filter.RequestValidationInput{
			Request:    r,
			PathParams: pathParams,
			Route:      &routers.Route{Spec: doc, Path: o.path, PathItem: item, Method: o.method, Operation: item.GetOperation(o.method)},
			Options:    &openapi3filter.Options{KeepValidatedValue: true},
		}
		valErr = openapi3filter.ValidateRequest(r.Context(), in)
		if vb, ok := r.Body.(interface{ ValidatedValue() any }); ok {
			value = vb.ValidatedValue()
		}
	})
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, req)
	if !routed {
		return nil, fmt.Errorf("request %s %s not routed to %s: status %d", o.method, target, o.path, rec.Code)
	}
	return value, valErr
}

// TestOracleCatchesMistakes proves the oracle is not vacuous: wrong wire
// text for the right value, and a path value that changes the path's
// shape, are rejected.
func TestOracleCatchesMistakes(t *testing.T) {
	tests := []struct {
		name  string
		param openapi3.Parameter
		value any
		wire  string
	}{
		{"wrong delimiter", paramTestQuery("pipeDelimited", false), paramStyleArray, "color=blue,black,brown"},
		{"wrong item", paramTestQuery("form", true), paramStyleArray, "color=blue&color=black&color=red"},
		{"wrong object", paramTestQuery("deepObject", true), paramStyleObject, "color%5BB%5D=150&color%5BG%5D=200&color%5BR%5D=101"},
		{"unescaped slash", paramTestPath("simple", false), "a/b", "a/b"},
		{"dot segment", paramTestPath("simple", false), "..", ".."},
		{"wrong label", paramTestPath("label", true), paramStyleArray, ".blue,black,brown"},
		{"wrong header", paramTestHeader(true), paramStyleObject, "B,150,G,200,R,100"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := paramOracle(t, &tc.param, tc.value, tc.wire); err == nil {
				t.Errorf("oracle accepted %q for %v", tc.wire, tc.value)
			}
		})
	}
}
