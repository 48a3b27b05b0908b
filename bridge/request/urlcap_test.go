package request

import (
	"errors"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestBuildCapsURL: a path, query, header or cookie value that would make
// a request target or header line longer than common servers accept
// (nginx and Apache answer 414 or 431 past 8 KiB) is refused before it is
// sent, naming the argument that wrote most of it; values within the cap
// go, and a negative cap lifts it.
func TestBuildCapsURL(t *testing.T) {
	param := func(name string, in Location) Param {
		spec, err := NewParamSpec(&openapi3.Parameter{Name: name, In: string(in), Required: in == InPath,
			Schema: openapi3.NewStringSchema().NewRef()}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return Param{Arg: name, Spec: spec}
	}
	p := Plan{Label: "GET /items/{id}", Method: "GET", Base: "https://api.test/v1",
		Path:   []Seg{{Lit: "/items/", Param: -1}, {Param: 0}},
		Params: []Param{param("id", InPath), param("q", InQuery), param("short", InQuery), param("X-Note", InHeader), param("sess", InCookie)}}
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a", 100<<10)
	for _, tc := range []struct {
		args map[string]any
		arg  string // the argument blamed
		what string // in the reason
	}{
		{map[string]any{"id": big}, "id", "URL"},
		{map[string]any{"id": strings.Repeat("é", 1400)}, "id", "URL"}, // 2.8 KB of text, 8.4 KB escaped
		{map[string]any{"id": "x", "q": big}, "q", "URL"},
		{map[string]any{"id": "x", "short": "s", "q": strings.Repeat("/", 4<<10)}, "q", "URL"},
		{map[string]any{"id": strings.Repeat("b", 3<<10), "q": strings.Repeat("c", 5<<10)}, "q", "URL"},
		{map[string]any{"id": "x", "X-Note": big}, "X-Note", "header"},
		{map[string]any{"id": "x", "sess": big}, "sess", "Cookie"},
	} {
		req, err := p.Build(t.Context(), tc.args, nil, "t")
		var ae *ArgumentError
		if !errors.As(err, &ae) || ae.Field != tc.arg || !strings.Contains(ae.Reason, tc.what) || !strings.Contains(ae.Reason, "8192") {
			n := 0
			if req != nil {
				n = len(req.URL.RequestURI())
			}
			t.Errorf("%.40v: %v (request target %d bytes); want %q refused for its %s", tc.args, err, n, tc.arg, tc.what)
		}
		if _, err := p.BuildLimit(t.Context(), tc.args, nil, "t", 0, -1); err != nil {
			t.Errorf("%.40v, no cap: %v", tc.args, err)
		}
	}
	ok := map[string]any{"id": strings.Repeat("b", 4<<10), "q": strings.Repeat("c", 3<<10), "X-Note": strings.Repeat("n", 8<<10-10), "sess": strings.Repeat("s", 8<<10-20)}
	req, err := p.Build(t.Context(), ok, nil, "t")
	if err != nil {
		t.Fatalf("within the cap: %v", err)
	}
	if n := len(req.URL.RequestURI()); n > DefaultMaxURLBytes || n < 7<<10 {
		t.Errorf("request target %d bytes", n)
	}
}
