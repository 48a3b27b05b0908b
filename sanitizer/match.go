package sanitizer

import (
	"regexp"
	"strings"
)

// Anchor flags: the token kinds a byte may start (Redactor.first), or be
// the second (Redactor.follow) or third (Redactor.third) byte of. A matcher
// runs only where all three agree.
const (
	aJWT    uint16 = 1 << iota // eyJ
	aSK                        // sk-
	aPEM                       // -----BEGIN
	aAWS                       // AKIA, ASIA
	aBearer                    // bearer, any case
	aGH                        // gh?_, github_pat_
	aSlack                     // xox?-
	aCustom                    // a configured prefix or secret

	// fCtl and fEsc mark bytes a raw JSON string body cannot hold as such:
	// control bytes (invalid) and backslashes (an escape follows).
	fCtl
	fEsc
	fQuote

	anchors = aJWT | aSK | aPEM | aAWS | aBearer | aGH | aSlack | aCustom
)

// Character classes (Redactor.cls).
const (
	cB64URL  uint16 = 1 << iota // [A-Za-z0-9_-]: JWT segments, sk- keys
	cAlnum                      // [A-Za-z0-9]: GitHub classic tokens
	cWord                       // [A-Za-z0-9_]: github_pat_
	cUpNum                      // [A-Z0-9]: AWS key ids
	cPEM                        // [A-Z0-9 ]: PEM armor labels
	cSlack                      // [A-Za-z0-9-]
	cTok                        // [A-Za-z0-9_.-]: configured prefixes
	cBearer                     // [A-Za-z0-9-._~+/]: RFC 6750 b64token
	cSpace                      // [\t\n\f\r ]
	cNoBound                    // [A-Za-z0-9\]]: not a word start before it
)

// span is a half-open byte range to mask.
type span struct{ lo, hi int }

func (r *Redactor) initClasses() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		upper, lower, digit := 'A' <= b && b <= 'Z', 'a' <= b && b <= 'z', '0' <= b && b <= '9'
		alnum := upper || lower || digit
		var f uint16
		if alnum {
			f |= cB64URL | cAlnum | cWord | cSlack | cTok | cBearer | cNoBound
		}
		if upper || digit {
			f |= cUpNum | cPEM
		}
		switch b {
		case '_':
			f |= cB64URL | cWord | cTok
		case '-':
			f |= cB64URL | cSlack | cTok | cBearer
		case '.':
			f |= cTok | cBearer
		case '~', '+', '/':
			f |= cBearer
		case ' ':
			f |= cPEM | cSpace
		case '\t', '\n', '\f', '\r':
			f |= cSpace
		case ']':
			f |= cNoBound
		}
		r.cls[c] = f
		if b < 0x20 {
			r.first[c] |= fCtl
		}
	}
	r.first['\\'] |= fEsc
	r.first['"'] |= fQuote
}

// initAnchors fills the first and follow tables for the built-in tokens
// (when defaults) and for the configured prefixes and secrets.
func (r *Redactor) initAnchors(defaults bool) {
	set := func(flag uint16, firsts, seconds, thirds string) {
		for _, tab := range []struct {
			t     *[256]uint16
			bytes string
		}{{&r.first, firsts}, {&r.follow, seconds}, {&r.third, thirds}} {
			if tab.bytes == "" { // any byte
				for c := range tab.t {
					tab.t[c] |= flag
				}
			}
			for i := 0; i < len(tab.bytes); i++ {
				tab.t[tab.bytes[i]] |= flag
			}
		}
	}
	if defaults {
		set(aJWT, "e", "y", "J")
		set(aSK, "s", "k", "-")
		set(aPEM, "-", "-", "-")
		set(aAWS, "A", "KS", "I")
		set(aBearer, "Bb", "Ee", "Aa")
		set(aGH, "g", "hi", "pousrt")
		set(aSlack, "x", "o", "x")
	}
	for _, lits := range [][]string{r.prefixes, r.secrets} {
		for _, l := range lits {
			// A literal shorter than three bytes lets any byte follow it.
			l2, l3 := "", ""
			if len(l) > 1 {
				l2 = l[1:2]
			}
			if len(l) > 2 {
				l3 = l[2:3]
			}
			set(aCustom, l[:1], l2, l3)
		}
	}
}

