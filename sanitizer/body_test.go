package sanitizer_test

import (
	"bytes"
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpbridge/mcpbridge/sanitizer"
)

func utf16le(s string) string {
	var b []byte
	for _, c := range utf16.Encode([]rune(s)) {
		b = append(b, byte(c), byte(c>>8))
	}
	return string(b)
}

func TestRedactBody(t *testing.T) {
	rules := testRules()
	rules.Secrets = append(rules.Secrets, upstreamKey)
	r := newRedactor(t, rules)
	const m = testMask
	stars := strings.Repeat("*", len(secret))
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + "tEXtComment\x00key=" + secret + "\x00\xff\xfe"
	tests := []struct {
		name, mediaType, in, want string
		n                         int
	}{
		{"json", "application/json; charset=utf-8", `{"password": "x", "m": "a ` + secret + `"}`,
			`{"password":"` + m + `","m":"a ` + m + `"}`, 2},
		{"json suffix", "application/problem+json", `{"detail":"bad key ` + skKey + `"}`, `{"detail":"bad key ` + m + `"}`, 1},
		{"json clean", "application/json", `{"a": 1}`, `{"a":1}`, 0},
		{"json cut short", "application/json", `{"user":"bob","password":"hunter","note":"x ` + secret,
			`{"user":"bob","password":"` + m + `","note":"x ` + m, 2},
		{"json cut inside a sensitive object", "application/json", `{"ok":1, "credentials": {"user": "u", "pass`,
			`{"ok":1, "credentials": "` + m + `"`, 1},
		{"json cut in an env entry", "application/json", `{"Env":["A=1","DB_PASSWORD=hunter2 hun`, `{"Env":["A=1","DB_PASSWORD=` + m, 1},
		{"json cut in an escaped env entry", "application/json", `{"Env":["API_KEY=a\"b`, `{"Env":["` + m, 1},
		{"json cut in quoted JSON", "application/json", `{"Body":"{\"password\":\"hunter2 hu`, `{"Body":"` + m, 1},
		{"json invalid, quoted JSON clean", "application/json", `{"Body":"{\"a\":\"x\"}","password=x":1,`, `{"Body":"{\"a\":\"x\"}","password=x":1,`, 0},
		{"json two documents", "application/json", `{"token":"a"} {"token":12}`, `{"token":"` + m + `"} {"token":"` + m + `"}`, 2},
		{"json invalid escape hides a secret", "application/json", `{"m":"hunter2\u002dS3cr3t\x"} x`, `{"m":"` + m + `"} x`, 1},
		{"json invalid keeps clean MASKED", "application/json", `{"password":"MASKED:****"`, `{"password":"MASKED:****"`, 0},
		{"ndjson", "application/x-ndjson", "{\"token\": \"a\"}\n{\"b\": 1}\r\n\n{\"password\":\"p\"\n", "{\"token\":\"" + m + "\"}\n{\"b\":1}\r\n\n{\"password\":\"" + m + "\"\n", 2},
		{"json-seq", "application/json-seq", "\x1e{\"token\": 1}\n\x1e[1, 2]\n", "\x1e{\"token\":\"" + m + "\"}\n\x1e[1,2]\n", 1},

		{"xml", "application/xml", `<?xml version="1.0"?><cfg><password>hunter</password><user name="bob" token="t1"/>` +
			`<token value="t2" xmlns="urn:x"/><note>hello</note><!-- c --><wsse:Password Type="x">p</wsse:Password>` +
			`<DbPassword><![CDATA[s3 <&>]]></DbPassword><add key="ApiKey" value="v1"/><property name="db.password">v2</property></cfg>`,
			`<?xml version="1.0"?><cfg><password>` + m + `</password><user name="bob" token="` + m + `"/>` +
				`<token value="` + m + `" xmlns="urn:x"/><note>hello</note><!-- c --><wsse:Password Type="` + m + `">` + m + `</wsse:Password>` +
				`<DbPassword><![CDATA[` + m + `]]></DbPassword><add key="ApiKey" value="` + m + `"/><property name="db.password">` + m + `</property></cfg>`, 8},
		{"xml nested and spaced", "text/xml", "<credentials>\n  <user>bob</user>\n  <pin>1234</pin>\n</credentials><a>b</a>",
			"<credentials>\n  <user>" + m + "</user>\n  <pin>" + m + "</pin>\n</credentials><a>b</a>", 2},
		{"xml entities", "application/atom+xml", `<note a="hunter2&#x2D;S3cr3t">hunter2&#45;S3cr3t &amp; more</note>`,
			`<note a="` + m + `">` + m + `</note>`, 2},
		{"xml value rules anywhere", "application/xml", `<a href="https://x/?k=` + ghToken + `">Bearer abcdefghijkl</a>`,
			`<a href="https://x/?k=` + m + `">Bearer ` + m + `</a>`, 2},
		{"xml clean MASKED kept", "application/xml", `<password>MASKED:****</password>`, `<password>MASKED:****</password>`, 0},
		{"xml stray end tags", "application/xml", `<password>a</x></x>b</password>c`, `<password>` + m + `</x></x>` + m + `</password>c`, 2},
		{"xml cut short", "application/xml", `<secret attr="v`, `<secret attr="` + m, 1},
		{"html", "text/html", `<form><input type="password" name="password" value="hunter"><meta name="csrf-token" content="c1">` +
			`<p>password</p><script>if (a<b) x = "` + secret + `"</script></form>`,
			`<form><input type="` + m + `" name="password" value="` + m + `"><meta name="csrf-token" content="c1">` +
				`<p>password</p><script>if (a<b) x = "` + m + `"</script></form>`, 3},

		{"form", "application/x-www-form-urlencoded", "a=1&client_secret=xyz&password=&grant_type=client_credentials&msg=Bearer%20abcdefghijkl&k=" +
			url.QueryEscape(upstreamKey) + "&pass%77ord=p",
			"a=1&client_secret=" + m + "&password=&grant_type=client_credentials&msg=" + m + "&k=" + m + "&pass%77ord=" + m, 4},

		{"text", "text/plain; charset=utf-8", "401: Bearer abcdefghijkl " + secret, "401: Bearer " + m + " " + m, 2},
		{"text masked prefix", "text/plain", "MASKED: token " + skKey, "MASKED: token " + m, 1},
		{"yaml", "application/yaml", "key: " + awsKey + "\n", "key: " + m + "\n", 1},
		{"yaml config", "application/yaml", "db:\n  host: db.local\n  password: hunter # set by ops\n  api_key: \"k1\"\n" +
			"  private_key: |\n    line1\n    line2\n  port: 5432\nusers:\n- name: bob\n  token: 't2'\n  token_type: bearer\nurl: http://x:8080\n",
			"db:\n  host: db.local\n  password: " + m + " # set by ops\n  api_key: \"" + m + "\"\n" +
				"  private_key: |\n" + m + "  port: 5432\nusers:\n- name: bob\n  token: '" + m + "'\n  token_type: bearer\nurl: http://x:8080\n", 4},
		{"yaml clean MASKED kept", "text/yaml", "password: MASKED:****\n", "password: MASKED:****\n", 0},
		{"env", "application/x-env", "export API_KEY=abc\nDB_PASSWORD='p w'\nPATH=/bin\n# SECRET=x\n",
			"export API_KEY=" + m + "\nDB_PASSWORD='" + m + "'\nPATH=/bin\n# SECRET=x\n", 2},
		{"properties and toml", "text/x-java-properties", "db.password = s1\napp.name=x\n[db]\nclient_secret = \"s2\"\nport = 5\n",
			"db.password = " + m + "\napp.name=x\n[db]\nclient_secret = \"" + m + "\"\nport = 5\n", 2},
		{"text clean", "text/csv", "a,b\n1,2\n", "a,b\n1,2\n", 0},
		{"json as text", "text/plain", `{"password": 12, "s": "hun\u0074er2-S3cr3t", "a": [1, 2]}`,
			`{"password": "` + m + `", "s": "` + m + `", "a": [1, 2]}`, 2},
		{"json inside a message", "text/plain", `upstream said: {"error":"denied","api_key":"k1"} (HTTP 403)`,
			`upstream said: {"error":"denied","api_key":"` + m + `"} (HTTP 403)`, 1},
		{"json as xml", "application/xml", ` {"token": "t"}`, ` {"token": "` + m + `"}`, 1},
		{"json as octet-stream", "application/octet-stream", `{"secret": {"a": 1}}`, `{"secret": "` + m + `"}`, 1},

		{"png", "image/png", png, strings.Replace(png, secret, stars, 1), 1},
		{"octet-stream utf16", "application/octet-stream", "\x00\x01" + utf16le(secret) + "\x02",
			"\x00\x01" + strings.Repeat("*", 2*len(secret)) + "\x02", 1},
		{"utf-16 text", "text/plain; charset=UTF-16LE", utf16le("k=" + secret),
			// The big-endian form matches from the NUL before the secret.
			"k\x00=" + strings.Repeat("*", 2*len(secret)+1), 1},
		{"binary pem cut short", "application/octet-stream", "\x00-----BEGIN PRIVATE KEY-----\nMIIEab+/=\n\x00\x01tail",
			"\x00" + strings.Repeat("*", len("-----BEGIN PRIVATE KEY-----\nMIIEab+/=\n")) + "\x00\x01tail", 1},
		{"binary base64 of the key", "application/pdf", "%PDF " + base64.StdEncoding.EncodeToString([]byte("u:"+upstreamKey)) + " x",
			"%PDF " + strings.Repeat("*", len(base64.StdEncoding.EncodeToString([]byte("u:"+upstreamKey)))) + " x", 1},
		{"binary clean", "audio/mpeg", "ID3\x00\x01\x02", "ID3\x00\x01\x02", 0},

		{"untyped json", "", `{ "token": 1 }`, `{"token":"` + m + `"}`, 1},
		{"untyped binary", "", "\x00\x01" + secret, "\x00\x01" + stars, 1},

		{"multipart", `multipart/mixed; boundary="b1"`,
			"preamble " + secret + "\r\n--b1\r\nContent-Type: application/json\r\nAuthorization: Bearer abc\r\n\r\n{\"token\": \"x\"}\r\n" +
				"--b1\r\n\r\nplain " + skKey + "\r\n--b1\r\nContent-Type: image/png\r\n\r\n\x89PNG" + secret + "\r\n--b1--\r\nepilogue",
			"preamble " + m + "\r\n--b1\r\nContent-Type: application/json\r\nAuthorization: " + m + "\r\n\r\n{\"token\":\"" + m + "\"}\r\n" +
				"--b1\r\n\r\nplain " + m + "\r\n--b1\r\nContent-Type: image/png\r\n\r\n\x89PNG" + stars + "\r\n--b1--\r\nepilogue", 5},
		{"multipart without boundary", "multipart/form-data", "x " + secret, "x " + m, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.in)
			got, n := r.RedactBody(tt.mediaType, in)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("RedactBody(%q, %q) mismatch (-want +got):\n%s", tt.mediaType, tt.in, diff)
			}
			if n != tt.n {
				t.Errorf("RedactBody(%q, %q) count = %d, want %d", tt.mediaType, tt.in, n, tt.n)
			}
			if string(in) != tt.in {
				t.Errorf("RedactBody modified its input")
			}
			again, n2 := r.RedactBody(tt.mediaType, got)
			if !bytes.Equal(again, got) || n2 != 0 && !bytes.Contains(got, []byte(m)) {
				t.Errorf("RedactBody is not idempotent: %q then %q (%d)", got, again, n2)
			}
		})
	}
}

