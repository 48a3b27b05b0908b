package sanitizer_test

import (
	"encoding/base64"
	"net/url"
	"testing"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// TestTrimPartialSecret: text ending inside a configured secret, or inside
// one of its encoded forms, loses that part; other text is kept.
func TestTrimPartialSecret(t *testing.T) {
	const secret = "open sesame/0123456789"
	r, err := sanitizer.New(sanitizer.Rules{Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), base64.StdEncoding.EncodeToString([]byte(secret))} {
		for k := 1; k < len(form); k++ {
			// As cut text goes: redacted, then trimmed.
			in := "head: " + form[:k]
			if got := string(r.TrimPartialSecret([]byte(r.RedactString(in)))); got != "head: " && got != "head: "+sanitizer.Mask {
				t.Fatalf("%q: got %q, want %q", in, got, "head: ")
			}
		}
	}
	for _, in := range []string{"", "plain text", "head: " + secret + "!", "ends with x"} {
		if got := string(r.TrimPartialSecret([]byte(in))); got != in {
			t.Errorf("%q became %q", in, got)
		}
	}
}
