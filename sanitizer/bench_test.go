package sanitizer_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

var words = strings.Fields(`the a bug fix feature request when after before with without error
	crash login page button click user account settings update release version build test
	deploy server client timeout retry cache memory leak slow fast improve docs example
	support issue pull merge branch commit review approve close open label milestone`)

// apiDoc builds a GitHub-like list of issues of at least size bytes
// (compact JSON from encoding/json); with secrets, one item in 40 carries
// a token, a JWT in its body and a password member.
func apiDoc(size int, secrets bool) []byte {
	rnd := rand.New(rand.NewPCG(1, 2))
	sentence := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[rnd.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
	if size <= 256 {
		doc := map[string]any{
			"id": 1234, "name": "widget", "status": "active", "created_at": "2024-05-01T12:00:00Z",
			"tags": []any{"a", "b"}, "owner": map[string]any{"login": "octocat", "id": 42},
			"url": "https://api.example.com/widgets/1234", "price": 12.5,
		}
		if secrets {
			doc["token"] = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
		}
		b, _ := json.Marshal(doc)
		return b
	}
	var items []any
	n := 0
	for i := 0; n < size; i++ {
		num := 1000 + i
		body := sentence(20) + ".\n\n## Steps\n1. " + sentence(8) + "\n2. " + sentence(6) + "\n\nSee https://example.com/x?a=1&b=2 for details."
		item := map[string]any{
			"url":      fmt.Sprintf("https://api.github.com/repos/octo-org/octo-repo/issues/%d", num),
			"html_url": fmt.Sprintf("https://github.com/octo-org/octo-repo/issues/%d", num),
			"id":       rnd.Int64N(1 << 40), "node_id": fmt.Sprintf("MDU6SXNzdWUx%08d", num),
			"number": num, "title": sentence(6), "state": []string{"open", "closed"}[rnd.IntN(2)],
			"locked": false, "assignee": nil, "comments": rnd.IntN(50), "score": rnd.Float64() * 10,
			"created_at": "2011-04-22T13:33:48Z", "updated_at": "2011-04-22T13:33:48Z", "closed_at": nil,
			"author_association": "COLLABORATOR", "body": body,
			"user": map[string]any{
				"login": "octocat", "id": 1, "node_id": "MDQ6VXNlcjE=", "type": "User", "site_admin": false,
				"avatar_url":    "https://github.com/images/error/octocat_happy.gif",
				"followers_url": "https://api.github.com/users/octocat/followers",
			},
			"labels": []any{
				map[string]any{"id": 208045946, "name": "bug", "color": "f29513", "default": true, "description": "Something isn't working"},
				map[string]any{"id": 208045947, "name": "enhancement", "color": "a2eeef", "default": false, "description": "New feature or request"},
			},
			"reactions": map[string]any{"total_count": 3, "+1": 2, "-1": 0, "laugh": 1, "hooray": 0},
		}
		if secrets && i%40 == 7 {
			item["token"] = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
			item["password"] = 12345
			item["body"] = body + " Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
		}
		b, _ := json.Marshal(item)
		n += len(b) + 1
		items = append(items, item)
	}
	b, _ := json.Marshal(items)
	return b
}

func BenchmarkRedactJSON(b *testing.B) {
	r, err := sanitizer.New(sanitizer.Rules{Secrets: []string{"s3cr3t-upstream-key"}})
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{200, 16 << 10, 1 << 20} {
		for _, secrets := range []bool{false, true} {
			doc := apiDoc(size, secrets)
			name := fmt.Sprintf("%s/secrets=%t", sizeName(size), secrets)
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				dst := make([]byte, 0, len(doc))
				for b.Loop() {
					var err error
					if dst, err = r.RedactJSON(dst[:0], doc); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkValidJSON is the yardstick: encoding/json's validator alone.
func BenchmarkValidJSON(b *testing.B) {
	doc := apiDoc(1<<20, false)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if !json.Valid(doc) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkRedactString(b *testing.B) {
	r, err := sanitizer.New(sanitizer.Rules{Secrets: []string{"s3cr3t-upstream-key"}})
	if err != nil {
		b.Fatal(err)
	}
	plain := strings.Repeat("upstream said: request failed with status 502 while calling the billing service; retry later. ", 40)
	withSecret := plain + "Authorization: Bearer abcdefghijklmnop1234 key=sk-proj-abcdefghijklmnopqrstuvwxyz"
	for name, s := range map[string]string{"plain": plain, "secrets": withSecret} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				_ = r.RedactString(s)
			}
		})
	}
}

func BenchmarkRedact(b *testing.B) {
	r, err := sanitizer.New(sanitizer.Rules{})
	if err != nil {
		b.Fatal(err)
	}
	doc := apiDoc(16<<10, true)
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Redact(v)
	}
}

func sizeName(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// BenchmarkRedactJSONSpecs runs on the real JSON documents of the shared
// corpus (GitHub's 13 MB OpenAPI description among them): long strings,
// deep nesting and many escapes.
func BenchmarkRedactJSONSpecs(b *testing.B) {
	r, err := sanitizer.New(sanitizer.Rules{})
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"github-api.3.0.json", "jira-platform.3.0.json", "digitalocean.3.0.json"} {
		doc, err := os.ReadFile(filepath.Join("..", "testdata", "specs", name))
		if err != nil {
			b.Skipf("corpus not available: %v", err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			dst := make([]byte, 0, len(doc))
			for b.Loop() {
				if dst, err = r.RedactJSON(dst[:0], doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRedactBody runs RedactBody on a body of each kind, clean, with
// a configured secret as the bridge has one.
func BenchmarkRedactBody(b *testing.B) {
	r, err := sanitizer.New(sanitizer.Rules{Secrets: []string{"s3cr3t-upstream-key"}})
	if err != nil {
		b.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	bin := make([]byte, 1<<20)
	for i := range bin {
		bin[i] = byte(rnd.Uint32())
	}
	var xml, form strings.Builder
	xml.WriteString("<items>")
	for i := 0; xml.Len() < 64<<10; i++ {
		fmt.Fprintf(&xml, `<item id="%d" state="open"><title>%s</title><body>%s</body></item>`, i, words[i%len(words)], strings.Join(words[:20], " "))
	}
	xml.WriteString("</items>")
	for i := 0; form.Len() < 16<<10; i++ {
		fmt.Fprintf(&form, "field%d=%s&", i, strings.Join(words[i%40:i%40+3], "+"))
	}
	text := strings.Repeat("upstream said: request failed with status 502 while calling the billing service; retry later. ", 700)
	for _, c := range []struct{ name, mt, body string }{
		{"json-16KiB", "application/json", string(apiDoc(16<<10, false))},
		{"text-64KiB", "text/plain", text},
		{"xml-64KiB", "application/xml", xml.String()},
		{"form-16KiB", "application/x-www-form-urlencoded", form.String()},
		{"binary-1MiB", "image/png", string(bin)},
	} {
		body := []byte(c.body)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				r.RedactBody(c.mt, body)
			}
		})
	}
}

// BenchmarkRedactJSONLearned is BenchmarkRedactJSON for a bridge with an
// OAuth2 grant: besides the configured secret, a Secrets set holding
// DefaultKeep rotated access tokens.
func BenchmarkRedactJSONLearned(b *testing.B) {
	set := sanitizer.NewSecrets(0)
	r, err := sanitizer.New(sanitizer.Rules{Secrets: []string{"s3cr3t-upstream-key"}, Learned: set})
	if err != nil {
		b.Fatal(err)
	}
	for i := range sanitizer.DefaultKeep {
		set.Add(fmt.Sprintf("at-%02d-Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZg", i))
	}
	for _, size := range []int{16 << 10, 1 << 20} {
		doc := apiDoc(size, true)
		b.Run(sizeName(size), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			dst := make([]byte, 0, len(doc))
			for b.Loop() {
				if dst, err = r.RedactJSON(dst[:0], doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
