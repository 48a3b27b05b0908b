package schema

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// patternCases are real-spec patterns and the dialect traps around them:
// want is the rewrite, "" when the pattern must be dropped. probes are
// strings on which the original (when Go compiles it) and the rewrite must
// agree.
var patternCases = []struct {
	in, want string
	probes   []string
}{
	{`^[a-z]+$`, `^[a-z]+$`, []string{"abc", "aB"}},
	{`^[a-zA-Z0-9\-\_]+$`, `^[a-zA-Z0-9\-_]+$`, []string{"a-b_c", "a b"}},
	{`^[a-zA-Z0-9\-\_]`, `^[a-zA-Z0-9\-_]`, []string{"_x", " x"}},
	{`^\w+\_\d+$`, `^\w+_\d+$`, []string{"ab_12", "ab-12"}},
	{`^\d{3}\-\d{4}$`, `^\d{3}-\d{4}$`, []string{"555-1234", "5551234"}},
	{`^https?:\/\/`, `^https?:\/\/`, []string{"https://x", "ftp://"}},
	{`^[\w.\-]+@[\w\-]+\.[a-z]{2,}$`, `^[\w.\-]+@[\w\-]+\.[a-z]{2,}$`, []string{"a.b@c-d.io", "a@b"}},
	{`^[\w-.]+$`, `^[\w\-.]+$`, []string{"a-b.c", "a b"}},
	{`^(?P<year>\d{4})-(?P<month>\d{2})$`, `^(?<year>\d{4})-(?<month>\d{2})$`, []string{"2024-01", "24-1"}},
	{`^(?<id>[0-9]+)$`, `^(?<id>[0-9]+)$`, []string{"12", "x"}},
	{`(?i)^[a-f0-9]+$`, "", nil},
	{`^(?i:abc)$`, "", nil},
	{`^(?!abc).*$`, "", nil},
	{`^(?<=a)b`, "", nil},
	{`^(a)\1$`, "", nil},
	{`^a*+$`, "", nil},
	{`^{[a-z]+}$`, `^\{[a-z]+\}$`, []string{"{ab}", "ab"}},
	{`^a{,3}$`, `^a\{,3\}$`, []string{"a{,3}", "aa"}},
	{`^x{2,3}?$`, `^x{2,3}?$`, []string{"xx", "x"}},
	{`^[]a]+$`, `^[\]a]+$`, []string{"]a", "b"}},
	{`^[^]a]$`, `^[^\]a]$`, []string{"b", "]"}},
	{`^[[:alpha:]][[:digit:]_]*$`, `^[A-Za-z][0-9_]*$`, []string{"a1_", "1a"}},
	{`^[[:^alpha:]]$`, "", nil},
	{`^\p{L}+$`, `^\p{L}+$`, []string{"héllo", "h1"}},
	{`^\pL\pN$`, `^\p{L}\p{N}$`, []string{"a1", "1a"}},
	{`^\p{Greek}+$`, "", nil},
	{`^\p{^Lu}$`, `^\P{Lu}$`, []string{"a", "A"}},
	{`^\u00e9t\u00e9$`, `^été$`, nil},
	{`^\u{1F600}$`, "^\U0001F600$", nil},
	{`^\x{41}\x42$`, `^AB$`, []string{"AB", "ab"}},
	{`^\uD83D\uDE00$`, "^\U0001F600$", nil},
	{`\AABC\z`, `^ABC$`, []string{"ABC", "xABC"}},
	{`^a\ b\#c\<d\>$`, `^a b#c<d>$`, []string{"a b#c<d>", "ab"}},
	{`^[\ \#\'\"]+$`, `^[ #'"]+$`, []string{"# '", "x"}},
	{`^[\^\[\]\\]$`, `^[\^\[\]\\]$`, []string{"^", "]", "a"}},
	{`^\$\d+\.\d{2}$`, `^\$\d+\.\d{2}$`, []string{"$1.00", "1.00"}},
	{`^\Qa.b\E$`, "", nil},
	{`^\cA$`, "", nil},
	{`^\e$`, "", nil},
	{`^\012$`, `^\x0A$`, []string{"\n", "0"}},
	{`^\0$`, `^\x00$`, []string{"\x00", "0"}},
	{`^a]$`, `^a\]$`, []string{"a]", "a"}},
	{`^[a-]$`, `^[a-]$`, []string{"-", "b"}},
	{`^[-a]$`, `^[-a]$`, []string{"-", "b"}},
	{`^[a-z-0]$`, `^[a-z\-0]$`, []string{"-", "0", "b", "1"}},
	{`^[a-\d]$`, "", nil},
	{`^[z-a]$`, "", nil},
	{`^(?P<1x>a)$`, "", nil},
	{`^(a|b$`, "", nil},
	{`^a{1001}$`, "", nil}, // JavaScript accepts it, Go does not
	{"^a\nb$", "^a\nb$", []string{"a\nb", "ab"}},
	{`^\p{Lu}[\p{Ll}\d-]*$`, `^\p{Lu}[\p{Ll}\d-]*$`, []string{"Ab1-", "ab"}},
}