// scanMasks appends to iv the spans of s matched by the built-in tokens,
// prefixes and secrets that start at or after from, unsorted. It stops at
// the first byte whose first flags intersect fail and returns its index
// (iv is then meaningless); otherwise it returns -1. Patterns are not run
// here.
func scanMasks[T text](r *Redactor, s T, from int, fail uint16, iv []span) ([]span, int) {
	n := len(s)
	i := from
	for n2 := n - 2; i < n2; i++ {
		f := r.first[s[i]]
		g := f & r.follow[s[i+1]]
		if g|f&fail == 0 {
			continue
		}
		if f&fail != 0 {
			return iv, i
		}
		if g &= r.third[s[i+2]]; g != 0 {
			iv = matchAt(r, s, i, g, iv)
		}
	}
	// Every token is longer than two bytes: the last two only need
	// checking against fail.
	for ; i < n; i++ {
		if r.first[s[i]]&fail != 0 {
			return iv, i
		}
	}
	return iv, -1
}

// matchAt appends the spans of the tokens starting at s[i] among the kinds
// in f.
func matchAt[T text](r *Redactor, s T, i int, f uint16, iv []span) []span {
	n := len(s)
	word := i == 0 || r.cls[s[i-1]]&cNoBound == 0
	if f&aJWT != 0 && hasAt(s, i, "eyJ") {
		if e := jwtEnd(r, s, i); e > 0 {
			iv = append(iv, span{i, e})
		}
	}
	if f&aSK != 0 && word && hasAt(s, i, "sk-") {
		if e := run(r, s, i+3, cB64URL); e-(i+3) >= 20 {
			iv = append(iv, span{i, e})
		}
	}
	if f&aPEM != 0 && hasAt(s, i, "-----BEGIN") {
		if e := pemEnd(r, s, i); e > 0 {
			iv = append(iv, span{i, e})
		}
	}
	if f&aAWS != 0 && word && (hasAt(s, i, "AKIA") || hasAt(s, i, "ASIA")) {
		if e := run(r, s, i+4, cUpNum); e-(i+4) >= 16 {
			iv = append(iv, span{i, e})
		}
	}
	if f&aBearer != 0 && hasFoldAt(s, i, "bearer") {
		if j := run(r, s, i+6, cSpace); j > i+6 {
			e := run(r, s, j, cBearer)
			if e-j >= 8 {
				for e < n && s[e] == '=' {
					e++
				}
				iv = append(iv, span{j, e})
			}
		}
	}
	if f&aGH != 0 && word {
		if i+3 < n && s[i+1] == 'h' && strings.IndexByte("pousr", byte(s[i+2])) >= 0 && s[i+3] == '_' {
			if e := run(r, s, i+4, cAlnum); e-(i+4) >= 16 {
				iv = append(iv, span{i, e})
			}
		} else if hasAt(s, i, "github_pat_") {
			if e := run(r, s, i+11, cWord); e-(i+11) >= 16 {
				iv = append(iv, span{i, e})
			}
		}
	}
	if f&aSlack != 0 && word && i+4 < n && hasAt(s, i, "xox") &&
		strings.IndexByte("baprs", byte(s[i+3])) >= 0 && s[i+4] == '-' {
		if e := run(r, s, i+5, cSlack); e-(i+5) >= 8 {
			iv = append(iv, span{i, e})
		}
	}
	if f&aCustom != 0 {
		for _, p := range r.prefixes {
			if p[0] == s[i] && hasAt(s, i, p) {
				if e := run(r, s, i+len(p), cTok); e-(i+len(p)) >= 8 {
					iv = append(iv, span{i, e})
				}
			}
		}
		for _, sec := range r.secrets {
			if sec[0] == s[i] && hasAt(s, i, sec) {
				iv = append(iv, span{i, i + len(sec)})
			}
		}
	}
	return iv
}

// jwtEnd returns the end of the JWT starting at s[i] ("eyJ"), or -1.
func jwtEnd[T text](r *Redactor, s T, i int) int {
	j := i + 3
	k := run(r, s, j, cB64URL)
	if k == j || k >= len(s) || s[k] != '.' || !hasAt(s, k+1, "eyJ") {
		return -1
	}
	j = k + 4
	k = run(r, s, j, cB64URL)
	if k == j || k >= len(s) || s[k] != '.' {
		return -1
	}
	return run(r, s, k+1, cB64URL)
}

