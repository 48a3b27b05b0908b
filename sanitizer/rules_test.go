package sanitizer_test

import (
	"encoding/json"
	"errors"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// Tokens shaped like the real ones (none of them is live).
const (
	jwt       = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	skKey     = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345"
	awsKey    = "AKIAIOSFODNN7EXAMPLE"
	ghToken   = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	slack     = "xoxb-123456789012-abcdefGHIJKL"
	secret    = "hunter2-S3cr3t"
	pemKey    = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\n+/abc==\n-----END RSA PRIVATE KEY-----"
	testMask  = sanitizer.Mask
	maskedStr = "MASKED:" + skKey
)

// testRules is the configuration most tests use: the defaults plus one of
// each configurable rule.
func testRules() sanitizer.Rules {
	return sanitizer.Rules{
		Keys:     []string{"X-Session"},
		Patterns: []string{`(?i)passwd=[^\s&"]+`},
		Prefixes: []string{"pk_live_"},
		Secrets:  []string{secret, "abc", ""},
	}
}

func newRedactor(t testing.TB, r sanitizer.Rules) *sanitizer.Redactor {
	t.Helper()
	red, err := sanitizer.New(r)
	if err != nil {
		t.Fatalf("New(%+v): %v", r, err)
	}
	return red
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name  string
		rules sanitizer.Rules
		want  string // substring of the error; "" means no error
	}{
		{"zero", sanitizer.Rules{}, ""},
		{"no defaults, nothing", sanitizer.Rules{NoDefaults: true}, ""},
		{"good pattern", sanitizer.Rules{Patterns: []string{`secret-\d+`}}, ""},
		{"bad pattern", sanitizer.Rules{Patterns: []string{`a(`}}, "compiling pattern"},
		{"empty match", sanitizer.Rules{Patterns: []string{`\d*`}}, "matches the empty string"},
		{"matches mask", sanitizer.Rules{Patterns: []string{`RED`}}, "matches inside [REDACTED]"},
		{"prefix with bracket", sanitizer.Rules{Prefixes: []string{"x]"}}, "must not contain"},
		{"empty prefix ignored", sanitizer.Rules{Prefixes: []string{""}}, ""},
		{"long key", sanitizer.Rules{Keys: []string{strings.Repeat("k", 64)}}, "longer than 63 bytes"},
		{"63-byte key", sanitizer.Rules{Keys: []string{strings.Repeat("k", 63)}}, ""},
		{"separators only key ignored", sanitizer.Rules{Keys: []string{"-_-"}}, ""},
		{"every problem", sanitizer.Rules{Patterns: []string{`a(`, `x*`}, Prefixes: []string{"["}}, "`a(`\n" + `pattern "x*" matches the empty string` + "\n" + `prefix "["`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sanitizer.New(tt.rules)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tt.want == "" && err != nil || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("New(%+v) error = %q, want containing %q", tt.rules, got, tt.want)
			}
		})
	}
	_, err := sanitizer.New(sanitizer.Rules{Patterns: []string{`a(`}})
	var se *syntax.Error
	if !errors.As(err, &se) {
		t.Errorf("bad pattern error %v does not wrap *syntax.Error", err)
	}
}

func TestRedactKeys(t *testing.T) {
	r := newRedactor(t, testRules())
	in := map[string]any{
		"password":  "pw",
		"Token":     float64(1),
		"X-Api-Key": []any{"a", "b"},
		"client_secret": map[string]any{
			"a": "b",
		},
		"CLIENT-SECRET": nil,
		"apikey":        true,
		"token_type":    "bearer",
		"tokens_used":   float64(5),
		"csrfToken":     "keep",
		"x_session":     "configured key",
		"refresh_token": maskedStr,
		"id_token":      "MASKED:****1234",
		"nested": []any{
			map[string]any{"Authorization": "Basic Zm9vOmJhcg==", "ok": "yes"},
			map[string]any{"set-cookie": []any{"a=b"}, "list": []any{map[string]any{"privateKey": "k"}}},
		},
	}
	want := map[string]any{
		"password":      testMask,
		"Token":         testMask,
		"X-Api-Key":     testMask,
		"client_secret": testMask,
		"CLIENT-SECRET": nil,  // a null carries no secret
		"apikey":        true, // nor does a boolean
		"token_type":    "bearer",
		"tokens_used":   float64(5),
		"csrfToken":     "keep",
		"x_session":     testMask,
		"refresh_token": testMask, // MASKED: holding a token
		"id_token":      "MASKED:****1234",
		"nested": []any{
			map[string]any{"Authorization": testMask, "ok": "yes"},
			map[string]any{"set-cookie": testMask, "list": []any{map[string]any{"privateKey": testMask}}},
		},
	}
	inCopy := cloneJSON(t, in)
	got := r.Redact(in)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Redact mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(inCopy, in); diff != "" {
		t.Errorf("Redact modified its input (-before +after):\n%s", diff)
	}
}

