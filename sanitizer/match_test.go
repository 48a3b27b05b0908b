package sanitizer_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRedactString(t *testing.T) {
	r := newRedactor(t, testRules())
	const m = testMask
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain", "nothing to see here", "nothing to see here"},

		{"jwt", "jwt: " + jwt + " end", "jwt: " + m + " end"},
		{"jwt unsigned", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", m},
		{"jwt header only", "eyJhbGciOiJub25lIn0", "eyJhbGciOiJub25lIn0"},
		{"jwt payload not eyJ", "eyJhbGci.abc.def", "eyJhbGci.abc.def"},

		{"sk proj", "key=" + skKey, "key=" + m},
		{"sk ant", "sk-ant-api03-abcdefghijklmnopqrstuv", m},
		{"sk 20 chars", "sk-abcdefghijklmnopqrst", m},
		{"sk 19 chars", "sk-abcdefghijklmnopqrs", "sk-abcdefghijklmnopqrs"},
		{"sk inside a word", "task-management-service-for-big-teams", "task-management-service-for-big-teams"},
		{"sk after underscore", "my_sk-abcdefghijklmnopqrst", "my_" + m},

		{"pem", "x " + pemKey + " y", "x " + m + " y"},
		{"pem pkcs8", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----", m},
		{"pem openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----\n", m + "\n"},
		{"pem truncated", "key: -----BEGIN EC PRIVATE KEY-----\nMHcCAQEE", "key: " + m},
		{"pem certificate", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
		{"pem public key", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},

		{"basic in a header pair", `["Authorization","Basic dXNlcjpodW50ZXIy"]`, `["Authorization","Basic ` + m + `"]`},
		{"basic lower case in a log line", "curl -H 'authorization: basic YWxhZGRpbjpvcGVuc2VzYW1l'", "curl -H 'authorization: basic " + m + "'"},
		{"basic prose", "Basic information about Basic settings", "Basic information about Basic settings"},
		{"basic base64 without a colon", "Basic aGVsbG8gd29ybGQ=", "Basic aGVsbG8gd29ybGQ="},
		{"basic unpadded", "Basic dXNlcjpwYXNz1", "Basic dXNlcjpwYXNz1"},

		{"aws akia", "id=" + awsKey + ";", "id=" + m + ";"},
		{"aws asia", "ASIAY34FZKBOKMUTVV7A", m},
		{"aws short", "AKIA1234567", "AKIA1234567"},
		{"aws inside a word", "X" + awsKey, "X" + awsKey},

		{"bearer", "Authorization: Bearer abcdef123456", "Authorization: Bearer " + m},
		{"bearer lower, padding", "bearer    abc.def-ghi_jkl==", "bearer    " + m},
		{"bearer upper jwt", "BEARER " + jwt, "BEARER " + m},
		{"bearer short", "Bearer token", "Bearer token"},
		{"bearer no space", "Bearerabcdefghijkl", "Bearerabcdefghijkl"},
		{"bearer masked", "Bearer " + m, "Bearer " + m},

		{"github classic", "token " + ghToken, "token " + m},
		{"github oauth", "gho_" + strings.Repeat("x", 36), m},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", m},
		{"github short", "ghp_short", "ghp_short"},
		{"github inside a word", "high" + ghToken[2:], "high" + ghToken[2:]},
		{"github url", "https://github.com/octocat", "https://github.com/octocat"},

		{"url password", "DATABASE_URL=postgres://admin:hunter2@db:5432/app", "DATABASE_URL=postgres://admin:" + m + "@db:5432/app"},
		{"url password escaped", "redis://:p%40ss;w0rd@cache:6379", "redis://:" + m + "@cache:6379"},
		{"url no password", "ssh://git@github.com/x https://u@h/ https://h:8080/a@b http://[::1]:80/", "ssh://git@github.com/x https://u@h/ https://h:8080/a@b http://[::1]:80/"},
		{"url empty password", "ftp://anon:@host/", "ftp://anon:@host/"},

		{"slack", "hook " + slack, "hook " + m},
		{"slack unknown kind", "xoxz-123456789012-abcdef", "xoxz-123456789012-abcdef"},

		{"prefix", "pk_live_abcdefgh", m},
		{"prefix with dots", "k=pk_live_abcdefgh.ij-k;", "k=" + m + ";"},
		{"prefix short", "pk_live_abc", "pk_live_abc"},

		{"secret", "pass " + secret + " here", "pass " + m + " here"},
		{"secret inside a word", "xx" + secret + "xx", "xx" + m + "xx"},
		{"secret twice", secret + secret, m},
		{"short secret ignored", "abc abc", "abc abc"},

		{"pattern", "PASSWD=foo&x=1", m + "&x=1"},

		{"masked prefix is scanned", maskedStr, "MASKED:" + m},
		{"masked prefix secret", "MASKED:" + secret, "MASKED:" + m},
		{"masked prefix clean", "MASKED:****5678", "MASKED:****5678"},
		{"masked prefix later is not special", "x MASKED:" + skKey, "x MASKED:" + m},

		{"touching spans merge", awsKey + secret, m},
		{"several", "a " + jwt + " b " + awsKey + " c", "a " + m + " b " + m + " c"},
		{"non-ASCII around", "clé: " + skKey + " ✓", "clé: " + m + " ✓"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.RedactString(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RedactString(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if again := r.RedactString(got); again != got {
				t.Errorf("RedactString is not idempotent: %q then %q", got, again)
			}
		})
	}
}

func TestSecretsOverlap(t *testing.T) {
	r := newRedactor(t, sanitizerRules(nil, []string{"abcdef", "defghi", "DACTED"}))
	tests := []struct{ in, want string }{
		{"xabcdefghix", "x" + testMask + "x"}, // overlapping secrets merge
		{"abcdefabcdef", testMask},
		{testMask, testMask}, // a secret inside the mask is ignored
	}
	for _, tt := range tests {
		if got := r.RedactString(tt.in); got != tt.want {
			t.Errorf("RedactString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOneBytePrefix(t *testing.T) {
	r := newRedactor(t, sanitizerRules([]string{"Z"}, nil))
	tests := []struct{ in, want string }{
		{"Zabcdefgh", testMask},
		{"xZabcdefgh.", "x" + testMask},
		{"Zabcdefg", "Zabcdefg"},
	}
	for _, tt := range tests {
		if got := r.RedactString(tt.in); got != tt.want {
			t.Errorf("RedactString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEdgeCases(t *testing.T) {
	r := newRedactor(t, sanitizerRules([]string{"key:", "pk_"}, nil))
	const m = testMask
	tests := []struct{ name, in, want string }{
		{"pem blocks glued together",
			"-----BEGIN A PRIVATE KEY-----\nx\n-----END A PRIVATE KEY-----BEGIN B PRIVATE KEY-----\nleak\n-----END B PRIVATE KEY----- after",
			m + " after"},
		{"pem second block", pemKey + "\nmid\n" + pemKey, m + "\nmid\n" + m},
		{"prefix with a non-token byte", "key:abcdefgh key:ijklmnop", m + " " + m},
		{"prefix inside a prefix run", "pk_abcdefghpk_ijklmnop:pk_zz", m + ":pk_zz"},
		{"jwt inside a jwt run", "eyJeyJa.eyJb.c", m},
		{"sk inside an sk run", "sk-sk-abcdefghijklmnopqrstu", m},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.RedactString(tt.in); got != tt.want {
				t.Errorf("RedactString(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestLinearTime feeds texts made of one token start repeated. A scan that
// re-read the rest of the text at each start would take minutes here
// instead of milliseconds.
// TestQueryPairsLinear: query pairs under sensitive names, plain and
// percent-encoded, repeated over the default --max-response-bytes. Each
// pair used to read the rest of the body: 256 KiB took 1.6 s, 4 MiB
// minutes.
func TestQueryPairsLinear(t *testing.T) {
	r := newRedactor(t, sanitizerRules(nil, nil))
	budget := 5 * time.Second
	if raceEnabled {
		budget = 60 * time.Second
	}
	for _, u := range []string{"%26token%3Dabcdefgh", "?token=x", "&password=ab", "%3Fapi_key%3D", "?token=%26token%3Dx"} {
		s := strings.Repeat(u, (4<<20)/len(u))
		start := time.Now()
		got := r.RedactString(s)
		if d := time.Since(start); d > budget {
			t.Errorf("%q repeated to 4 MiB: RedactString took %v", u, d)
		}
		if strings.Contains(got, "abcdefgh") {
			t.Errorf("%q repeated: a value is left unmasked", u)
		}
		start = time.Now()
		if _, err := r.RedactJSON(nil, []byte(`["`+s+`"]`)); err != nil {
			t.Errorf("%q repeated: %v", u, err)
		}
		if d := time.Since(start); d > budget {
			t.Errorf("%q repeated to 4 MiB: RedactJSON took %v", u, d)
		}
	}
}

func TestLinearTime(t *testing.T) {
	r := newRedactor(t, sanitizerRules([]string{"pk_live_"}, []string{secret}))
	units := []string{"eyJ", "eyJa.", "sk-", "xoxb-", "github_pat_", "-----BEGIN PRIVATE KEY-----",
		"-----BEGIN PRIVATE KEY-----x-----END", "pk_live_", "Bearer ", "AKIA", "ghp_", "hunter2-", "://a:b", "://a:b@"}
	for _, u := range units {
		s := strings.Repeat(u, (256<<10)/len(u))
		got := r.RedactString(s)
		if again := r.RedactString(got); again != got {
			t.Errorf("%q repeated: not idempotent", u)
		}
		if _, err := r.RedactJSON(nil, []byte(`["`+s+`"]`)); err != nil {
			t.Errorf("%q repeated: %v", u, err)
		}
	}
}
