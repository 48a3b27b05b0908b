package sanitizer_test

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
	"time"
)

// plantedTokens are the secrets FuzzRedactPlanted plants in fuzzed
// structures: built-in token shapes and the configured secrets.
var plantedTokens = []string{skKey, awsKey, secret, upstreamKey, ghToken, "sk-abcdefghijklmnopqrst"}

// plantedKinds are the media types FuzzRedactPlanted builds bodies for.
var plantedKinds = []string{"application/json", "application/xml", "text/csv", "application/x-www-form-urlencoded", "text/plain", "gzip"}

// plantedBudget bounds one RedactBody call on a fuzzed body (a few KiB):
// generous, for a loaded machine, yet far below a hang.
const plantedBudget = 2 * time.Second

// plantJSON inserts, into the where-th container of v (depth first; the
// last one when there are fewer), a "password" member holding filler and a
// member (or item) holding filler, then tok, then filler, separated by
// spaces. It returns the new value and whether it planted.
func plantJSON(v any, where *int, filler, tok string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if nv, ok := plantJSON(e, where, filler, tok); ok {
				x[k] = nv
				return x, true
			}
		}
		if *where--; *where < 0 {
			x["password"] = filler
			x["planted note"] = filler + " " + tok + " " + filler
			return x, true
		}
	case []any:
		for i, e := range x {
			if nv, ok := plantJSON(e, where, filler, tok); ok {
				x[i] = nv
				return x, true
			}
		}
		if *where--; *where < 0 {
			return append(x, filler+" "+tok+" "+filler, map[string]any{"password": filler}), true
		}
	}
	return v, false
}

// plantedBody builds a body of media type kind from the fuzzed doc and
// filler with tok planted in it, and the password values it planted.
func plantedBody(t *testing.T, kind string, doc []byte, filler, tok string, where int) []byte {
	t.Helper()
	switch kind {
	case "application/json", "gzip":
		var v any
		if json.Unmarshal(doc, &v) != nil {
			v = map[string]any{"doc": string(doc)}
		}
		n := where
		v, ok := plantJSON(v, &n, filler, tok)
		if !ok {
			v = []any{v, map[string]any{"password": filler, "planted note": filler + " " + tok + " " + filler}}
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if kind == "gzip" {
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(b)
			zw.Close()
			return z.Bytes()
		}
		return b
	case "application/xml":
		var b bytes.Buffer
		b.WriteString("<root><doc>")
		xml.EscapeText(&b, doc)
		b.WriteString("</doc><password>")
		xml.EscapeText(&b, []byte(filler))
		b.WriteString("</password><note a=\"")
		xml.EscapeText(&b, []byte(filler+" "+tok))
		b.WriteString("\">")
		xml.EscapeText(&b, []byte(filler+" "+tok+" "+filler))
		b.WriteString("</note></root>")
		return b.Bytes()
	case "text/csv":
		var b bytes.Buffer
		w := csv.NewWriter(&b)
		w.Write([]string{"id", "password", "note"})
		w.Write([]string{string(doc), filler, filler + " " + tok + " " + filler})
		w.Write([]string{filler, filler, tok})
		w.Flush()
		return b.Bytes()
	case "application/x-www-form-urlencoded":
		return []byte(url.Values{"doc": {string(doc)}, "password": {filler}, "note": {filler + " " + tok + " " + filler}}.Encode())
	}
	return []byte(string(doc) + "\n" + filler + " " + tok + " " + filler + "\n")
}

// xmlTexts decodes an XML body into its element texts and attribute values
// by element name; it fails on a body that is not well formed.
func xmlTexts(b []byte) (map[string][]string, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	out := map[string][]string{}
	var stack []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch x := tok.(type) {
		case xml.StartElement:
			stack = append(stack, x.Name.Local)
			for _, a := range x.Attr {
				out["@"+a.Name.Local] = append(out["@"+a.Name.Local], a.Value)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				out[stack[len(stack)-1]] = append(out[stack[len(stack)-1]], string(x))
			}
		}
	}
}

// masked reports whether a planted password value came out masked: the
// mask (blanks around it aside), or as it was when it was blank (nothing to hide) or a clean
// "MASKED:" value (masked upstream already: kept by design; the token
// checks catch one that is not clean).
func masked(got, filler string) bool {
	trimmed := strings.TrimSpace(got) // XML keeps the blanks around a masked text
	return trimmed == testMask || strings.HasPrefix(trimmed, "MASKED:") || trimmed == "" ||
		got == filler && filler == testMask
}