func TestRedactValues(t *testing.T) {
	r := newRedactor(t, testRules())
	in := []any{
		"Bearer " + jwt,
		map[string]any{"msg": "key " + skKey, ghToken: "key holds a token", "n": float64(3)},
		[]any{true, nil, float64(1.5), maskedStr},
	}
	want := []any{
		"Bearer " + testMask,
		map[string]any{"msg": "key " + testMask, testMask: "key holds a token", "n": float64(3)},
		[]any{true, nil, float64(1.5), "MASKED:" + testMask},
	}
	if diff := cmp.Diff(want, r.Redact(in)); diff != "" {
		t.Errorf("Redact mismatch (-want +got):\n%s", diff)
	}
	// Values of other types are returned as they are.
	type custom struct{ Token string }
	v := custom{Token: skKey}
	if diff := cmp.Diff(any(v), r.Redact(v)); diff != "" {
		t.Errorf("Redact(custom) mismatch (-want +got):\n%s", diff)
	}
}

func TestNoDefaults(t *testing.T) {
	r := newRedactor(t, sanitizer.Rules{NoDefaults: true, Keys: []string{"pin"}, Secrets: []string{secret}})
	in := map[string]any{"password": "pw", "PIN": "1234", "msg": skKey + " " + secret}
	want := map[string]any{"password": "pw", "PIN": testMask, "msg": skKey + " " + testMask}
	if diff := cmp.Diff(want, r.Redact(in)); diff != "" {
		t.Errorf("Redact mismatch (-want +got):\n%s", diff)
	}
	empty := newRedactor(t, sanitizer.Rules{NoDefaults: true})
	doc := `{"password":"pw","m":"` + jwt + `"}`
	got, err := empty.RedactJSON(nil, []byte(doc))
	if err != nil || string(got) != doc {
		t.Errorf("RedactJSON with no rules = %s, %v; want the input", got, err)
	}
}

func TestSensitiveKeyNames(t *testing.T) {
	r := newRedactor(t, sanitizer.Rules{})
	tests := []struct {
		name      string
		sensitive bool
	}{
		{"apiKey", true}, {"API_KEY", true}, {"Api-Key", true}, {"api__key", true}, {"apikey", true},
		{"x-api-key", true}, {"X_API_KEY", true}, {"XApiKey", true}, {"token", true}, {"TOKEN", true},
		{"accessToken", true}, {"access_token", true}, {"refresh-token", true}, {"id_token", true},
		{"password", true}, {"Passwd", true}, {"secret", true}, {"clientSecret", true}, {"CLIENT_SECRET", true},
		{"authorization", true}, {"Proxy-Authorization", true}, {"cookie", true}, {"Set-Cookie", true},
		{"SetCookie", true}, {"private_key", true}, {"privateKey", true}, {"sessionToken", true},
		{"session-token", true}, {"_token_", true},

		{"token_type", false}, {"tokens_used", false}, {"csrfToken", false}, {"tokenizer", false},
		{"secrets", false}, {"passwords", false}, {"api", false}, {"key", false}, {"author", false},
		{"cookies", false}, {"authorization2", false}, {"x-api-key-id", false}, {"pass word", false},
		{"tokén", false}, {"", false}, {"-", false}, {strings.Repeat("token", 20), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := any("v")
			if tt.sensitive {
				want = testMask
			}
			got := r.Redact(map[string]any{tt.name: "v"}).(map[string]any)[tt.name]
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Redact: value of %q mismatch (-want +got):\n%s", tt.name, diff)
			}
			doc, _ := json.Marshal(map[string]any{tt.name: "v"})
			out, err := r.RedactJSON(nil, doc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(map[string]any{tt.name: want}, cloneJSON(t, decode(t, out))); diff != "" {
				t.Errorf("RedactJSON(%s) mismatch (-want +got):\n%s", doc, diff)
			}
		})
	}
}
