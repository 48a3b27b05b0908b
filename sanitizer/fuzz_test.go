package sanitizer_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fuzzSeeds are documents and texts that exercise every rule.
var fuzzSeeds = []string{
	``, `{}`, `[]`, `null`, `"x"`, `0`, `-1.5e+3`, `{"a":[1,2,{"b":null}]}`,
	`{"token":"abc","password":{"x":[1]},"token_type":"bearer"}`,
	`{"Authorization":"Bearer abcdefghijklmnop","msg":"Bearer abcdefghijklmnop"}`,
	`["` + jwt + `","` + skKey + `","` + awsKey + `","` + ghToken + `","` + slack + `"]`,
	`{"s":"x` + secret + `x","k":"pk_live_abcdefghij","p":"passwd=abc&b=1"}`,
	`{"key":"` + strings.ReplaceAll(pemKey, "\n", `\n`) + `"}`,
	`{"k":"sk-\u0070roj-abcdefghijklmnopqrstuvwxyz","s":"hun\u0074er2-S3cr3t"}`,
	`{"password":"MASKED:abc","m":"MASKED:` + skKey + `"}`,
	`{"\u0074oken":"x","` + ghToken + `":1}`,
	"[\"\xff\\n\\ud800 " + secret + "\"]",
	` { "a" : [ true , false ] } `, `{"a":1}x`, `[1,]`, `"\x"`, "\"\x01\"", `01`, `{"a"`, `"\ud83d\ude00"`,
	"Authorization: Bearer " + jwt + "\n" + secret + " " + pemKey,
	`{"u":"https://x/cb?a=1&access_token=abc#f;Password=p; session_token=q&amp;token=z)&token=MASKED:x"}`,
	`["sk_live_51H8xYzAbCdEfGhIjKlMnOp","AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe","npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789","glpat-AbCdEfGhIjKlMnOpQr12"]`,
}

// checkNoSecret fails t when the configured secret survives in v.
func checkNoSecret(t *testing.T, v any) {
	t.Helper()
	if s := leaked(v, secret); s != "" {
		t.Fatalf("secret survived in %q", s)
	}
}

// FuzzRedactJSON: never panics; accepts exactly what json.Valid accepts;
// writes valid compact JSON; is idempotent; masks the configured secret;
// agrees with Redact on the decoded input.
func FuzzRedactJSON(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	r := newRedactor(f, testRules())
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := r.RedactJSON(nil, in)
		if valid := json.Valid(in); (err == nil) != valid {
			t.Fatalf("RedactJSON(%q) error = %v; json.Valid = %t", in, err, valid)
		}
		if err != nil {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, out); err != nil || !bytes.Equal(compact.Bytes(), out) {
			t.Fatalf("RedactJSON(%q) = %q: not compact JSON (%v)", in, out, err)
		}
		again, err := r.RedactJSON(nil, out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q -> %q -> %q (%v)", in, out, again, err)
		}
		got := decode(t, out)
		checkNoSecret(t, got)
		// Redact cannot tell two keys apart once they redact to the same
		// text, so compare only when no key changes.
		// Nor when a key repeats: decoding keeps the last one only.
		want := decode(t, in)
		if !keysChange(r.RedactString, want) && !dupKeys(in) {
			if diff := cmp.Diff(r.Redact(want), got); diff != "" {
				t.Fatalf("RedactJSON(%q) = %q differs from Redact (-Redact +RedactJSON):\n%s", in, out, diff)
			}
		}
	})
}

// FuzzRedact: RedactString and Redact never panic, are idempotent and mask
// the configured secret.
func FuzzRedact(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	r := newRedactor(f, testRules())
	f.Fuzz(func(t *testing.T, s string) {
		got := r.RedactString(s)
		if again := r.RedactString(got); again != got {
			t.Fatalf("RedactString not idempotent: %q -> %q -> %q", s, got, again)
		}
		// "MASKED:" turns nothing off in text.
		if m := r.RedactString("MASKED:" + s); m != "MASKED:"+got {
			t.Fatalf("RedactString(MASKED:%q) = %q, want MASKED:%q", s, m, got)
		}
		checkNoSecret(t, got)

		v := []any{s, map[string]any{"password": s, "k": s, "n": []any{s, 1.5, nil}}}
		red := r.Redact(v)
		if diff := cmp.Diff(red, r.Redact(red)); diff != "" {
			t.Fatalf("Redact not idempotent (-once +twice):\n%s", diff)
		}
		checkNoSecret(t, red)
	})
}

// dupKeys reports whether an object of the valid JSON document doc has two
// members of the same name.
func dupKeys(doc []byte) bool {
	d := json.NewDecoder(bytes.NewReader(doc))
	type obj struct {
		keys  map[string]bool
		inObj bool
		isKey bool
	}
	var stack []*obj
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isKey := top != nil && top.inObj && top.isKey
		if top != nil && top.inObj {
			top.isKey = !top.isKey
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &obj{keys: map[string]bool{}, inObj: true, isKey: true})
			case '[':
				stack = append(stack, &obj{})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].inObj {
					stack[len(stack)-1].isKey = true
				}
			}
		case string:
			if isKey {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
			}
		}
	}
}

// keysChange reports whether redact changes some object key in v.
func keysChange(redact func(string) string, v any) bool {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if keysChange(redact, e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if redact(k) != k || keysChange(redact, e) {
				return true
			}
		}
	}
	return false
}
