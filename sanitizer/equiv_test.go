package sanitizer_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// docGen writes random JSON documents: random white space, strings escaped
// at random (so tokens and secrets are sometimes split by escapes), and
// keys and strings drawn from pools rich in secrets and sensitive names.
type docGen struct {
	rnd *rand.Rand
	r   *sanitizer.Redactor
	b   bytes.Buffer
}

var (
	genKeys = []string{
		"id", "name", "url", "html_url", "created_at", "description", "items", "data", "meta",
		"token", "Token", "ACCESS_TOKEN", "accessToken", "refresh-token", "Password", "passwd",
		"x-api-key", "X_API_KEY", "Set-Cookie", "authorization", "clientSecret", "private_key",
		"token_type", "tokens_used", "csrfToken", "secrets", "x_session", "é", "",
		"name", "Name", "key", "value", "Value", "value", "name",
		ghToken, "key " + awsKey, "MASKED:" + skKey,
	}
	genPieces = []string{
		"hello", " ", "world", "a/b", "<b>", "&amp;", "\n", "\t", `"`, `\`, "é", "\u2028", "😀", "\x01", "\x7f",
		jwt, skKey, awsKey, ghToken, slack, secret, pemKey, "Bearer abcdefghijkl", "pk_live_abcdefghij",
		"passwd=xyz", "sk-", "eyJ", "-----BEGIN", "gh", "xox", "Bearer", "task-management-service-x",
		sanitizer.Mask, "[", "]", "password", "DB_PASSWORD", "api_key", "host",
	}
	genNumbers = []string{"0", "-1", "3.25", "1e10", "-0.5E-3", "12345678901234567890", "0.0"}
)

func (g *docGen) space() {
	for g.rnd.IntN(4) == 0 {
		g.b.WriteByte(" \t\n\r"[g.rnd.IntN(4)])
	}
}

func (g *docGen) str(s string) {
	g.b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			g.b.WriteByte('\\')
			g.b.WriteRune(c)
		case c < 0x20 && g.rnd.IntN(2) == 0:
			fmt.Fprintf(&g.b, `\u%04x`, c)
		case c == '\n':
			g.b.WriteString(`\n`)
		case c == '\t':
			g.b.WriteString(`\t`)
		case c < 0x20:
			fmt.Fprintf(&g.b, `\u%04X`, c)
		case c == '/' && g.rnd.IntN(2) == 0:
			g.b.WriteString(`\/`)
		case g.rnd.IntN(12) == 0:
			if c > 0xffff {
				r1, r2 := utf16.EncodeRune(c)
				fmt.Fprintf(&g.b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(&g.b, `\u%04x`, c)
			}
		default:
			g.b.WriteRune(c)
		}
	}
	g.b.WriteByte('"')
}

func (g *docGen) text() string {
	var s strings.Builder
	if g.rnd.IntN(10) == 0 {
		s.WriteString("MASKED:")
	}
	for n := g.rnd.IntN(5); n > 0; n-- {
		s.WriteString(genPieces[g.rnd.IntN(len(genPieces))])
	}
	return s.String()
}

func (g *docGen) value(depth int) {
	g.space()
	k := g.rnd.IntN(10)
	if depth > 4 {
		k = 9
	}
	switch k {
	case 0, 1:
		g.b.WriteByte('{')
		seen, seenRed := map[string]bool{}, map[string]bool{}
		first := true
		for n := g.rnd.IntN(6); n > 0; n-- {
			key := genKeys[g.rnd.IntN(len(genKeys))]
			red := g.r.RedactString(key)
			if seen[key] || seenRed[red] {
				continue
			}
			seen[key], seenRed[red] = true, true
			if !first {
				g.b.WriteByte(',')
			}
			first = false
			g.space()
			g.str(key)
			g.space()
			g.b.WriteByte(':')
			g.value(depth + 1)
		}
		g.space()
		g.b.WriteByte('}')
	case 2, 3:
		g.b.WriteByte('[')
		for i, n := 0, g.rnd.IntN(5); i < n; i++ {
			if i > 0 {
				g.b.WriteByte(',')
			}
			g.value(depth + 1)
		}
		g.space()
		g.b.WriteByte(']')
	case 4:
		g.b.WriteString(genNumbers[g.rnd.IntN(len(genNumbers))])
	case 5:
		g.b.WriteString([]string{"true", "false", "null"}[g.rnd.IntN(3)])
	default:
		g.str(g.text())
	}
	g.space()
}

// TestRedactJSONMatchesRedact checks on random documents that the output
// of RedactJSON is valid, compact and idempotent, and decodes to what
// Redact makes of the decoded input.
func TestRedactJSONMatchesRedact(t *testing.T) {
	r := newRedactor(t, testRules())
	g := &docGen{rnd: rand.New(rand.NewPCG(7, 11)), r: r}
	masked := 0
	for i := range 3000 {
		g.b.Reset()
		g.value(0)
		in := bytes.Clone(g.b.Bytes())
		out, err := r.RedactJSON(nil, in)
		if err != nil {
			t.Fatalf("doc %d: RedactJSON(%s): %v", i, in, err)
		}
		if bytes.Contains(out, []byte(sanitizer.Mask)) {
			masked++
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, out); err != nil || !bytes.Equal(compact.Bytes(), out) {
			t.Fatalf("doc %d: output is not compact JSON (%v):\n%s", i, err, out)
		}
		if again, err := r.RedactJSON(nil, out); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("doc %d: not idempotent:\n%s\n%s", i, out, again)
		}
		if diff := cmp.Diff(r.Redact(decode(t, in)), decode(t, out)); diff != "" {
			t.Fatalf("doc %d: RedactJSON(%s) = %s, differs from Redact (-Redact +RedactJSON):\n%s", i, in, out, diff)
		}
		if s := leaked(decode(t, out), secret); s != "" {
			t.Fatalf("doc %d: secret survived in %q of %s", i, s, out)
		}
	}
	if masked < 1000 {
		t.Errorf("only %d documents had something masked; the generator is too tame", masked)
	}
}

// leaked returns a string of the decoded value v (key or value) holding
// secret; "MASKED:" exempts nothing.
func leaked(v any, secret string) string {
	check := func(s string) string {
		if strings.Contains(s, secret) {
			return s
		}
		return ""
	}
	switch x := v.(type) {
	case string:
		return check(x)
	case []any:
		for _, e := range x {
			if s := leaked(e, secret); s != "" {
				return s
			}
		}
	case map[string]any:
		for k, e := range x {
			if s := check(k); s != "" {
				return s
			}
			if s := leaked(e, secret); s != "" {
				return s
			}
		}
	}
	return ""
}