// pemEnd returns the end of the private key block starting at s[i]
// ("-----BEGIN"), or -1 when the armor is not a private key's. A block
// without its END line runs to the end of s.
func pemEnd[T text](r *Redactor, s T, i int) int {
	j := run(r, s, i+10, cPEM)
	if !hasAt(s, j, "-----") || indexAt(s[i+10:j], 0, "PRIVATE KEY") < 0 {
		return -1
	}
	k := indexAt(s, j+5, "-----END")
	if k < 0 {
		return len(s)
	}
	e := run(r, s, k+8, cPEM)
	if hasAt(s, e, "-----") {
		e += 5
	}
	return e
}

// run returns the end of the run of class bytes starting at s[j].
func run[T text](r *Redactor, s T, j int, class uint16) int {
	for j < len(s) && r.cls[s[j]]&class != 0 {
		j++
	}
	return j
}

// hasAt reports whether s[i:] starts with lit.
func hasAt[T text](s T, i int, lit string) bool {
	if len(s)-i < len(lit) {
		return false
	}
	for k := 0; k < len(lit); k++ {
		if s[i+k] != lit[k] {
			return false
		}
	}
	return true
}

// hasFoldAt is hasAt ignoring ASCII case; lit is lower case.
func hasFoldAt[T text](s T, i int, lit string) bool {
	if len(s)-i < len(lit) {
		return false
	}
	for k := 0; k < len(lit); k++ {
		if s[i+k]|0x20 != lit[k] {
			return false
		}
	}
	return true
}

// indexAt returns the index of the first lit in s at or after from, or -1.
func indexAt[T text](s T, from int, lit string) int {
	for i := from; i+len(lit) <= len(s); i++ {
		if s[i] == lit[0] && hasAt(s, i, lit) {
			return i
		}
	}
	return -1
}

// patternSpans appends the matches of the configured patterns in s.
func patternSpans(res []*regexp.Regexp, s []byte, iv []span) []span {
	for _, re := range res {
		for _, m := range re.FindAllIndex(s, -1) {
			iv = append(iv, span{m[0], m[1]})
		}
	}
	return iv
}

// patternSpansString is patternSpans for a string.
func patternSpansString(res []*regexp.Regexp, s string, iv []span) []span {
	for _, re := range res {
		for _, m := range re.FindAllStringIndex(s, -1) {
			iv = append(iv, span{m[0], m[1]})
		}
	}
	return iv
}

// mergeSpans sorts iv and merges overlapping or touching spans, in place.
func mergeSpans(iv []span) []span {
	if len(iv) < 2 {
		return iv
	}
	// Insertion sort: there are few spans, usually already in order.
	for i := 1; i < len(iv); i++ {
		for j := i; j > 0 && iv[j].lo < iv[j-1].lo; j-- {
			iv[j], iv[j-1] = iv[j-1], iv[j]
		}
	}
	out := iv[:1]
	for _, s := range iv[1:] {
		last := &out[len(out)-1]
		if s.lo <= last.hi {
			last.hi = max(last.hi, s.hi)
			continue
		}
		out = append(out, s)
	}
	return out
}

// RedactString masks the secrets found in the free text s (a text/plain
// body, an error message) with the value rules: built-in tokens, prefixes,
// secrets and patterns. Key names play no part. A string starting with
// "MASKED:" is returned unchanged.
func (r *Redactor) RedactString(s string) string {
	if strings.HasPrefix(s, maskedPrefix) {
		return s
	}
	iv, _ := scanMasks(r, s, 0, 0, nil)
	if len(r.patterns) > 0 {
		iv = patternSpansString(r.patterns, s, iv)
	}
	if len(iv) == 0 {
		return s
	}
	iv = mergeSpans(iv)
	var b strings.Builder
	b.Grow(len(s))
	prev := 0
	for _, m := range iv {
		b.WriteString(s[prev:m.lo])
		b.WriteString(Mask)
		prev = m.hi
	}
	b.WriteString(s[prev:])
	return b.String()
}