// jsSemanticsCases are patterns whose meaning differs between the
// dialects as written, on the probes given: '.' (JavaScript stops at \r,
// U+2028 and U+2029 too) and \s, \S (JavaScript's spaces include \v,
// U+00A0, U+FEFF, U+2028...). The rewrite must read them as JavaScript
// does, in Go (TestPatternJavaScript compares the two), so that a value
// the bridge accepts a JavaScript client accepts too.
var jsSemanticsCases = []struct {
	in, want string
	probes   []string
}{
	{`^.+$`, "", []string{"ab", "a\rb", "a\u2028b", "a\u2029b", "a\nb", "\u00e9"}},
	{`^\S+$`, "", []string{"ab", "a\u00a0b", "a\vb", "a\ufeffb", "a\u3000b", "a b"}},
	{`^\s$`, "", []string{" ", "\v", "\u00a0", "\u2028", "\ufeff", "x"}},
	{`^[\sa]+$`, "", []string{"a a", "a\u00a0a", "a\va", "ab"}},
	{`^a.c\s?$`, "", []string{"abc", "a\rc", "abc\u00a0"}},
}

// TestPatternDotSpace pins the rewrite of '.' and \s, \S.
func TestPatternDotSpace(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`^.+$`, "^" + jsDot + "+$"},
		{`^\s\S$`, "^[" + jsSpaces + "][^" + jsSpaces + "]$"},
		{`^[\s\d]$`, "^[" + jsSpaces + `\d]$`},
		{`^[.]$`, `^[.]$`},
	} {
		if got, ok, why := Pattern(c.in); !ok || got != c.want {
			t.Errorf("Pattern(%q) = %q, %v (%s), want %q", c.in, got, ok, why, c.want)
		}
	}
}

func TestPattern(t *testing.T) {
	for _, c := range patternCases {
		got, ok, why := Pattern(c.in)
		if c.want == "" {
			if ok {
				t.Errorf("Pattern(%q) = %q, want it dropped", c.in, got)
			} else if why == "" {
				t.Errorf("Pattern(%q) dropped without a reason", c.in)
			}
			continue
		}
		if !ok || got != c.want {
			t.Errorf("Pattern(%q) = %q, %v (%s), want %q", c.in, got, ok, why, c.want)
			continue
		}
		orig, err := regexp.Compile(c.in)
		if err != nil {
			continue // Go rejected the original: nothing to agree with
		}
		re := regexp.MustCompile(got)
		for _, p := range c.probes {
			if orig.MatchString(p) != re.MatchString(p) {
				t.Errorf("Pattern(%q) = %q: on %q the original says %v, the rewrite %v", c.in, got, p, orig.MatchString(p), re.MatchString(p))
			}
		}
	}
}

