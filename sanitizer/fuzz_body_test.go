package sanitizer_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"testing"
)

// bodyMediaTypes are the media types FuzzRedactBody is seeded with: one of
// every kind of body.
var bodyMediaTypes = []string{
	"application/json", "application/problem+json", "application/x-ndjson", "application/json-seq",
	"application/xml", "text/html", "application/x-www-form-urlencoded", "text/plain", "application/yaml", "application/x-env",
	"image/png", "application/octet-stream", "", "multipart/mixed; boundary=b1", "text/plain; charset=utf-16",
	// The suffix and alias routes to those kinds: +xml, +yaml, +json-seq,
	// TOML and properties, scripts, form-data, message/*.
	"application/soap+xml", "application/vnd.k8s+yaml", "application/geo+json-seq", "application/toml", "text/x-java-properties",
	"application/javascript", "multipart/form-data; boundary=b1", "message/rfc822",
	"text/csv", "text/tab-separated-values",
}

// bodySeeds are bodies of every kind, secrets in all their forms included.
var bodySeeds = []string{
	`<cfg><password>x</password><user name="bob" token="t"/><add key="ApiKey" value="v"/><![CDATA[` + secret + `]]></cfg>`,
	`<a b="hunter2&#45;S3cr3t">x &amp; ` + upstreamKey + `</a><!-- ` + jwt + ` --><?pi x?><!DOCTYPE d [<!ENTITY e "v">]>`,
	`<password>passwd=</password>tail <secret a='1`, `<input name="password" value="p"><script>a<b</script>`,
	"a=1&client_secret=xyz&password=&msg=Bearer%20abcdefghijkl&k=" + url.QueryEscape(upstreamKey) + "&pass%77ord=p",
	"\r\n--b1\r\nContent-Type: application/json\r\nAuthorization: Bearer x\r\n\r\n{\"token\":1}\r\n--b1\r\n\r\n" + secret + "\r\n--b1--\r\n",
	"\x89PNG\r\n\x1a\n\x00" + secret + "\x00" + utf16le(secret) + "\xff" + base64.StdEncoding.EncodeToString([]byte("u:"+upstreamKey)),
	"{\"token\": \"a\"}\n{\"b\": " + "\n\x1e[1]\n", `{"user":"bob","password":"hunter","note":"x ` + secret,
	`{"m":"hunter2\u002dS3cr3t\x"} x`, "-----BEGIN PRIVATE KEY-----\nMIIE\x00\x01", "xx" + secret + awsKey + "sk-abcdefghijklmnopqrs" + secret,
	url.PathEscape(upstreamKey) + " " + base64.RawURLEncoding.EncodeToString([]byte(upstreamKey)),
	"db:\n  password: 'x' # c\n  key: |\n    a\n  b: 1\n- token: t\nexport API_KEY=\"v\"\n",
	"id,api_key,\"pass\"\"word\"\r\n1,k,\"a,\"\"b\n\"\r\n2,\"" + secret + "\",x\n\"3\",\"unclosed",
	"user\tpassword\tn\nbob\t\"p\"x\t1\n", `<script type="application/json">{"apiKey":"k","n":[1,{"token":2}]}</script><p>{"password": x</p>`,
}

// secretForms are the encoded forms of the fuzzed secrets that must never
// come out of RedactBody.
func secretForms() []string {
	var forms []string
	for _, s := range []string{secret, upstreamKey} {
		forms = append(forms, s, url.QueryEscape(s), url.PathEscape(s), utf16le(s),
			base64.StdEncoding.EncodeToString([]byte(s)), base64.URLEncoding.EncodeToString([]byte(s)),
			base64.RawStdEncoding.EncodeToString([]byte(s)), base64.RawURLEncoding.EncodeToString([]byte(s)))
	}
	return forms
}

// FuzzRedactBody: RedactBody never panics, whatever the media type and
// body; no form of a configured secret survives in its output (nor, for
// JSON, in the decoded output); it never modifies its input; and redacting
// its output again changes nothing.
func FuzzRedactBody(f *testing.F) {
	for _, mt := range bodyMediaTypes {
		for _, b := range append(bodySeeds, fuzzSeeds...) {
			f.Add(mt, []byte(b))
		}
	}
	for _, b := range []string{`{"token":"` + upstreamKey + `"}`, "x " + secret + " y"} {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write([]byte(b))
		zw.Close()
		f.Add("application/gzip", z.Bytes())
		f.Add("", append(z.Bytes(), b...))
	}
	rules := testRules()
	rules.Secrets = append(rules.Secrets, upstreamKey)
	r := newRedactor(f, rules)
	forms := secretForms()
	f.Fuzz(func(t *testing.T, mt string, in []byte) {
		orig := bytes.Clone(in)
		out, n := r.RedactBody(mt, in)
		if !bytes.Equal(in, orig) {
			t.Fatalf("RedactBody(%q, %q) modified its input", mt, orig)
		}
		if n < 0 || n > 0 && bytes.Equal(out, in) && !strings.Contains(string(in), testMask) {
			t.Fatalf("RedactBody(%q, %q) = %q: count %d", mt, in, out, n)
		}
		for _, form := range forms {
			if bytes.Contains(out, []byte(form)) {
				t.Fatalf("RedactBody(%q, %q) = %q: %q survived", mt, in, out, form)
			}
		}
		if zr, err := gzip.NewReader(bytes.NewReader(out)); err == nil {
			plain, _ := io.ReadAll(io.LimitReader(zr, 1<<20))
			for _, form := range forms {
				if bytes.Contains(plain, []byte(form)) {
					t.Fatalf("RedactBody(%q, %q) = %q: %q survived compressed", mt, in, out, form)
				}
			}
		}
		if json.Valid(out) {
			if v := decode(t, out); leaked(v, secret) != "" || leaked(v, upstreamKey) != "" {
				t.Fatalf("RedactBody(%q, %q) = %q: a secret survived decoded", mt, in, out)
			}
		}
		if again, _ := r.RedactBody(mt, out); !bytes.Equal(again, out) {
			t.Fatalf("RedactBody(%q) not idempotent: %q -> %q -> %q", mt, in, out, again)
		}
	})
}
