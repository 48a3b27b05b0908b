package sanitizer_test

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// TestTailGuard: text cut inside a configured secret, or inside one of its
// encoded forms, and shortened by TailGuard keeps no part of it; the
// amount is the same whatever the text ends with.
func TestTailGuard(t *testing.T) {
	const secret = "open sesame/0123456789"
	r, err := sanitizer.New(sanitizer.Rules{Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	g := r.TailGuard()
	forms := []string{secret, url.QueryEscape(secret), url.PathEscape(secret), base64.StdEncoding.EncodeToString([]byte(secret))}
	for _, form := range forms {
		if g < len(form)-1 {
			t.Fatalf("TailGuard %d < %d for the form %q", g, len(form)-1, form)
		}
		for k := 1; k < len(form); k++ {
			in := r.RedactString("head: " + strings.Repeat("x", 200) + form[:k])
			out := in[:max(0, len(in)-g)]
			for _, f := range forms {
				for j := 1; j < len(f); j++ {
					if strings.HasSuffix(out, f[:j]) {
						t.Fatalf("%q kept %q of a secret's form", out, f[:j])
					}
				}
			}
		}
	}
	none, err := sanitizer.New(sanitizer.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	if g := none.TailGuard(); g != 0 {
		t.Errorf("TailGuard without secrets = %d, want 0", g)
	}
}