// TestRedactBodyNoCopy checks that a clean body of a kind kept byte for
// byte comes back as the same slice, without allocating.
func TestRedactBodyNoCopy(t *testing.T) {
	r := newRedactor(t, testRules())
	for _, mt := range []string{"text/plain", "image/png", "application/xml", "application/x-www-form-urlencoded"} {
		body := []byte("a=1&b=<x>plain text</x>")
		got, n := r.RedactBody(mt, body)
		if n != 0 || &got[0] != &body[0] {
			t.Errorf("RedactBody(%q) copied a clean body (n=%d)", mt, n)
		}
	}
	img := bytes.Repeat([]byte("\x89PNG\x00\x01binary"), 1000)
	if a := testing.AllocsPerRun(20, func() { r.RedactBody("image/png", img) }); a != 0 && !raceEnabled {
		t.Errorf("RedactBody(image/png) allocates %v times on a clean body", a)
	}
}

func TestContains(t *testing.T) {
	r := newRedactor(t, testRules())
	for _, s := range []string{secret, "x" + utf16le(secret), "Bearer abcdefghijkl", jwt, url.PathEscape(secret),
		base64.StdEncoding.EncodeToString([]byte("user:" + secret)), "PASSWD=x"} {
		if !r.Contains([]byte(s)) {
			t.Errorf("Contains(%q) = false", s)
		}
	}
	for _, s := range []string{"", "ab", "plain text", "password", sanitizer.Mask} {
		if r.Contains([]byte(s)) {
			t.Errorf("Contains(%q) = true", s)
		}
	}
}

