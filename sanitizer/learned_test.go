package sanitizer_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// learnedToken is shaped like an opaque OAuth2 access token.
const learnedToken = "OAUTH-TOKEN-XYZ789"

// TestLearnedSecretsEveryForm checks that a secret added to a Secrets set
// after the Redactor was built is masked like a configured secret: in
// every encoded form, by every method, in every kind of body.
func TestLearnedSecretsEveryForm(t *testing.T) {
	set := sanitizer.NewSecrets(0)
	r := newRedactor(t, sanitizer.Rules{Learned: set})
	in := "your token is " + learnedToken + " ok"
	if got := r.RedactString(in); got != in {
		t.Fatalf("before Add: RedactString(%q) = %q, want it unchanged", in, got)
	}
	if !set.Add(learnedToken) {
		t.Fatalf("Add(%q) = false", learnedToken)
	}
	if got, want := r.RedactString(in), "your token is "+testMask+" ok"; got != want {
		t.Errorf("RedactString(%q) = %q, want %q", in, got, want)
	}
	for _, tok := range []string{learnedToken, upstreamKey} { // upstreamKey: bytes that escaping and base64 treat specially
		set.Add(tok)
		for name, form := range encodedForms(tok) {
			t.Run(tok+"/"+name, func(t *testing.T) {
				text := "before " + form + " after"
				if got := r.RedactString(text); strings.Contains(got, form) {
					t.Errorf("RedactString(%q) = %q", text, got)
				}
				doc := `{"m":` + jsonString(text) + `}`
				if out, err := r.RedactJSON(nil, []byte(doc)); err != nil || strings.Contains(string(out), form) {
					t.Errorf("RedactJSON(%s) = %s, %v", doc, out, err)
				}
				for _, mt := range []string{"application/json", "text/plain", "application/xml", "text/html", "application/yaml", "image/png", "application/x-ndjson"} {
					body := text
					if mt == "application/json" || mt == "application/x-ndjson" {
						body = doc
					}
					if out, n := r.RedactBody(mt, []byte(body)); n == 0 || strings.Contains(string(out), form) {
						t.Errorf("RedactBody(%s, %q) = %q, %d masks", mt, body, out, n)
					}
				}
				if got := r.Redact(map[string]any{"m": text}); strings.Contains(fmt.Sprint(got), form) {
					t.Errorf("Redact = %v", got)
				}
				if !r.Contains([]byte(text)) {
					t.Errorf("Contains(%q) = false", text)
				}
			})
		}
	}
	// Forms only a form body or a query holds: the URL-escaped value in a
	// form field, the value as a UTF-16 body.
	form := "a=1&note=" + url.QueryEscape("x "+upstreamKey) + "&b=2"
	if out, _ := r.RedactBody("application/x-www-form-urlencoded", []byte(form)); strings.Contains(string(out), url.QueryEscape(upstreamKey)) {
		t.Errorf("RedactBody(form %q) = %q", form, out)
	}
	if out, _ := r.RedactBody("text/plain; charset=utf-16", []byte(utf16le("x "+learnedToken))); strings.Contains(string(out), utf16le(learnedToken)) {
		t.Errorf("RedactBody(utf-16) kept the token")
	}
	// A learned token counts for the tail cut text loses.
	if g := r.TailGuard(); g < len(learnedToken)-1 {
		t.Errorf("TailGuard = %d, shorter than the learned token (%d)", g, len(learnedToken))
	}
}

// TestLearnedEqualsConfigured checks that a learned secret is masked
// exactly as the same value configured in Rules.Secrets, next to other
// configured rules, for every body kind of the fuzz corpus.
func TestLearnedEqualsConfigured(t *testing.T) {
	rules := testRules()
	configured := rules
	configured.Secrets = append(append([]string(nil), rules.Secrets...), learnedToken)
	want := newRedactor(t, configured)
	set := sanitizer.NewSecrets(0)
	learned := rules
	learned.Learned = set
	got := newRedactor(t, learned)
	set.Add(learnedToken)
	b64 := base64.StdEncoding.EncodeToString([]byte("client:" + learnedToken))
	for _, s := range []string{
		learnedToken, "Bearer " + learnedToken, url.QueryEscape("t=" + learnedToken + "&x"), b64,
		`{"a":"` + learnedToken + `","token":"x","b":["` + secret + " " + learnedToken + `"]}`,
		"<x y=\"" + learnedToken + "\">" + b64 + "</x>", "k=" + learnedToken + "\nDB_PASSWORD=" + learnedToken,
		learnedToken[:4] + " " + learnedToken[4:], "nothing here",
	} {
		for _, mt := range []string{"application/json", "text/plain", "application/xml", "text/html", "application/x-www-form-urlencoded", "application/x-env", "image/png", ""} {
			w, wn := want.RedactBody(mt, []byte(s))
			g, gn := got.RedactBody(mt, []byte(s))
			if string(w) != string(g) || wn != gn {
				t.Errorf("RedactBody(%q, %q): learned %q (%d), configured %q (%d)", mt, s, g, gn, w, wn)
			}
		}
		if w, g := want.RedactString(s), got.RedactString(s); w != g {
			t.Errorf("RedactString(%q): learned %q, configured %q", s, g, w)
		}
	}
}

