package sanitizer

import (
	"encoding/binary"
	"strings"
)

// The built-in key rule: a member name is split into words and its last
// word (the head noun of the name) decides. See the package documentation,
// "Key names", for the rule in prose; keys_test.go holds the table.

// maxWordLen bounds a word that is compared; longer words never match.
const maxWordLen = 32

// isWordByte reports whether c belongs to a word: an ASCII letter or digit,
// or any non-ASCII byte.
func isWordByte(c byte) bool {
	return c >= 0x80 || 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9'
}

func isUpper(c byte) bool      { return 'A' <= c && c <= 'Z' }
func isLowerDigit(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// lastWord returns the bounds of the last word of k[:end], or s < 0 when
// there is none. Words are runs of word bytes, cut where camelCase starts a
// new word: before an upper-case letter that follows a lower-case letter
// or a digit ("accessToken"), and before the last capital of a run of them
// when a lower-case letter follows ("APIKey").
func lastWord[T text](k T, end int) (s, e int) {
	e = end
	for e > 0 && !isWordByte(k[e-1]) {
		e--
	}
	if e == 0 {
		return -1, 0
	}
	s = e - 1
	for s > 0 && isWordByte(k[s-1]) {
		p, c := k[s-1], k[s]
		if isUpper(c) && (isLowerDigit(p) || isUpper(p) && s+1 < e && 'a' <= k[s+1] && k[s+1] <= 'z') {
			break
		}
		s--
	}
	return s, e
}

// lowerWord copies w, ASCII lower-cased, into buf; nil when w is longer
// than maxWordLen.
func lowerWord[T text](buf *[maxWordLen]byte, w T) []byte {
	if len(w) > maxWordLen {
		return nil
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(w)]
}

// endsWith reports whether w ends with lit.
func endsWith(w []byte, lit string) bool {
	return len(w) >= len(lit) && string(w[len(w)-len(lit):]) == lit
}

// endsWithAny reports whether w ends with one of lits.
func endsWithAny(w []byte, lits []string) bool {
	for _, l := range lits {
		if endsWith(w, l) {
			return true
		}
	}
	return false
}

var (
	// keyQualifiers make "key" sensitive: api_key, accessKey, secret-key...
	keyQualifiers = []string{"api", "access", "secret", "private", "auth", "session", "signing",
		"encryption", "master", "license", "subscription", "client", "shared", "account", "app"}
	// tokenNotSecret make "token" harmless: paging cursors and anti-forgery
	// tokens the agent needs to see (nextPageToken, csrf_token).
	tokenNotSecret = []string{"next", "page", "continuation", "pagination", "sync", "cursor",
		"resume", "start", "starting", "prev", "previous", "csrf", "xsrf", "skip", "delta",
		"change", "idempotency"}
	// secretStems are sensitive as a word or as the end of one ("dbpassword").
	secretStems = []string{"password", "passwd", "passphrase", "secret", "credential",
		"credentials", "cookie", "authorization", "sessionid", "sessid"}
)

// Kinds of member name for name/value pairs (kvKind).
const (
	kvNone  uint8 = iota
	kvLabel       // "name" or "key", any case: names what "value" holds
	kvValue       // "value", any case
)

// kvKind tells whether the member name k is a label or value name.
func kvKind(k string) uint8 {
	switch {
	case len(k) == 3 && strings.EqualFold(k, "key"), len(k) == 4 && strings.EqualFold(k, "name"):
		return kvLabel
	case len(k) == 5 && strings.EqualFold(k, "value"):
		return kvValue
	}
	return kvNone
}

// kvKindBytes is kvKind for the JSON scanner, cheap enough to be inlined:
// it folds case with one OR over the loaded bytes.
func kvKindBytes(k []byte) uint8 {
	switch {
	case len(k) == 3 && (uint32(k[0])|uint32(k[1])<<8|uint32(k[2])<<16)|0x202020 == 'k'|'e'<<8|'y'<<16,
		len(k) == 4 && binary.LittleEndian.Uint32(k)|0x20202020 == 'n'|'a'<<8|'m'<<16|'e'<<24:
		return kvLabel
	case len(k) == 5 && binary.LittleEndian.Uint32(k)|0x20202020 == 'v'|'a'<<8|'l'<<16|'u'<<24 && k[4]|0x20 == 'e':
		return kvValue
	}
	return kvNone
}

// isValueTail reports whether w merely says which form of the value
// precedes it (SecretString, password_hash): the word before decides.
func isValueTail(w []byte) bool {
	switch string(w) {
	case "value", "string", "binary", "hash", "digest", "plaintext":
		return true
	}
	return false
}

// stemFilter is a bloom filter over the reversed hashes (see stemHash) of
// every word end the rule looks at, with stemLens their lengths: most
// names fail it after hashing their last word once.
var stemFilter, stemLens = func() (f [64]uint64, lens uint64) {
	ends := []string{"token", "key", "sessionid", "pwd", "value", "string", "binary", "hash", "digest", "plaintext"}
	for _, w := range append(ends, secretStems...) {
		h := uint32(0)
		for i := len(w) - 1; i >= 0; i-- {
			h = h*31 + uint32(w[i])
		}
		b := stemBit(h, len(w))
		f[b>>6] |= 1 << (b & 63)
		lens |= 1 << len(w)
	}
	return f, lens
}()

// endPairs has bit (a&31)<<5|(b&31) set for the last two bytes a, b of
// every word end in stemFilter: the first, cheapest test.
var endPairs = func() (f [16]uint64) {
	ends := []string{"token", "key", "id", "pwd", "value", "string", "binary", "hash", "digest", "plaintext"}
	for _, w := range append(ends, secretStems...) {
		b := uint32(w[len(w)-2]&31)<<5 | uint32(w[len(w)-1]&31)
		f[b>>6] |= 1 << (b & 63)
	}
	return f
}()

// mayEnd is the first test, cheap enough to be inlined: whether the last
// two bytes of k are those of a word end the rule looks at, or k ends with
// a byte below 'A' or '_' (a separator or a digit: the rest decides).
func mayEnd[T text](k T) bool {
	n := len(k) - 1
	if n < 2 { // no name shorter than "pwd" is sensitive ("id" is common)
		return false
	}
	c := k[n]
	b := uint32(k[n-1]&31)<<5 | uint32(c&31)
	return endPairs[b>>6]>>(b&63)&1 != 0 || c < 'A' || c == '_'
}

// stemBit is the filter bit of a word end of n bytes with reversed hash h.
func stemBit(h uint32, n int) uint32 { return (h + uint32(n)) * 0x9e3779b1 >> 20 }

// mayBeSensitive is the quick test: whether some end of the last word of
// k, lower-cased, passes stemFilter.
func mayBeSensitive[T text](k T) bool {
	e := len(k)
	for e > 0 && !isWordByte(k[e-1]) {
		e--
	}
	if e < 2 {
		return false
	}
	if b := uint32(k[e-2]&31)<<5 | uint32(k[e-1]&31); endPairs[b>>6]&(1<<(b&63)) == 0 {
		return false
	}
	var h uint32
	s := e - 1
	for ; s >= 0 && isWordByte(k[s]); s-- {
		h = h*31 + uint32(k[s]|0x20) // folds ASCII letters, keeps digits
		n := e - s
		if n > maxStemLen {
			return false
		}
		if stemLens&(1<<n) != 0 {
			if b := stemBit(h, n); stemFilter[b>>6]&(1<<(b&63)) != 0 {
				return true
			}
		}
	}
	// "session_id": the run is "id", the word before it says what id.
	if e-s-1 == 2 && k[e-2]|0x20 == 'i' && k[e-1]|0x20 == 'd' {
		for s >= 0 && !isWordByte(k[s]) {
			s--
		}
		const sess = "session"
		if s+1 < len(sess) {
			return false
		}
		for i := 0; i < len(sess); i++ {
			if k[s-len(sess)+1+i]|0x20 != sess[i] {
				return false
			}
		}
		return true
	}
	return false
}

// maxStemLen is the length of the longest word end in stemFilter.
const maxStemLen = len("authorization")

// defaultSensitive applies the built-in word rule to the member name k.
// It does not allocate.
func defaultSensitive[T text](k T) bool {
	if !mayBeSensitive(k) {
		return false
	}
	s, e := lastWord(k, len(k))
	if s < 0 {
		return false
	}
	var buf, pbuf [maxWordLen]byte
	w := lowerWord(&buf, k[s:e])
	if w == nil {
		return false
	}
	if isValueTail(w) {
		if s, e = lastWord(k, s); s < 0 {
			return false
		}
		if w = lowerWord(&buf, k[s:e]); w == nil {
			return false
		}
	}
	// prev lower-cases the word before w, if any.
	prev := func() []byte {
		ps, pe := lastWord(k, s)
		if ps < 0 {
			return nil
		}
		return lowerWord(&pbuf, k[ps:pe])
	}
	switch {
	case endsWith(w, "token"):
		if len(w) > len("token") {
			return !endsWithAny(w[:len(w)-len("token")], tokenNotSecret)
		}
		p := prev()
		return p == nil || !endsWithAny(p, tokenNotSecret)
	case endsWith(w, "key"):
		if len(w) > len("key") {
			return endsWithAny(w[:len(w)-len("key")], keyQualifiers)
		}
		p := prev()
		return p != nil && endsWithAny(p, keyQualifiers)
	case string(w) == "id":
		p := prev()
		return p != nil && endsWith(p, "session")
	case endsWith(w, "pwd"):
		// "PWD" alone is the working directory; "db_pwd" is a password.
		return len(w) > len("pwd") || prev() != nil
	}
	return endsWithAny(w, secretStems)
}
