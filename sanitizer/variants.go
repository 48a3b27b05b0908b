package sanitizer

import (
	"encoding/base64"
	"fmt"
	"html"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
)

// lit is a literal the scanners look for: a configured secret or one of the
// encoded forms New derives from it.
type lit struct {
	s string
	// b64: a base64 form; a match grows over the whole run of base64 bytes
	// around it (and its '=' padding), which is the encoded blob holding the
	// secret, e.g. the credentials of "Basic dXNlcjpodW50ZXIy".
	b64 bool
}

// minB64Core is the shortest base64 form of a secret that is looked for:
// shorter ones would mask ordinary base64 data by chance.
const minB64Core = 6

// secretVariants returns s and the forms in which an upstream may echo it:
//
//   - URL-escaped: as url.QueryEscape and url.PathEscape write it, with
//     every byte but [A-Za-z0-9-._~] escaped, each with upper- and
//     lower-case hex digits;
//   - JSON-escaped (encoding/json's way, and with only '"', '\' and control
//     bytes escaped), for JSON met as text;
//   - XML/HTML-escaped (&amp; &lt; &gt; and either &#34;/&#39; or
//     &quot;/&apos;);
//   - URL-escaped twice (QueryEscape of QueryEscape: a URL quoted in
//     another URL's query);
//   - base64 of the secret and of its URL-escaped forms (an encoded query
//     string or URL), standard and URL-safe alphabets: for each of the three
//     alignments the secret can have inside a longer encoded text, the
//     characters that depend on the secret's bytes only, so it is found
//     within any base64 blob (a Basic credential "user:secret", a token in
//     an encoded JSON document), padded or not;
//   - UTF-16, little- and big-endian (binary bodies, wide text, decoded
//     JSON strings holding \u0000);
//   - spelled out: every byte percent-escaped, the bytes in hex (secrets
//     of 8 bytes or more), every character a \u escape or an HTML numeric
//     character reference (decimal and hex);
//   - in lower and in upper case.
//
// Duplicates are left for New to drop.
func secretVariants(s string) []lit {
	out := []lit{{s: s}}
	add := func(v string) {
		if v != s {
			out = append(out, lit{s: v})
		}
	}
	for _, e := range []string{url.QueryEscape(s), url.PathEscape(s), strictEscape(s)} {
		add(e)
		add(lowerHex(e))
	}
	add(string(appendEscaped(nil, []byte(s))))
	add(jsonMinimal(s))
	if strings.ContainsAny(s, `&<>"'`) {
		e := html.EscapeString(s)
		add(e)
		add(strings.NewReplacer("&#34;", "&quot;", "&#39;", "&apos;").Replace(e))
	}
	// A URL quoted inside another URL's query escapes the secret twice
	// (%2B becomes %252B): a redirect's "next=" parameter, a logged link.
	if q := url.QueryEscape(s); q != s {
		add(url.QueryEscape(q))
	}
	// Base64 of the secret, and of its URL-escaped forms: an encoded query
	// string or URL ("api_key=qk%2B..." in a base64 blob).
	encoded := []string{s}
	for _, e := range []string{url.QueryEscape(s), url.PathEscape(s)} {
		if e != s && !slices.Contains(encoded, e) {
			encoded = append(encoded, e)
		}
	}
	for _, plain := range encoded {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for k := range 3 {
				core := b64Core(enc, plain, k)
				if len(core) >= minB64Core {
					out = append(out, lit{s: core, b64: true})
				} else if k == 0 {
					// Too short to be looked for inside other data: only the
					// secret encoded alone (its padding joins the match).
					out = append(out, lit{s: enc.EncodeToString([]byte(plain)), b64: true})
				}
			}
		}
	}
	// Each byte or character escaped, whatever it is: an upstream (or an
	// agent asking it to echo) can spell a key out so that no form above
	// matches: every byte percent-escaped, every character a JSON or
	// JavaScript \u escape or an HTML numeric reference, the bytes in hex.
	for _, form := range []string{"%%%02X", "%%%02x", "%02x", "%02X"} {
		if (form == "%02x" || form == "%02X") && len(s) < 8 {
			continue // 8 hex digits or fewer occur in ordinary data (hashes, ids)
		}
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			fmt.Fprintf(&b, form, s[i])
		}
		add(b.String())
	}
	for _, form := range []string{`\u%04x`, `\u%04X`, "&#%d;", "&#x%x;", "&#x%X;"} {
		var b strings.Builder
		for _, r := range s {
			if r > 0xFFFF {
				b.Reset()
				break
			}
			fmt.Fprintf(&b, form, r)
		}
		if b.Len() > 0 {
			add(b.String())
		}
	}
	// Case changed: an upstream that folds case (a lower-cased echo, an
	// upper-cased header dump) keeps nearly all of a key.
	add(strings.ToLower(s))
	add(strings.ToUpper(s))
	u := utf16.Encode([]rune(s))
	le, be := make([]byte, 0, 2*len(u)), make([]byte, 0, 2*len(u))
	for _, c := range u {
		le = append(le, byte(c), byte(c>>8))
		be = append(be, byte(c>>8), byte(c))
	}
	out = append(out, lit{s: string(le)}, lit{s: string(be)})
	return out
}

// b64Core returns the characters of the encoding of s, preceded by k other
// bytes, that depend on the bytes of s only.
func b64Core(enc *base64.Encoding, s string, k int) string {
	full := enc.EncodeToString(append(make([]byte, k), s...))
	lo := (8*k + 5) / 6        // first character holding no byte before s
	hi := 8 * (k + len(s)) / 6 // past the last one holding no byte after s
	if lo >= hi {
		return ""
	}
	return full[lo:hi]
}

// strictEscape escapes every byte of s but the unreserved ones of RFC 3986.
func strictEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// lowerHex turns the hex digits of the %XX escapes of e to lower case.
func lowerHex(e string) string {
	b := []byte(e)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			for j := i + 1; j <= i+2; j++ {
				if 'A' <= b[j] && b[j] <= 'F' {
					b[j] += 'a' - 'A'
				}
			}
			i += 2
		}
	}
	return string(b)
}

// jsonMinimal escapes only what a JSON string must escape.
func jsonMinimal(s string) string {
	const hex = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
