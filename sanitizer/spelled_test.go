package sanitizer_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// TestSecretSpelledOut: a configured secret an upstream spells out byte
// by byte or character by character, or echoes with its case changed, is
// masked in text as in JSON; an unrelated hex string is left alone.
func TestSecretSpelledOut(t *testing.T) {
	const secret = "SECRET-KEY-123"
	r, err := sanitizer.New(sanitizer.Rules{Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	spell := func(form string) string {
		var b strings.Builder
		for _, c := range secret {
			fmt.Fprintf(&b, form, c)
		}
		return b.String()
	}
	for _, enc := range []string{
		spell("%%%02X"), spell("%%%02x"), spell("%02x"), spell("%02X"),
		spell(`\u%04x`), spell(`\u%04X`), spell("&#%d;"), spell("&#x%x;"), spell("&#x%X;"),
		strings.ToLower(secret), strings.ToUpper(strings.ToLower(secret)),
	} {
		for _, ct := range []string{"text/plain", "application/octet-stream"} {
			out, _ := r.RedactBody(ct, []byte("the key is "+enc+" ok"))
			if strings.Contains(string(out), enc) || !strings.Contains(string(out), sanitizer.Mask) && !strings.Contains(string(out), "****") {
				t.Errorf("%s: %q came back as %q", ct, enc, out)
			}
		}
		if got := r.RedactString("echo: " + enc); strings.Contains(got, enc) {
			t.Errorf("text: %q kept", enc)
		}
	}
	const sha = "a94a8fe5ccb19ba61c4c0873d391e987982fbbd3"
	if got := r.RedactString("commit " + sha); strings.Contains(got, sanitizer.Mask) {
		t.Errorf("unrelated hex masked: %q", got)
	}
}
