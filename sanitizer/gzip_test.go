package sanitizer_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gunzip(t *testing.T, b []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v (%q)", err, b[:min(len(b), 16)])
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return string(out)
}

// TestGzipBody: a gzip body (an attachment, or gzip an upstream sent
// unannounced) is looked into: a secret compressed inside it is masked and
// the body stays a gzip file; one without a secret is kept byte for byte;
// one that inflates past the limit, or gzip nested deeper than servers
// compress, is withheld whole.
func TestGzipBody(t *testing.T) {
	const key = "qk+S3cr/et=9ZzLongEnough"
	r := newRedactor(t, sanitizer.Rules{Secrets: []string{key}})
	const m = testMask

	for _, mt := range []string{"application/gzip", "application/x-gzip", "application/octet-stream", ""} {
		in := gz(t, []byte(`{"echo":"Bearer `+key+`","list":["`+key+`"]}`))
		out, n := r.RedactBody(mt, in)
		if n == 0 {
			t.Errorf("%q: nothing masked", mt)
			continue
		}
		if got, want := gunzip(t, out), `{"echo":"Bearer `+m+`","list":["`+m+`"]}`; got != want {
			t.Errorf("%q: inflated %s, want %s", mt, got, want)
		}
	}

	// Text (not JSON) inside, two members, gzip inside gzip.
	text := gz(t, []byte("log: sent "+key+"\n"))
	text = append(text, gz(t, []byte("then "+key+" again\n"))...)
	out, _ := r.RedactBody("application/gzip", text)
	if got := gunzip(t, out); strings.Contains(got, key) || strings.Count(got, string(sanitizerBinMask))+strings.Count(got, m) == 0 {
		t.Errorf("members: %q", got)
	}
	out, _ = r.RedactBody("application/gzip", gz(t, gz(t, []byte(key))))
	if got := gunzip(t, []byte(gunzip(t, out))); strings.Contains(got, key) {
		t.Errorf("gzip in gzip: %q", got)
	}

	// Nothing to mask: the very bytes.
	clean := gz(t, []byte(`{"id":42,"name":"ordinary"}`))
	if out, n := r.RedactBody("application/gzip", clean); n != 0 || !bytes.Equal(out, clean) {
		t.Errorf("clean gzip changed (%d masks)", n)
	}

	// Clean gzip, then the key as such: the bytes after the member are
	// scanned as bytes.
	tail := append(gz(t, []byte("clean")), " Bearer "+key...)
	if out, n := r.RedactBody("application/gzip", tail); n == 0 || bytes.Contains(out, []byte(key)) {
		t.Errorf("key after a gzip member: %d masks, %q", n, out)
	}

	// A bomb hiding the key past the limit: withheld.
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	zeros := make([]byte, 1<<20)
	for range 65 {
		zw.Write(zeros)
	}
	io.WriteString(zw, key)
	zw.Close()
	out, n := r.RedactBody("application/gzip", bomb.Bytes())
	if n == 0 || bytes.Contains(out, bomb.Bytes()[:10]) || strings.Trim(string(out), "*") != "" {
		t.Errorf("bomb: %d masks, starts %q", n, out[:min(len(out), 16)])
	}

	// Cut short after the key: what inflated is redacted and compressed
	// again, a whole gzip file now.
	cut := gz(t, []byte(strings.Repeat("x", 100)+key+strings.Repeat("y", 5000)))
	cut = cut[:len(cut)-12]
	out, n = r.RedactBody("application/gzip", cut)
	if got := gunzip(t, out); n == 0 || strings.Contains(got, key) || !strings.HasPrefix(got, strings.Repeat("x", 100)+"*") {
		t.Errorf("cut gzip: %d masks, inflated %.120q", n, got)
	}

	// Larger than the whole-body limit: scanned through a window; a key
	// there withholds the body, none keeps it.
	big := make([]byte, 20<<20)
	for i := range big {
		big[i] = 'a' + byte(i%26)
	}
	if out, n := r.RedactBody("application/gzip", gz(t, big)); n != 0 || gunzip(t, out) != string(big) {
		t.Errorf("large clean gzip: %d masks", n)
	}
	copy(big[18<<20:], key)
	if out, n := r.RedactBody("application/gzip", gz(t, big)); n == 0 || strings.Trim(string(out), "*") != "" {
		t.Errorf("large gzip with a key: %d masks", n)
	}
}