// TestLearnedRotation checks the bound: a set keeps its most recent
// values, re-adding one makes it recent again, and several Redactors share
// one set.
func TestLearnedRotation(t *testing.T) {
	set := sanitizer.NewSecrets(2)
	a := newRedactor(t, sanitizer.Rules{Learned: set})
	b := newRedactor(t, sanitizer.Rules{Learned: set, Keys: []string{"x"}, NoDefaults: true})
	masked := func(r *sanitizer.Redactor, tok string) bool { return r.RedactString("<"+tok+">") == "<"+testMask+">" }
	toks := []string{"token-one-1111", "token-two-2222", "token-three-3333"}
	for _, tok := range toks {
		set.Add(tok)
	}
	for _, r := range []*sanitizer.Redactor{a, b} {
		if masked(r, toks[0]) || !masked(r, toks[1]) || !masked(r, toks[2]) {
			t.Errorf("after three adds to a set of two: masked %t %t %t, want false true true",
				masked(r, toks[0]), masked(r, toks[1]), masked(r, toks[2]))
		}
	}
	set.Add(toks[1]) // recent again
	set.Add(toks[0]) // drops toks[2], the oldest now
	if !masked(a, toks[0]) || !masked(a, toks[1]) || masked(a, toks[2]) {
		t.Errorf("after re-adding: masked %t %t %t, want true true false", masked(a, toks[0]), masked(a, toks[1]), masked(a, toks[2]))
	}
	for _, v := range []string{"", "abc", "ACTED", "[REDACTED]"} {
		if set.Add(v) {
			t.Errorf("Add(%q) = true; want it ignored (too short or part of the mask)", v)
		}
	}
	if got := a.RedactString("abc REDACTED"); got != "abc REDACTED" {
		t.Errorf("RedactString = %q after ignored adds", got)
	}
}

// TestLearnedConcurrent adds secrets while other goroutines redact (the
// race detector checks the sharing) and checks that a secret is masked by
// every call that starts after Add returned.
func TestLearnedConcurrent(t *testing.T) {
	set := sanitizer.NewSecrets(4)
	r := newRedactor(t, sanitizer.Rules{Learned: set, Secrets: []string{secret}})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			doc := []byte(`{"a":"token-0001-abcdef token-0002-abcdef ` + secret + `"}`)
			for {
				select {
				case <-stop:
					return
				default:
				}
				out, err := r.RedactJSON(nil, doc)
				if err != nil || strings.Contains(string(out), secret) {
					t.Errorf("RedactJSON = %s, %v", out, err)
					return
				}
				r.RedactBody("text/plain", doc)
				r.RedactString(string(doc))
			}
		})
	}
	for i := range 50 {
		tok := fmt.Sprintf("token-%04d-abcdef", i)
		set.Add(tok)
		if got := r.RedactString("x " + tok); got != "x "+testMask {
			t.Errorf("right after Add(%q): %q", tok, got)
		}
	}
	close(stop)
	wg.Wait()
}

// TestLearnedNoAllocations checks that a set costs no allocation per call,
// empty or holding secrets (the extended tables are built once per Add).
func TestLearnedNoAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	set := sanitizer.NewSecrets(0)
	r := newRedactor(t, sanitizer.Rules{Learned: set, Secrets: []string{secret}})
	doc := []byte(`{"id":1,"name":"widget","tags":["a","b"],"url":"https://example.com/x"}`)
	dst := make([]byte, 0, 2*len(doc))
	for _, stage := range []string{"empty", "learned"} {
		if stage == "learned" {
			set.Add(learnedToken)
		}
		if a := testing.AllocsPerRun(50, func() { dst, _ = r.RedactJSON(dst[:0], doc) }); a != 0 {
			t.Errorf("%s set: RedactJSON allocates %v times on a clean document", stage, a)
		}
		if a := testing.AllocsPerRun(50, func() { r.RedactString("a clean string") }); a != 0 {
			t.Errorf("%s set: RedactString allocates %v times on a clean string", stage, a)
		}
	}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	return `"` + strings.NewReplacer(`"`, `\"`, `\`, `\\`).Replace(s) + `"`
}