// TestRedactBodyLinearTime feeds every body rule texts made of one unit
// repeated: a rule that re-read the rest of its input at each unit would
// take minutes here instead of milliseconds.
func TestRedactBodyLinearTime(t *testing.T) {
	rules := testRules()
	rules.Patterns = nil // RE2 is linear; a case-folded pattern is merely slow
	rules.Secrets = append(rules.Secrets, upstreamKey)
	r := newRedactor(t, rules)
	core := base64.StdEncoding.EncodeToString([]byte(upstreamKey))[:12]
	units := map[string][]string{
		"application/xml":                   {"<a", "<password>", "</x>", "<!--", "<![CDATA[", "<a b='", "&#", "<name key=\"token\" value=\"v\">"},
		"text/html":                         {"<script>", "<input name=password value="},
		"application/x-www-form-urlencoded": {"&", "password=%", "a=%41+"},
		"application/json":                  {`"password":`, `"password": [`, `{"value":1,`, `"\u`, `"name":"token","value":"`},
		"application/yaml":                  {"password: |\n ", "- password: '", "a:\n  "},
		"multipart/mixed; boundary=b":       {"\r\n--b\r\n", "\r\n--b\r\n\r\n"},
		"image/png":                         {core, "-----BEGIN PRIVATE KEY-----", "k3y"},
		"text/plain":                        {core, `"token":"`, "\"a\\"},
	}
	for mt, us := range units {
		for _, u := range us {
			body := []byte(strings.Repeat(u, (128<<10)/len(u)))
			out, _ := r.RedactBody(mt, body)
			if again, _ := r.RedactBody(mt, out); !bytes.Equal(again, out) {
				t.Errorf("%s, %q repeated: not idempotent", mt, u)
			}
		}
	}
}
