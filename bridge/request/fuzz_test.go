package request

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// fuzzBase is the configured upstream every fuzzed request must go to.
const fuzzBase = "https://upstream.example:8443/v1"

// fuzzPathLits are the literal segments of fuzzPlan's path, in order; a
// parameter segment follows each. The last parameter allows slashes.
var fuzzPathLits = []string{"a", "b", "c", "d", "files"}

// fuzzPlans are the plans FuzzBuild drives: one path of every style
// (simple, label, matrix, simple exploded, allowSlashes), query parameters
// of every style (form both ways, spaceDelimited, pipeDelimited,
// deepObject, allowReserved, a content parameter, a Swagger 2.0
// collection), headers (one a collection too), cookies, and
// each a JSON, form, multipart or text body.
func fuzzPlans(t testing.TB) []*Plan {
	t.Helper()
	explode := func(b bool) *bool { return &b }
	params := []*openapi3.Parameter{
		{Name: "p1", In: "path", Required: true},
		{Name: "p2", In: "path", Required: true, Style: "label", Explode: explode(true)},
		{Name: "p3", In: "path", Required: true, Style: "matrix"},
		{Name: "p4", In: "path", Required: true, Explode: explode(true)},
		{Name: "rest", In: "path", Required: true},
		{Name: "q1", In: "query"},
		{Name: "q2", In: "query", Explode: explode(false)},
		{Name: "q3", In: "query", Style: "spaceDelimited", Explode: explode(false)},
		{Name: "q4", In: "query", Style: "pipeDelimited", Explode: explode(false)},
		{Name: "q5", In: "query", Style: "deepObject", Explode: explode(true)},
		{Name: "q6", In: "query", AllowReserved: true},
		{Name: "q7", In: "query", Content: openapi3.Content{"application/json": &openapi3.MediaType{}}},
		{Name: "q8", In: "query", Explode: explode(false), Extensions: map[string]any{CollectionFormatExtension: "tsv,pipes,ssv"}},
		{Name: "X-H1", In: "header"},
		{Name: "X-H2", In: "header", Explode: explode(true)},
		{Name: "X-H3", In: "header", Content: openapi3.Content{"text/plain": &openapi3.MediaType{}}},
		{Name: "X-H4", In: "header", Extensions: map[string]any{CollectionFormatExtension: "ssv,tsv"}},
		{Name: "c1", In: "cookie"},
		{Name: "c2", In: "cookie", Explode: explode(false)},
		{Name: "c3", In: "cookie", Content: openapi3.Content{"application/json": &openapi3.MediaType{}}},
	}
	var specs []Param
	var segs []Seg
	for _, p := range params {
		s, err := NewParamSpec(p, Options{AllowSlashes: p.Name == "rest"})
		if err != nil {
			t.Fatalf("NewParamSpec(%s): %v", p.Name, err)
		}
		if p.In == "path" {
			segs = append(segs, Seg{Lit: "/" + fuzzPathLits[len(segs)/2] + "/", Param: -1}, Seg{Param: len(specs)})
		}
		specs = append(specs, Param{Arg: p.Name, Spec: s})
	}
	object := openapi3.NewObjectSchema().
		WithProperty("name", openapi3.NewStringSchema()).
		WithProperty("meta", openapi3.NewObjectSchema()).
		WithProperty("file", openapi3.NewStringSchema().WithFormat("binary"))
	bodies := map[string]*openapi3.MediaType{
		"application/json":                  {Schema: openapi3.NewSchemaRef("", object)},
		"application/x-www-form-urlencoded": {Schema: openapi3.NewSchemaRef("", object), Encoding: map[string]*openapi3.Encoding{"meta": {Style: "deepObject", Explode: explode(true)}}},
		"multipart/form-data":               {Schema: openapi3.NewSchemaRef("", object)},
		"text/plain":                        {Schema: openapi3.NewSchemaRef("", openapi3.NewStringSchema())},
		"application/octet-stream":          {Schema: openapi3.NewSchemaRef("", openapi3.NewStringSchema().WithFormat("binary"))},
	}
	var plans []*Plan
	for _, ct := range []string{"application/json", "application/x-www-form-urlencoded", "multipart/form-data", "text/plain", "application/octet-stream"} {
		body, err := NewBody(&openapi3.RequestBody{Content: openapi3.Content{ct: bodies[ct]}}, Options{})
		if err != nil {
			t.Fatalf("NewBody(%s): %v", ct, err)
		}
		p := &Plan{Label: "POST /fuzz (" + ct + ")", Method: "POST", Base: fuzzBase, Path: segs, Params: specs, Body: body, Accept: "application/json"}
		if err := p.Prepare(); err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	return plans
}

// FuzzBuild feeds arbitrary argument objects to Plan.Build. Whatever the
// arguments, it must not panic, and a request it builds goes to the
// configured upstream only, with no line break (or other control
// character) in a header, no fragment, and a path of the template's shape:
// each literal segment where the template puts it, each parameter in one
// segment (the allowSlashes one excepted), and no dot segment, even for a
// server that decodes %2F before splitting.
func FuzzBuild(f *testing.F) {
	plans := fuzzPlans(f)
	for _, seed := range []string{
		`{"p1":"x","p2":"y","p3":"z","p4":"w","rest":"a/b"}`,
		`{"p1":"../../admin","p2":"..","p3":".","p4":"%2e%2e","rest":"a/../b"}`,
		`{"p1":"a/b?c#d","p2":"x?y","p3":"#frag","p4":"x\\y","rest":"ok/%2F/x"}`,
		`{"p1":"@evil.example","p2":"//evil.example/x","p3":"http://evil.example","p4":"x","rest":"//evil.example"}`,
		`{"p1":["a","b/c"],"p2":{"k":"../v"},"p3":["..",".."],"p4":{"a":"b","c":"/"},"rest":"x/y/z"}`,
		`{"p1":1,"p2":true,"p3":1.5e300,"p4":-0,"rest":"x","q1":"a&b=c","q2":["a","b#c"],"q3":["a b","c"],"q4":["a|b"],"q5":{"a":{"b":["c"]}},"q6":"?x=/y#z&w","q7":{"k":"v"}}`,
		`{"p1":"x","p2":"x","p3":"x","p4":"x","rest":"x","X-H1":"a\r\nInjected: yes","X-H2":{"k":"v\nw"},"X-H3":"v\u0000","c1":"a; b=c","c2":["x\r\n"],"c3":{"k":"v;w"}}`,
		`{"p1":"x","p2":"x","p3":"x","p4":"x","rest":"x","body":{"name":"n\r\n--boundary","meta":{"k":["v",{"d":1}]},"file":"aGVsbG8="}}`,
		`{"p1":"x","p2":"x","p3":"x","p4":"x","rest":"x","body":{"file":{"content":"hi","encoding":"text","filename":"a\"\r\nb.txt","contentType":"text/plain\r\nX: y"}}}`,
		`{"p1":"x","p2":"x","p3":"x","p4":"x","rest":"x","body":"plain text \r\n body"}`,
		`{"p1":"","p2":null,"p3":[],"p4":{},"rest":"/"}`,
		`{"p1":"x","p2":"x","p3":"x","p4":"x","rest":"x","q8":[["a|b",["c d",null]],"e\tf",{"k":"v"}],"X-H4":[["a\r\nb"],"c"]}`,
		`{"p1":"\u2028\u00e9\ud83d\ude00","p2":"%","p3":";","p4":"=,","rest":"%00/%2e"}`,
	} {
		for i := range plans {
			f.Add(seed, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, argsJSON string, which uint8) {
		var args map[string]any
		if json.Unmarshal([]byte(argsJSON), &args) != nil {
			return
		}
		p := plans[int(which)%len(plans)]
		creds, err := Credentials{BearerToken: "tok-123456", Query: map[string]string{"api_key": "k+/="}}.Prepare()
		if err != nil {
			t.Fatal(err)
		}
		req, err := p.Build(t.Context(), args, creds, "fuzz")
		if err != nil {
			return // refused arguments are fine; a panic is not
		}
		if req.URL.Scheme != "https" || req.URL.Host != "upstream.example:8443" || req.Host != "upstream.example:8443" || req.URL.User != nil {
			t.Fatalf("request goes to %q (host %q), not the configured upstream", req.URL, req.Host)
		}
		if req.URL.Fragment != "" || req.URL.RawFragment != "" {
			t.Fatalf("fragment %q injected: %s", req.URL.Fragment, req.URL)
		}
		if err := fuzzPathShape(req.URL); err != nil {
			t.Fatalf("args %s: %v", argsJSON, err)
		}
		if err := sameAsReparsed(req.URL); err != nil {
			t.Fatalf("args %s: %v", argsJSON, err)
		}
		q, err := url.ParseQuery(req.URL.RawQuery)
		if err != nil {
			t.Fatalf("query %q does not parse: %v", req.URL.RawQuery, err)
		}
		if got := q["api_key"]; len(got) == 0 || got[len(got)-1] != "k+/=" {
			t.Fatalf("the configured query credential is not the last api_key: %q", got)
		}
		for name, vs := range req.Header {
			for _, v := range vs {
				if strings.ContainsFunc(name+v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
					t.Fatalf("header %q: control character in %q", name, v)
				}
			}
		}
		if got := req.Header.Get("Authorization"); got != "Bearer tok-123456" {
			t.Fatalf("Authorization = %q; the configured credential must win", got)
		}
		if req.Body != nil {
			if _, err := io.Copy(io.Discard, req.Body); err != nil {
				t.Fatalf("reading the body: %v", err)
			}
		}
	})
}

// sameAsReparsed checks that the URL Build assembles (and hands to the
// request as is) sends what its text parsed back would: the same origin and
// request line.
func sameAsReparsed(u *url.URL) error {
	back, err := url.Parse(u.String())
	if err != nil {
		return fmt.Errorf("%s does not parse back: %v", u, err)
	}
	if back.Scheme != u.Scheme || back.Host != u.Host || back.RequestURI() != u.RequestURI() {
		return fmt.Errorf("built %s %s %s, parsed back %s %s %s", u.Scheme, u.Host, u.RequestURI(), back.Scheme, back.Host, back.RequestURI())
	}
	return nil
}

// fuzzPathShape checks that u's path has fuzzPlan's shape.
func fuzzPathShape(u *url.URL) error {
	esc := u.EscapedPath()
	for _, c := range []string{"?", "#"} {
		if strings.Contains(esc, c) {
			return fmt.Errorf("raw %q in path %q", c, esc)
		}
	}
	segs := strings.Split(esc, "/")
	// "", "v1", then literal, parameter pairs; the last parameter may span
	// several segments.
	if len(segs) < 2+2*len(fuzzPathLits) || segs[0] != "" || segs[1] != "v1" {
		return fmt.Errorf("path %q lost its shape", esc)
	}
	for i, lit := range fuzzPathLits {
		if segs[2+2*i] != lit {
			return fmt.Errorf("path %q: segment %d is %q, want %q", esc, 2+2*i, segs[2+2*i], lit)
		}
	}
	// A server that decodes %2E, %2F and %5C before splitting and
	// normalizing (Go's ServeMux, most proxies) must see no dot segment
	// either.
	loose := strings.NewReplacer("%2E", ".", "%2e", ".", "%2F", "/", "%2f", "/", "%5C", "/", "%5c", "/", `\`, "/").Replace(esc)
	for _, s := range append(segs, strings.Split(loose, "/")...) {
		if s == "." || s == ".." {
			return fmt.Errorf("dot segment in path %q", esc)
		}
	}
	for i, s := range segs[1:] {
		if s == "" {
			return fmt.Errorf("path %q: empty segment %d", esc, i+1)
		}
	}
	return nil
}

// TestFuzzPlansBuild keeps FuzzBuild honest: ordinary arguments build on
// every plan, hostile path values included, so its checks run on real
// requests.
func TestFuzzPlansBuild(t *testing.T) {
	args := map[string]any{"p1": "..a/b..", "p2": "x?y", "p3": "#frag", "p4": "a/b", "rest": "a/%2e%2ex/b", "q6": "?x=/y#z",
		"X-H1": "v", "c1": "a; b=c", "body": map[string]any{"name": "n"}}
	for _, p := range fuzzPlans(t) {
		if p.Body.Kind == KindText || p.Body.Kind == KindBinary {
			args["body"] = "aGk="
		}
		req, err := p.Build(t.Context(), args, nil, "t")
		if err != nil {
			t.Fatalf("%s: %v", p.Label, err)
		}
		if err := fuzzPathShape(req.URL); err != nil {
			t.Errorf("%s: %v", p.Label, err)
		}
		if err := sameAsReparsed(req.URL); err != nil {
			t.Errorf("%s: %v", p.Label, err)
		}
		t.Logf("%s: %s", p.Label, req.URL)
	}
}

// TestDotSegmentRefused: a path value that a server decoding %2E, %2F and
// %5C would read as a "." or ".." segment is refused, naming the argument,
// in every style: the label style's own "." prefix makes "." into "..".
func TestDotSegmentRefused(t *testing.T) {
	ok := map[string]any{"p1": "x", "p2": "x", "p3": "x", "p4": "x", "rest": "x", "body": map[string]any{"name": "n"}}
	for _, tc := range []struct{ arg, value string }{
		{"p1", ".."}, {"p1", "."}, {"p1", "../../admin"}, {"p1", "a/.."}, {"p1", `..\x`},
		{"p2", "."}, {"p2", "/"}, // label: ".%2E" and ".%2F"
		{"p4", ".."},
		{"rest", "a/../b"}, {"rest", "a/./b"},
		// Compatibility forms that NFKC makes dots and slashes: fullwidth
		// and small full stops, the one- and two-dot leaders, fullwidth
		// solidi.
		{"p1", "\uff0e\uff0e"}, {"p1", "\u2025"}, {"p1", "\ufe52"}, {"p1", "a\uff0f\u2024\u2024"}, {"p1", "\u2025\uff3cx"},
	} {
		for _, p := range fuzzPlans(t) {
			args := maps.Clone(ok)
			if p.Body.Kind == KindText || p.Body.Kind == KindBinary {
				args["body"] = "aGk="
			}
			args[tc.arg] = tc.value
			req, err := p.Build(t.Context(), args, nil, "t")
			var ae *ArgumentError
			if !errors.As(err, &ae) || ae.Field != tc.arg || !strings.Contains(ae.Reason, "segment") {
				u := ""
				if req != nil {
					u = req.URL.String()
				}
				t.Errorf("%s: %s=%q: %v %s; want the argument refused", p.Label, tc.arg, tc.value, err, u)
			}
		}
	}
	// Dots that form no segment of their own pass, "..." included (a
	// label-style "..": ".%2E%2E"), and so does a percent sign that only
	// looks like an escaped dot (sent as %252e).
	for _, v := range []string{"a.b", "...", "..a", "a..", ".x", "%2e%2e", "\u2026", "\uff0e\uff0ex", "caf\u00e9"} {
		args := maps.Clone(ok)
		args["p1"], args["p2"], args["rest"] = v, v, "x/"+v
		if _, err := fuzzPlans(t)[0].Build(t.Context(), args, nil, "t"); err != nil {
			t.Errorf("%q refused: %v", v, err)
		}
	}
}
