package sanitizer

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
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
	aURL                       // ://, a URL that may carry user:password@
	aBasic                     // basic, any case: HTTP Basic credentials
	aQuery                     // ?, &, #, ;: a URL query or fragment pair, a connection-string part
	aKnown                     // npm_, glpat- (GitLab); Stripe's and Google's keys ride on aSK and aAWS

	// fCtl and fEsc mark bytes a raw JSON string body cannot hold as such:
	// control bytes (invalid) and backslashes (an escape follows).
	fCtl
	fEsc
	fQuote

	anchors = aJWT | aSK | aPEM | aAWS | aBearer | aGH | aSlack | aCustom | aURL | aBasic | aQuery | aKnown
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
	cB64Any                     // [A-Za-z0-9+/_-]: either base64 alphabet
	cPEMBody                    // [A-Za-z0-9+/=\t\n\r ]: a PEM block's body
	cUser                       // RFC 3986 userinfo: unreserved, %, sub-delims, ':'
	cQVal                       // a query pair's value: not space, control, or one of &#;,"'<>`\)
)

// span is a half-open byte range to mask.
type span struct{ lo, hi int }

// initClasses fills the character classes and the special bytes of JSON
// strings.
func (r *Redactor) initClasses() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		upper, lower, digit := 'A' <= b && b <= 'Z', 'a' <= b && b <= 'z', '0' <= b && b <= '9'
		alnum := upper || lower || digit
		var f uint16
		if alnum {
			f |= cB64URL | cAlnum | cWord | cSlack | cTok | cBearer | cNoBound | cB64Any | cPEMBody
		}
		if alnum || strings.IndexByte("-._~%!$&'()*+,;=:", b) >= 0 {
			f |= cUser
		}
		if upper || digit {
			f |= cUpNum | cPEM
		}
		if b > ' ' && b != 0x7f && strings.IndexByte("&#;,\"'<>`\\)", b) < 0 {
			f |= cQVal
		}
		switch b {
		case '_':
			f |= cB64URL | cWord | cTok | cBearer | cB64Any
		case '-':
			f |= cB64URL | cSlack | cTok | cBearer | cB64Any
		case '.':
			f |= cTok | cBearer
		case '~':
			f |= cBearer
		case '+', '/':
			f |= cBearer | cB64Any | cPEMBody
		case '=':
			f |= cPEMBody
		case ' ':
			f |= cPEM | cSpace | cPEMBody
		case '\t', '\n', '\r':
			f |= cSpace | cPEMBody
		case '\f':
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

// initAnchors fills the first, follow and third tables for the built-in
// tokens (when defaults) and for the configured prefixes and secrets.
func (r *Redactor) initAnchors(defaults bool) {
	if defaults {
		r.anchor(aJWT, "e", "y", "J")
		// sk- and Stripe's sk_/rk_; AKIA, ASIA and Google's AIza: a
		// wider set there costs the scan less than one of its own, whose
		// bytes would pair with others' ("sp", "Al") in ordinary text.
		r.anchor(aSK, "sr", "k", "-_")
		r.anchor(aPEM, "-", "-", "-")
		r.anchor(aAWS, "A", "KSI", "Iz")
		r.anchor(aBearer, "Bb", "Ee", "Aa")
		r.anchor(aGH, "g", "hi", "pousrt")
		r.anchor(aSlack, "x", "o", "x")
		r.anchor(aURL, ":", "/", "/")
		r.anchor(aBasic, "Bb", "Aa", "Ss")
		// A name starts right after the delimiter: a JSON pointer's "#/"
		// and prose's "; " are not looked at.
		const tok = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
		// '%': a name with percent-encoded bytes (?api%5Fkey=, ?%74oken=)
		// and a whole pair percent-encoded inside another URL's query
		// (%3Faccess_token%3D...).
		r.anchor(aQuery, "?&#;%", tok+"%", tok+"=%")
		r.anchor(aKnown, "ng", "pl", "mp")
	}
	for _, p := range r.prefixes {
		r.anchorLit(p)
	}
	for _, l := range r.lits {
		r.anchorLit(l.s)
	}
}

// anchorLit marks the first three bytes of the literal l as a possible
// start of a configured prefix or secret.
func (r *Redactor) anchorLit(l string) {
	// A literal shorter than three bytes lets any byte follow it.
	l2, l3 := "", ""
	if len(l) > 1 {
		l2 = l[1:2]
	}
	if len(l) > 2 {
		l3 = l[2:3]
	}
	r.anchor(aCustom, l[:1], l2, l3)
}

// anchor adds flag to the first, follow and third tables for the bytes of
// firsts, seconds and thirds; an empty list means any byte.
func (r *Redactor) anchor(flag uint16, firsts, seconds, thirds string) {
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

// Kinds of token that scanState.skip tracks: those whose runs may hold
// another start of the same kind.
const (
	kJWT = iota
	kSK
	kGHPat
	kSlack
	kPrefix
	kB64
	kQuery
	nKinds
)

// scanState keeps a scan linear, whatever the text.
//
// After a kind of token is tried at i, every start of that kind below
// skip[kind] lies inside the run the try at i read, so it would end where
// that try ended and match nothing new: "sk-sk-sk-..." is read once, not
// once per "sk-". The prefix window starts at prefixFrom, after the prefix
// itself, and only applies to prefixes made of run bytes.
//
// A PEM block ends at the first END line after its BEGIN line; pemFrom and
// pemAt remember the last search (pemAt -1: none found), which serves every
// later block whose search starts between the two.
//
// probe asks only whether a token starts: a PEM block then ends after its
// BEGIN line instead of being followed to its END line.
//
// bin scans a binary body: a PEM block without its END line ends with its
// base64 body instead of running to the end of the input.
type scanState struct {
	skip        [nKinds]int
	prefixFrom  int
	pemFrom     int
	pemAt       int
	pemSearched bool
	probe       bool
	bin         bool
}

// scanMasks appends to iv the spans of s matched by the built-in tokens,
// prefixes and secrets that start at or after from, unsorted. Patterns are
// not run here.
func scanMasks[T text](r *Redactor, s T, from int, iv []span) []span {
	return scanMasksMode(r, s, from, iv, false)
}

// scanMasksMode is scanMasks, for a binary body when bin is set.
func scanMasksMode[T text](r *Redactor, s T, from int, iv []span, bin bool) []span {
	st := scanState{bin: bin}
	// Every token is longer than two bytes, so the last two bytes of s
	// cannot start one.
	for i, n2 := from, len(s)-2; i < n2; i++ {
		if g := r.first[s[i]] & r.follow[s[i+1]]; g != 0 {
			if g &= r.third[s[i+2]]; g != 0 {
				iv = matchAt(r, &st, s, i, g, iv)
			}
		}
	}
	return iv
}

// matchAt appends the spans of the tokens starting at s[i] among the kinds
// in f. Calls on one scan must come with rising i.
func matchAt[T text](r *Redactor, st *scanState, s T, i int, f uint16, iv []span) []span {
	n := len(s)
	word := i == 0 || r.cls[s[i-1]]&cNoBound == 0
	if f&aJWT != 0 && i >= st.skip[kJWT] && hasAt(s, i, "eyJ") {
		e, next := jwtEnd(r, s, i)
		if e > 0 {
			iv = append(iv, span{i, e})
		}
		st.skip[kJWT] = next
	}
	if f&aSK != 0 && i >= st.skip[kSK] && word && hasAt(s, i, "sk-") {
		e := run(r, s, i+3, cB64URL)
		if e-(i+3) >= 20 {
			iv = append(iv, span{i, e})
		}
		st.skip[kSK] = e
	}
	if f&aPEM != 0 && hasAt(s, i, "-----BEGIN") {
		if e := pemEnd(r, st, s, i); e > 0 {
			iv = append(iv, span{i, e})
		}
	}
	if f&aAWS != 0 && word && (hasAt(s, i, "AKIA") || hasAt(s, i, "ASIA")) {
		// Inside the run nothing starts a word: no skip needed.
		if e := run(r, s, i+4, cUpNum); e-(i+4) >= 16 {
			iv = append(iv, span{i, e})
		}
	}
	if f&aBearer != 0 && hasFoldAt(s, i, "bearer") {
		// The token run stops at white space, so it never holds another
		// "bearer" with its space: no skip needed.
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
	if f&aBasic != 0 && hasFoldAt(s, i, "basic") {
		// "Basic" and the base64 of user:password (RFC 7617), as a header
		// echoed in a list of pairs, a HAR file or a log line shows it:
		// masked when the run decodes, padded, to printable text with a
		// colon, which prose after the word "basic" does not.
		if j := run(r, s, i+5, cSpace); j > i+5 {
			e := run(r, s, j, cBearer)
			for e < n && s[e] == '=' {
				e++
			}
			if e-j >= 8 && basicCredentials(string(s[j:e])) {
				iv = append(iv, span{j, e})
			}
		}
	}
	if f&aGH != 0 && word {
		if i+3 < n && s[i+1] == 'h' && strings.IndexByte("pousr", byte(s[i+2])) >= 0 && s[i+3] == '_' {
			// The run is alphanumeric: it holds no other "gh?_".
			if e := run(r, s, i+4, cAlnum); e-(i+4) >= 16 {
				iv = append(iv, span{i, e})
			}
		} else if i >= st.skip[kGHPat] && hasAt(s, i, "github_pat_") {
			e := run(r, s, i+11, cWord)
			if e-(i+11) >= 16 {
				iv = append(iv, span{i, e})
			}
			st.skip[kGHPat] = e
		}
	}
	if f&aSlack != 0 && i >= st.skip[kSlack] && word && i+4 < n && hasAt(s, i, "xox") &&
		strings.IndexByte("baprs", byte(s[i+3])) >= 0 && s[i+4] == '-' {
		e := run(r, s, i+5, cSlack)
		if e-(i+5) >= 8 {
			iv = append(iv, span{i, e})
		}
		st.skip[kSlack] = e
	}
	if f&aURL != 0 && hasAt(s, i, "://") {
		// scheme://user:password@host: the password. The userinfo run
		// holds no '/', so it never reaches the next "://": no skip needed.
		j := i + 3
		e := run(r, s, j, cUser)
		if e < n && s[e] == '@' {
			for k := j; k < e; k++ {
				if s[k] == ':' {
					if e > k+1 {
						iv = append(iv, span{k + 1, e})
					}
					break
				}
			}
		}
	}
	if f&(aSK|aAWS|aKnown) != 0 && word {
		if e := knownEnd(r, s, i); e > i {
			iv = append(iv, span{i, e})
		}
	}
	if f&aQuery != 0 && i >= st.skip[kQuery] {
		if lo, hi, plain := queryValue(r, s, i); hi > lo {
			iv = append(iv, span{lo, hi})
			if plain {
				// A pair starting inside a value read to its end ends
				// there too: "?token=x?token=x..." is read once.
				st.skip[kQuery] = hi
			}
		}
	}
	if f&aCustom != 0 {
		inWindow := st.prefixFrom <= i && i < st.skip[kPrefix]
		for k, p := range r.prefixes {
			tok := r.prefixTok[k]
			if inWindow && tok || p[0] != s[i] || !hasAt(s, i, p) {
				continue
			}
			if e := run(r, s, i+len(p), cTok); e-(i+len(p)) >= 8 {
				iv = append(iv, span{i, e})
				if tok && e > st.skip[kPrefix] {
					st.prefixFrom, st.skip[kPrefix] = i+len(p), e
				}
			}
		}
		c := int(s[i])
		for k := r.litAt[c]; k < r.litAt[c+1]; k++ {
			l := &r.lits[k]
			if l.b64 && i < st.skip[kB64] || !hasAt(s, i, l.s) {
				continue
			}
			lo, hi := i, i+len(l.s)
			if l.b64 {
				// Every later base64 form starting inside this run would
				// grow into the same span.
				for lo > 0 && r.cls[s[lo-1]]&cB64Any != 0 {
					lo--
				}
				hi = run(r, s, hi, cB64Any)
				for hi < n && s[hi] == '=' {
					hi++
				}
				st.skip[kB64] = hi
			}
			iv = append(iv, span{lo, hi})
		}
	}
	return iv
}

// knownEnd returns the end of the vendor token starting at s[i], or -1:
// Stripe's secret and restricted keys (sk_live_, sk_test_, rk_live_,
// rk_test_, then 16 or more of [A-Za-z0-9]), Google API keys (AIza then 35
// of [A-Za-z0-9_-]), npm tokens (npm_ then 36 of [A-Za-z0-9]) and GitLab
// personal access tokens (glpat- then 20 or more of [A-Za-z0-9_-]). Each
// run is of one class, so it holds no other start of the same kind.
func knownEnd[T text](r *Redactor, s T, i int) int {
	switch {
	case hasAt(s, i, "sk_live_"), hasAt(s, i, "sk_test_"), hasAt(s, i, "rk_live_"), hasAt(s, i, "rk_test_"):
		if e := run(r, s, i+8, cAlnum); e-(i+8) >= 16 {
			return e
		}
	case hasAt(s, i, "AIza"):
		if e := run(r, s, i+4, cB64URL); e-(i+4) == 35 {
			return e
		}
	case hasAt(s, i, "npm_"):
		if e := run(r, s, i+4, cAlnum); e-(i+4) == 36 {
			return e
		}
	case hasAt(s, i, "glpat-"):
		if e := run(r, s, i+6, cB64URL); e-(i+6) >= 20 {
			return e
		}
	}
	return -1
}

// queryValue returns the span of the value of the pair "NAME=value" that
// follows s[i] ('?', '&', '#' or ';') when NAME is a sensitive key: a
// credential in a URL's query or fragment ("?access_token=...",
// "&api_key=...", "#access_token=..." of an OAuth implicit grant,
// "&amp;token=..." in HTML) or a connection string (";Password=...;",
// ";AccountKey=..."). A name after "; " is not looked for: prose holds
// many, and a cookie list sits under a Cookie name the key rule masks. The names are those whose JSON values are masked, so
// paging cursors (nextPageToken, cursor) and signatures of pre-signed URLs
// (sig, X-Amz-Signature) stay readable. The value ends at '&', '#', ';',
// ',', white space, a control byte, a quote, '<', '>', '\' or ')'. A
// value that starts with Mask, or that keepMasked keeps, is left alone.
//
// Percent-encoding does not hide a pair: the name is read decoded
// (?api%5Fkey=, ?%74oken=), its '=' may be %3D, and a pair quoted inside
// another URL's query, every delimiter encoded
// (?next=https%3A%2F%2Fh%2Fcb%3Faccess_token%3DSECRET%26page%3D2), is
// found after its %3F, %26, %23 or %3B; its value then also ends at the
// next encoded '&', '#' or ';'.
// lo == hi means none. plain reports a value read to the end of its run
// (the delimiter was not encoded).
func queryValue[T text](r *Redactor, s T, i int) (lo, hi int, plain bool) {
	n := len(s)
	j := i + 1
	encoded := false // the delimiter itself was percent-encoded
	if s[i] == '%' {
		if i+2 >= n || !isQueryDelim(pctAt(s, i)) {
			return 0, 0, false
		}
		j, encoded = i+3, true
	}
	// The name, decoded: plain names (the usual case) are read in place.
	var buf [maxKeyLen]byte
	nb, plain := 0, true
	k := j
	for k < n && nb < maxKeyLen {
		c := s[k]
		w := 1
		if c == '%' {
			if c = pctAt(s, k); c == 0 {
				break
			}
			w, plain = 3, false
		}
		if r.cls[c]&cTok == 0 {
			break
		}
		buf[nb] = c
		nb++
		k += w
	}
	if nb == 0 || k+1 >= n {
		return 0, 0, false
	}
	switch {
	case s[k] == '=':
		lo = k + 1
	case s[k] == '%' && pctAt(s, k) == '=' && k+3 < n:
		lo = k + 3
	default:
		return 0, 0, false
	}
	if plain && !isSensitiveKey(r, s[j:k]) || !plain && !isSensitiveKey(r, buf[:nb]) {
		return 0, 0, false
	}
	if encoded {
		// One pass that stops at the next encoded delimiter: reading the
		// whole run first made "%26token%3Dx" repeated quadratic.
		hi = lo
		for hi < n && r.cls[s[hi]]&cQVal != 0 && (s[hi] != '%' || !isQueryDelim(pctAt(s, hi))) {
			hi++
		}
	} else {
		hi = run(r, s, lo, cQVal)
	}
	if hi == lo || hasAt(s, lo, Mask) || keepMasked(r, s[lo:hi]) {
		return 0, 0, false
	}
	return lo, hi, !encoded
}

// pctAt returns the byte that the escape "%XX" at s[i] encodes, or 0 when
// s[i:] does not start with one (or encodes NUL).
func pctAt[T text](s T, i int) byte {
	if i+2 >= len(s) || s[i] != '%' || !isHex(s[i+1]) || !isHex(s[i+2]) {
		return 0
	}
	return unhex(s[i+1])<<4 | unhex(s[i+2])
}

// isQueryDelim reports whether c starts a query pair: '?', '&', '#', ';'.
func isQueryDelim(c byte) bool { return c == '?' || c == '&' || c == '#' || c == ';' }

// jwtEnd returns the end of the JWT starting at s[i] ("eyJ"), or -1, and
// the end of its first segment: no JWT starting before that can end
// elsewhere.
func jwtEnd[T text](r *Redactor, s T, i int) (end, next int) {
	j := i + 3
	k := run(r, s, j, cB64URL)
	next = k
	if k == j || k >= len(s) || s[k] != '.' || !hasAt(s, k+1, "eyJ") {
		return -1, next
	}
	j = k + 4
	k = run(r, s, j, cB64URL)
	if k == j || k >= len(s) || s[k] != '.' {
		return -1, next
	}
	return run(r, s, k+1, cB64URL), next
}

// pemEnd returns the end of the private key block starting at s[i]
// ("-----BEGIN"), or -1 when the armor is not a private key's. A block
// without its END line runs to the end of s. A probe ends the block after
// its BEGIN line.
func pemEnd[T text](r *Redactor, st *scanState, s T, i int) int {
	j := run(r, s, i+10, cPEM)
	if !hasAt(s, j, "-----") || indexAt(s[i+10:j], 0, "PRIVATE KEY") < 0 {
		return -1
	}
	j += 5
	if st.probe {
		return j
	}
	if !st.pemSearched || j < st.pemFrom || st.pemAt >= 0 && j > st.pemAt {
		st.pemSearched, st.pemFrom, st.pemAt = true, j, indexAt(s, j, "-----END")
	}
	k := st.pemAt
	if k < 0 {
		if st.bin {
			return run(r, s, j, cPEMBody)
		}
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
	if len(iv) <= 16 {
		// Insertion sort: there are few spans, usually already in order.
		for i := 1; i < len(iv); i++ {
			for j := i; j > 0 && iv[j].lo < iv[j-1].lo; j-- {
				iv[j], iv[j-1] = iv[j-1], iv[j]
			}
		}
	} else {
		slices.SortFunc(iv, func(a, b span) int { return cmp.Compare(a.lo, b.lo) })
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
// secrets and their encoded forms, and patterns. Key names play no part,
// and neither does a leading "MASKED:".
func (r *Redactor) RedactString(s string) string {
	r = r.current()
	out, n := r.redactString(s)
	r.counted(n)
	return out
}

// counted reports n masks to the OnRedact hook.
func (r *Redactor) counted(n int) {
	if n > 0 && r.onRedact != nil {
		r.onRedact(n)
	}
}

// redactString is RedactString, returning the number of masks.
func (r *Redactor) redactString(s string) (string, int) {
	return r.redactSpans(s, nil)
}

// redactSpans is redactString with the spans iv masked too.
func (r *Redactor) redactSpans(s string, iv []span) (string, int) {
	iv = scanMasks(r, s, 0, iv)
	if len(r.patterns) > 0 {
		iv = patternSpansString(r.patterns, s, iv)
	}
	if len(iv) == 0 {
		return s, 0
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
	return b.String(), len(iv)
}

// matches reports whether a value rule matches in s.
func matches[T text](r *Redactor, s T) bool {
	return matchesMode(r, s, false)
}

// keepMasked reports whether v, the value of a sensitive key, passes
// unchanged: it starts with "MASKED:" and no value rule matches in it.
func keepMasked[T text](r *Redactor, v T) bool {
	return hasAt(v, 0, maskedPrefix) && !matches(r, v)
}

// TailGuard is how many bytes text cut at a size limit must lose at its
// end so that no part of a configured secret, or of one of its encoded
// forms, can remain there: one less than the longest such form (0 with no
// secret). Text cut inside a secret ends with part of it, which matches
// no rule; cut text, redacted, is shortened by this much.
//
// The amount depends on the secrets' lengths alone, never on the bytes at
// the end: trimming just the part of a secret found there would let
// whoever chooses the text (an agent that has the upstream echo it, padded
// to the limit) learn from the cut whether its guess starts the secret,
// and so read the secret one character at a time.
func (r *Redactor) TailGuard() int {
	r = r.current()
	n := 0
	for _, l := range r.lits {
		n = max(n, len(l.s)-1)
	}
	return n
}

// basicCredentials reports whether b64 is padded standard base64 of
// printable text holding a colon: an RFC 7617 user-id:password.
func basicCredentials(b64 string) bool {
	if len(b64)%4 != 0 {
		return false
	}
	dec, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || !bytes.ContainsRune(dec, ':') || !utf8.Valid(dec) {
		return false
	}
	for _, r := range string(dec) {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
