package sanitizer_test

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// upstreamKey is a configured credential holding the bytes URL escaping
// and base64 treat specially.
const upstreamKey = "k3y+/=Zq9 v&<x>"

// encodedForms are the forms of s an upstream may echo.
func encodedForms(s string) map[string]string {
	forms := map[string]string{
		"raw":           s,
		"query-escaped": url.QueryEscape(s),
		"path-escaped":  url.PathEscape(s),
		"lower hex":     regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(url.QueryEscape(s), strings.ToLower),
		"base64 std":    base64.StdEncoding.EncodeToString([]byte(s)),
		"base64 url":    base64.URLEncoding.EncodeToString([]byte(s)),
		"base64 raw":    base64.RawStdEncoding.EncodeToString([]byte(s)),
		"base64 rawurl": base64.RawURLEncoding.EncodeToString([]byte(s)),
		"basic auth":    base64.StdEncoding.EncodeToString([]byte("octocat:" + s)),
		"basic auth 2":  base64.StdEncoding.EncodeToString([]byte("bob:" + s)),
		"basic auth 3":  base64.StdEncoding.EncodeToString([]byte("al:" + s)),
		"b64 inside":    base64.StdEncoding.EncodeToString([]byte(`{"key":"` + s + `","n":1}`)),
	}
	return forms
}

func TestSecretVariants(t *testing.T) {
	r := newRedactor(t, sanitizer.Rules{Secrets: []string{upstreamKey}})
	for name, form := range encodedForms(upstreamKey) {
		t.Run(name, func(t *testing.T) {
			in := "before " + form + " after"
			got := r.RedactString(in)
			if strings.Contains(got, form) || !strings.Contains(got, sanitizer.Mask) {
				t.Errorf("RedactString(%q) = %q: the %s form survived", in, got, name)
			}
			if !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
				t.Errorf("RedactString(%q) = %q: masked around the secret", in, got)
			}
			doc := `{"m":"` + strings.NewReplacer(`"`, `\"`, `\`, `\\`).Replace(in) + `"}`
			out, err := r.RedactJSON(nil, []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), form) {
				t.Errorf("RedactJSON(%s) = %s: the %s form survived", doc, out, name)
			}
		})
	}
	// The base64 match covers the whole encoded credential.
	basic := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("octocat:"+upstreamKey))
	if got, want := r.RedactString(basic), "Authorization: Basic "+sanitizer.Mask; got != want {
		t.Errorf("RedactString(%q) = %q, want %q", basic, got, want)
	}
	// Ordinary base64 and text stay.
	for _, s := range []string{"aGVsbG8gd29ybGQ=", "k3y", "Zq9 v", "https://example.com/a%2Bb"} {
		if got := r.RedactString(s); got != s {
			t.Errorf("RedactString(%q) = %q, want it unchanged", s, got)
		}
	}
}

// TestShortSecretBase64 checks that a 4-byte secret, too short for its
// base64 forms to be looked for inside other data, is still found encoded
// alone.
func TestShortSecretBase64(t *testing.T) {
	r := newRedactor(t, sanitizer.Rules{Secrets: []string{"pa55"}})
	enc := base64.StdEncoding.EncodeToString([]byte("pa55"))
	if got := r.RedactString("x " + enc + " y"); got != "x "+sanitizer.Mask+" y" {
		t.Errorf("RedactString(%q) = %q", "x "+enc+" y", got)
	}
}