// FuzzRedactPlanted plants secrets (built-in token shapes, the configured
// secrets, a password value) in fuzzed documents of every structured kind
// (JSON, XML, CSV, form, text, gzipped JSON) and checks that RedactBody
// lets none through, keeps the body valid for its type, is idempotent, and
// takes bounded time.
func FuzzRedactPlanted(f *testing.F) {
	for i, s := range append(fuzzSeeds, `{"a":{"b":[{"c":{}}]},"d":[[],[{}]]}`, `[[[[[[[[[[]]]]]]]]]]`) {
		for k := range plantedKinds {
			f.Add(uint8(k), []byte(s), []string{"x", "", "hunter2", "a&b=c<d>\"e'\n,f", testMask, "\u00e9\u2028\xff", "MASKED:"}[i%7], uint8(i), uint8(i))
		}
	}
	rules := testRules()
	rules.Secrets = append(rules.Secrets, upstreamKey)
	r := newRedactor(f, rules)
	f.Fuzz(func(t *testing.T, kind uint8, doc []byte, filler string, which, where uint8) {
		if len(doc) > 1<<16 || len(filler) > 1<<12 {
			return
		}
		mt := plantedKinds[int(kind)%len(plantedKinds)]
		tok := plantedTokens[int(which)%len(plantedTokens)]
		in := plantedBody(t, mt, doc, filler, tok, int(where))
		bodyType := mt
		if mt == "gzip" {
			bodyType = "application/json"
		}
		start := time.Now()
		out, _ := r.RedactBody(bodyType, in)
		if d := time.Since(start); d > plantedBudget {
			t.Fatalf("RedactBody(%s) of %d bytes took %v", bodyType, len(in), d)
		}
		if again, _ := r.RedactBody(bodyType, out); !bytes.Equal(again, out) {
			t.Fatalf("RedactBody(%s) not idempotent: %q -> %q -> %q", bodyType, in, out, again)
		}
		plain := out
		if mt == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(out))
			if err != nil {
				t.Fatalf("gzip body %q came out as %q: %v", in, out, err)
			}
			if plain, err = io.ReadAll(zr); err != nil {
				t.Fatalf("gzip body came out corrupt: %v", err)
			}
		}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("%s (token %q, filler %q):\nin  %q\nout %q\n"+format, append([]any{mt, tok, filler, in, plain}, args...)...)
		}
		for _, form := range secretForms() {
			if bytes.Contains(plain, []byte(form)) {
				fail("%q survived", form)
			}
		}
		if bytes.Contains(plain, []byte(tok)) {
			fail("the token survived")
		}
		// A PEM BEGIN line without its END line is masked to the end of
		// the body by design (a cut key): a table or a document then loses
		// its structure, not a secret.
		cutPEM := bytes.Contains(in, []byte("-----BEGIN"))
		switch mt {
		case "application/json", "gzip":
			if !json.Valid(plain) {
				fail("not valid JSON any more")
			}
			v := decode(t, plain)
			if s := leaked(v, tok); s != "" {
				fail("the token survived decoded in %q", s)
			}
			checkPasswords(t, v, filler, fail)
		case "application/xml":
			texts, err := xmlTexts(plain)
			if cutPEM && err != nil {
				break
			}
			if err != nil {
				fail("not well-formed XML any more: %v", err)
			}
			for name, vs := range texts {
				for _, v := range vs {
					if strings.Contains(v, tok) {
						fail("the token survived decoded in <%s> %q", name, v)
					}
				}
			}
			if pw := strings.Join(texts["password"], ""); !masked(pw, filler) {
				fail("password text %q", pw)
			}
		case "text/csv":
			recs, err := csv.NewReader(bytes.NewReader(plain)).ReadAll()
			if cutPEM && (err != nil || len(recs) < 3) {
				break
			}
			if err != nil {
				fail("not valid CSV any more: %v", err)
			}
			for _, rec := range recs[1:] {
				if len(rec) != 3 {
					fail("record %q lost its shape", rec)
				}
				if !masked(rec[1], filler) {
					fail("password column %q", rec[1])
				}
				if strings.Contains(rec[2], tok) {
					fail("the token survived decoded in %q", rec[2])
				}
			}
		case "application/x-www-form-urlencoded":
			q, err := url.ParseQuery(string(plain))
			if err != nil {
				fail("not a valid form any more: %v", err)
			}
			if !masked(q.Get("password"), filler) {
				fail("password value %q", q.Get("password"))
			}
			for k, vs := range q {
				for _, v := range vs {
					if strings.Contains(k+v, tok) {
						fail("the token survived decoded in %s=%q", k, v)
					}
				}
			}
		}
	})
}

// checkPasswords fails when a "password" member of v holds a string that
// is not masked.
func checkPasswords(t *testing.T, v any, filler string, fail func(string, ...any)) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "password" && !masked(s, filler) && strings.TrimSpace(s) != "" {
				fail("password value %q", s)
			}
			checkPasswords(t, e, filler, fail)
		}
	case []any:
		for _, e := range x {
			checkPasswords(t, e, filler, fail)
		}
	}
}