// TestPatternJavaScript compiles every rewrite with new RegExp(p, "u") in
// Node.js, what the TypeScript SDK's Ajv does, and checks that JavaScript
// matches the probes as Go does. Skipped without node on PATH.
func TestPatternJavaScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH")
	}
	type jsCase struct {
		P      string   `json:"p"`
		Probes []string `json:"probes"`
	}
	var cases []jsCase
	for _, c := range append(patternCases, jsSemanticsCases...) {
		if got, ok, _ := Pattern(c.in); ok {
			cases = append(cases, jsCase{P: got, Probes: c.probes})
		}
	}
	in, _ := json.Marshal(cases)
	script := `const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map(c => { try { const re = new RegExp(c.p, "u"); return {ok: true, m: (c.probes||[]).map(p => re.test(p))}; } catch (e) { return {ok: false, err: e.message}; } });
process.stdout.write(JSON.stringify(out));`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = strings.NewReader(string(in))
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var res []struct {
		OK  bool   `json:"ok"`
		M   []bool `json:"m"`
		Err string `json:"err"`
	}
	if err := json.Unmarshal(outb, &res); err != nil || len(res) != len(cases) {
		t.Fatalf("node output %s: %v", outb, err)
	}
	for i, c := range cases {
		if !res[i].OK {
			t.Errorf("JavaScript rejects %q: %s", c.P, res[i].Err)
			continue
		}
		re := regexp.MustCompile(c.P)
		for j, p := range c.Probes {
			if re.MatchString(p) != res[i].M[j] {
				t.Errorf("%q on %q: Go says %v, JavaScript %v", c.P, p, re.MatchString(p), res[i].M[j])
			}
		}
	}
}

// TestPatternCorpus rewrites every `pattern` and patternProperties key of
// the corpus specs and, with node on PATH, checks that JavaScript compiles
// every rewrite in Unicode mode: no spec of the corpus can break a
// JavaScript client's tools/list through a pattern.
func TestPatternCorpus(t *testing.T) {
	paths, err := filepath.Glob("../../testdata/specs/*.*.*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no specs: %v", err)
	}
	seen := map[string]bool{}
	var pats []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if p, ok := e.(string); ok && k == "pattern" && !seen[p] {
					seen[p] = true
					pats = append(pats, p)
				}
				if m, ok := e.(map[string]any); ok && k == "patternProperties" {
					for p := range m {
						if !seen[p] {
							seen[p] = true
							pats = append(pats, p)
						}
					}
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, path := range paths {
		data := schemaTestMustRead(t, path)
		var doc any
		if strings.HasSuffix(path, ".json") {
			err = json.Unmarshal(data, &doc)
		} else {
			err = yaml.Unmarshal(data, &doc)
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		walk(doc)
	}
	slices.Sort(pats)
	var kept []string
	rewritten, dropped := 0, 0
	for _, p := range pats {
		out, ok, why := Pattern(p)
		switch {
		case !ok:
			dropped++
			t.Logf("dropped %q: %s", p, why)
		case out != p:
			rewritten++
			t.Logf("rewritten %q → %q", p, out)
		}
		if ok {
			kept = append(kept, out)
		}
	}
	t.Logf("corpus: %d distinct patterns, %d rewritten, %d dropped", len(pats), rewritten, dropped)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH: JavaScript not checked")
	}
	in, _ := json.Marshal(kept)
	script := `const ps = JSON.parse(require("fs").readFileSync(0, "utf8"));
const bad = []; for (const p of ps) { try { new RegExp(p, "u"); } catch (e) { bad.push(p + "  →  " + e.message); } }
process.stdout.write(JSON.stringify(bad));`
	cmd := exec.Command(node, "-e", script)
	cmd.Stdin = strings.NewReader(string(in))
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var bad []string
	if err := json.Unmarshal(outb, &bad); err != nil {
		t.Fatalf("node output %s: %v", outb, err)
	}
	for _, b := range bad {
		t.Errorf("JavaScript rejects a kept pattern: %s", b)
	}
}