const sanitizerBinMask = '*'

// TestGzipLabelledAsContent: gzip labelled as what it holds (a .json.gz
// served as application/json, a multipart part whose Content-Type names
// the inflated content) is looked into too, and what it holds is redacted
// by its label: key rules included. It used to pass through whole, so an
// agent that inflated it read every secret inside.
func TestGzipLabelledAsContent(t *testing.T) {
	const key = "qk+S3cr/et=9ZzLongEnough"
	r := newRedactor(t, sanitizer.Rules{Secrets: []string{key}})
	for _, tc := range []struct{ mt, in, want string }{
		{"application/json", `{"password":"hunter2","echo":"Bearer ` + key + `","aws":"` + awsKey + `"}`,
			`{"password":"` + testMask + `","echo":"Bearer ` + testMask + `","aws":"` + testMask + `"}`},
		{"text/plain; charset=utf-8", "echo " + key + " " + skKey, "echo " + testMask + " " + testMask},
		{"application/xml", "<r><password>hunter2</password><k>" + key + "</k></r>", "<r><password>" + testMask + "</password><k>" + testMask + "</k></r>"},
		{"text/csv", "id,password\n1,hunter2\n", "id,password\n1," + testMask + "\n"},
		{"application/x-www-form-urlencoded", "a=1&password=hunter2", "a=1&password=" + testMask},
	} {
		out, n := r.RedactBody(tc.mt, gz(t, []byte(tc.in)))
		if n == 0 {
			t.Errorf("%s: nothing masked in %q", tc.mt, out)
			continue
		}
		if got := gunzip(t, out); got != tc.want {
			t.Errorf("%s: inflated %q, want %q", tc.mt, got, tc.want)
		}
	}
	// A multipart answer whose part is gzip labelled application/json.
	part := gz(t, []byte(`{"token":"t0k3nValue","echo":"`+key+`"}`))
	body := "--b1\r\nContent-Type: application/json\r\n\r\n" + string(part) + "\r\n--b1--\r\n"
	out, n := r.RedactBody("multipart/form-data; boundary=b1", []byte(body))
	start, end := bytes.Index(out, []byte("\r\n\r\n")), bytes.LastIndex(out, []byte("\r\n--b1--"))
	if n == 0 || start < 0 || end < start {
		t.Fatalf("multipart: %d masked, %q", n, out)
	}
	if got, want := gunzip(t, out[start+4:end]), `{"token":"`+testMask+`","echo":"`+testMask+`"}`; got != want {
		t.Errorf("multipart part inflated %q, want %q", got, want)
	}
	// Labelled gzip with nothing to mask is kept byte for byte.
	clean := gz(t, []byte(`{"a":1}`))
	if out, n := r.RedactBody("application/json", clean); n != 0 || !bytes.Equal(out, clean) {
		t.Errorf("clean gzip: %d masked, %q", n, out)
	}
}

// TestGzipLabelledCleanInsideSecretOutside: labelled gzip whose content
// is clean but whose header carries a token (the extra field, whose length
// the header states) is scanned as a binary body: the token is masked and
// the stream still inflates. The label's text rules put a longer mask into
// the header and broke it.
func TestGzipLabelledCleanInsideSecretOutside(t *testing.T) {
	r := newRedactor(t, sanitizer.Rules{})
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Extra = []byte("token " + skKey)
	zw.Write([]byte(`{"a":1}`))
	zw.Close()
	for _, mt := range []string{"text/plain", "application/json", "application/xml"} {
		out, n := r.RedactBody(mt, buf.Bytes())
		if n == 0 || bytes.Contains(out, []byte(skKey)) {
			t.Errorf("%s: %d masked, the header's token kept: %q", mt, n, out)
		}
		if len(out) != buf.Len() {
			t.Errorf("%s: %d bytes out of %d", mt, len(out), buf.Len())
		}
		if got := gunzip(t, out); got != `{"a":1}` {
			t.Errorf("%s: inflated %q", mt, got)
		}
	}
}
