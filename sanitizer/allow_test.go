package sanitizer_test

import (
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// TestAllowKeys checks Rules.AllowKeys: the named members keep their
// values in every body kind the key rules cover, other sensitive members
// are still masked, and configured secrets and value patterns are masked
// inside the allowed values too.
func TestAllowKeys(t *testing.T) {
	const cred = "cfg-cred-8f14e45fceea167a5a36"
	r := newRedactor(t, sanitizer.Rules{AllowKeys: []string{"token", "Api-Key"}, Keys: []string{"ssn"}, Secrets: []string{cred}})
	strict := newRedactor(t, sanitizer.Rules{Keys: []string{"ssn"}, Secrets: []string{cred}})
	for _, k := range []string{"token", "TOKEN", "api_key", "apiKey"} {
		if r.IsSensitiveKey(k) {
			t.Errorf("IsSensitiveKey(%q) with AllowKeys = true; want false", k)
		}
	}
	for _, k := range []string{"password", "access_token", "ssn", "client_secret"} {
		if !r.IsSensitiveKey(k) {
			t.Errorf("IsSensitiveKey(%q) with AllowKeys = false; want true", k)
		}
	}
	tests := []struct {
		mediaType, body string
		keep, mask      []string // substrings kept / gone
	}{
		{"application/json", `{"token":"tok-visible-1","password":"pw-hidden-1","api_key":"key-visible-2","access_token":"at-hidden-2","note":"` + cred + `"}`,
			[]string{"tok-visible-1", "key-visible-2"}, []string{"pw-hidden-1", "at-hidden-2", cred}},
		{"application/json", `{"token":"` + cred + `","list":[{"name":"token","value":"pair-visible"},{"name":"password","value":"pair-hidden"}]}`,
			[]string{"pair-visible"}, []string{cred, "pair-hidden"}},
		{"application/json", `{"token":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"}`,
			nil, []string{"eyJhbGciOiJIUzI1NiJ9"}},
		{"application/xml", `<r><token>xml-visible</token><password>xml-hidden</password><a token="attr-visible" secret="attr-hidden"/></r>`,
			[]string{"xml-visible", "attr-visible"}, []string{"xml-hidden", "attr-hidden"}},
		{"application/x-www-form-urlencoded", `token=form-visible&password=form-hidden&x=` + cred,
			[]string{"form-visible"}, []string{"form-hidden", cred}},
		{"text/plain", `"token": "text-visible", "password": "text-hidden"`,
			[]string{"text-visible"}, []string{"text-hidden"}},
	}
	for _, tc := range tests {
		out, _ := r.RedactBody(tc.mediaType, []byte(tc.body))
		for _, s := range tc.keep {
			if !strings.Contains(string(out), s) {
				t.Errorf("%s %s: %q was masked: %s", tc.mediaType, tc.body, s, out)
			}
		}
		for _, s := range tc.mask {
			if strings.Contains(string(out), s) {
				t.Errorf("%s %s: %q survived: %s", tc.mediaType, tc.body, s, out)
			}
		}
		// Without AllowKeys every one of them is masked.
		out, _ = strict.RedactBody(tc.mediaType, []byte(tc.body))
		for _, s := range append(tc.keep, tc.mask...) {
			if strings.Contains(string(out), s) {
				t.Errorf("without AllowKeys, %s %s: %q survived: %s", tc.mediaType, tc.body, s, out)
			}
		}
	}
}
