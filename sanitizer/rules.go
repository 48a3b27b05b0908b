package sanitizer

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Mask replaces every redacted value and every redacted part of a string.
const Mask = "[REDACTED]"

// maskedPrefix marks a string that was masked on purpose upstream: as the
// value of a sensitive key it passes unchanged, provided no value rule
// matches inside it.
const maskedPrefix = "MASKED:"

// minSecretLen is the shortest configured secret, in characters, that is
// redacted: shorter ones would mask ordinary text.
const minSecretLen = 4

// maxKeyLen bounds a normalized key name (exclusive), so matching a key fits
// in a stack buffer and its length in a bit set.
const maxKeyLen = 64

// Rules configures a [Redactor]. The zero value means the built-in key
// rule and value patterns only.
type Rules struct {
	// Keys are extra member names whose values are redacted, compared whole
	// after folding ASCII case and removing '-' and '_' ("X-Session" matches
	// "x_session", not "x_session_id"). Empty names are ignored.
	Keys []string
	// Patterns are extra regular expressions (RE2 syntax) whose matches are
	// redacted inside strings. They run on every string, so keep them few.
	Patterns []string
	// Prefixes are extra secret prefixes: a prefix followed by 8 or more of
	// [A-Za-z0-9_.-] is redacted, prefix included (e.g. "pk_live_"). Empty
	// prefixes are ignored.
	Prefixes []string
	// Secrets are known secret values (upstream credentials), redacted
	// wherever they appear inside a string or body, as they are and in the
	// encoded forms New derives from them (URL-escaped, base64, JSON- and
	// XML-escaped, UTF-16). Secrets shorter than 4 characters are ignored,
	// as are those found inside Mask itself.
	Secrets []string
	// Learned, when set, holds secrets the caller learns while serving
	// (OAuth2 access tokens fetched at run time): at every call, the
	// Redactor masks the values it holds at that moment exactly as it
	// masks Secrets, in every encoded form. Several Redactors may share
	// one. nil means none, at no cost.
	Learned *Secrets
	// AllowKeys are member names whose values the key rules leave alone
	// (the built-in word rule and Keys alike), compared as Keys are: for a
	// tool whose job is to return a secret. Value rules still apply to
	// those values: configured Secrets, patterns, prefixes and the built-in
	// value patterns are masked inside them as anywhere else. Names longer
	// than 63 bytes once normalized are ignored.
	AllowKeys []string
	// NoDefaults drops the built-in key rule and value patterns, leaving
	// only what the other fields list.
	NoDefaults bool
	// OnRedact, when set, is called once by every redacting method call
	// that masked something, with the number of values and parts of text
	// it masked (for a metric such as mcpbridge_redactions_total). It runs
	// on the caller's goroutine, possibly concurrently, and must be cheap.
	OnRedact func(n int)
}

// Redactor removes secrets from values, text, JSON documents and bodies of
// any media type. Build it
// with [New]; it is immutable and safe for concurrent use (what
// [Rules.Learned] holds is read at every call, but the rules themselves
// never change). The zero value is not usable.
type Redactor struct {
	words    bool                // the built-in word rule applies
	keys     map[string]struct{} // normalized configured names
	keyBloom [16]uint64          // 1024-bit filter over keyHash of keys
	keyMin   int                 // shortest normalized name (0: no keys)
	keyMax   int                 // longest normalized name
	keyLens  uint64              // bit n set: some normalized name has n bytes
	allow    map[string]struct{} // normalized Rules.AllowKeys; nil: none

	first     [256]uint16 // per byte: anchors it may start, plus fCtl/fEsc
	follow    [256]uint16 // per byte: anchors it may be the second byte of
	third     [256]uint16 // per byte: anchors it may be the third byte of
	cls       [256]uint16 // character classes, see the c* constants
	prefixes  []string
	prefixTok []bool     // prefixes[i] is made of [A-Za-z0-9_.-] only
	lits      []lit      // configured secrets and their encoded forms, by first byte
	litAt     [257]int32 // lits[litAt[c]:litAt[c+1]] start with byte c
	patterns  []*regexp.Regexp
	onRedact  func(int)

	states *sync.Pool // *jsonState, reused by RedactJSON; shared with learned's extensions

	// learned is the view of Rules.Learned (nil: none): r extended with
	// the secrets learned so far (learned.go).
	learned *learnedView
}

// New builds a Redactor from r. It rejects a pattern that does not compile,
// matches the empty string or matches inside [Mask], a prefix containing
// '[' or ']', and a key name longer than 63 bytes once normalized; every
// problem is reported, joined with [errors.Join].
func New(r Rules) (*Redactor, error) {
	var errs []error
	red := &Redactor{keys: make(map[string]struct{}), words: !r.NoDefaults, onRedact: r.OnRedact,
		states: &sync.Pool{New: func() any { return new(jsonState) }}}
	if r.Learned != nil {
		red.learned = &learnedView{set: r.Learned}
	}
	red.initClasses()

	for _, k := range r.Keys {
		n := normalizeKey(k)
		if n == "" {
			continue
		}
		if len(n) >= maxKeyLen {
			errs = append(errs, fmt.Errorf("key name %q: longer than %d bytes", k, maxKeyLen-1))
			continue
		}
		red.keys[n] = struct{}{}
		h := keyHash(n)
		red.keyBloom[(h>>6)&15] |= 1 << (h & 63)
		red.keyMax = max(red.keyMax, len(n))
		if red.keyMin == 0 || len(n) < red.keyMin {
			red.keyMin = len(n)
		}
		red.keyLens |= 1 << len(n)
	}

	for _, k := range r.AllowKeys {
		if n := normalizeKey(k); n != "" && len(n) < maxKeyLen {
			if red.allow == nil {
				red.allow = make(map[string]struct{})
			}
			red.allow[n] = struct{}{}
		}
	}

	for _, p := range r.Patterns {
		re, err := regexp.Compile(p)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("compiling pattern %q: %w", p, err))
		case re.MatchString(""):
			errs = append(errs, fmt.Errorf("pattern %q matches the empty string", p))
		case re.MatchString(Mask):
			errs = append(errs, fmt.Errorf("pattern %q matches inside %s, so redaction would never settle", p, Mask))
		default:
			red.patterns = append(red.patterns, re)
		}
	}

	for _, p := range r.Prefixes {
		if p == "" {
			continue
		}
		if strings.ContainsAny(p, "[]") {
			errs = append(errs, fmt.Errorf("prefix %q: must not contain '[' or ']'", p))
			continue
		}
		if !slices.Contains(red.prefixes, p) {
			red.prefixes = append(red.prefixes, p)
		}
	}
	for _, p := range red.prefixes {
		tok := true
		for i := 0; i < len(p); i++ {
			tok = tok && red.cls[p[i]]&cTok != 0
		}
		red.prefixTok = append(red.prefixTok, tok)
	}
	var lits []lit
	for _, s := range r.Secrets {
		if isSecret(s) {
			lits = append(lits, secretVariants(s)...)
		}
	}
	red.addLits(lits)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	red.initAnchors(!r.NoDefaults)
	return red, nil
}

// isSecret reports whether s is long enough to be masked as a secret
// without masking ordinary text, and not part of Mask.
func isSecret(s string) bool {
	return utf8.RuneCountInString(s) >= minSecretLen && !strings.Contains(Mask, s)
}

// addLits adds the literals of add that r lacks (and that are not part of
// Mask, which would never settle) to r.lits, and indexes them by first
// byte: the scanners compare only the literals that start with the byte
// at hand. It does not set the anchors; it returns the literals added.
func (r *Redactor) addLits(add []lit) []lit {
	have := make(map[string]bool, len(r.lits)+len(add))
	for _, l := range r.lits {
		have[l.s] = true
	}
	n := len(r.lits)
	for _, l := range add {
		if have[l.s] || strings.Contains(Mask, l.s) {
			continue
		}
		have[l.s] = true
		r.lits = append(r.lits, l)
	}
	added := slices.Clone(r.lits[n:])
	slices.SortStableFunc(r.lits, func(a, b lit) int { return int(a.s[0]) - int(b.s[0]) })
	r.litAt = [257]int32{}
	for _, l := range r.lits {
		r.litAt[int(l.s[0])+1]++
	}
	for c := 1; c < len(r.litAt); c++ {
		r.litAt[c] += r.litAt[c-1]
	}
	return added
}

// normalizeKey folds ASCII case and drops '-' and '_', the form in which
// member names are compared.
func normalizeKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '-' || c == '_' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// keyHash is the hash isSensitiveKey computes while normalizing. It sets
// the 0x20 bit of every byte, which folds ASCII case and, for other bytes,
// merely makes the filter a little less selective.
func keyHash(n string) uint32 {
	var h uint32
	for i := 0; i < len(n); i++ {
		h = h*31 + uint32(n[i]|0x20)
	}
	return h
}

// text is what the matchers read: a string or its bytes.
type text interface{ ~string | ~[]byte }

// IsSensitiveKey reports whether the values of a member, field, header,
// element or attribute named name are masked whole: by the built-in word
// rule (unless Rules.NoDefaults) or as one of Rules.Keys. It does not
// allocate.
func (r *Redactor) IsSensitiveKey(name string) bool {
	return isSensitiveKey(r, name)
}

// isSensitiveKey reports whether the member name k (decoded) is a sensitive
// key. It does not allocate.
func isSensitiveKey[T text](r *Redactor, k T) bool {
	return (r.words && mayEnd(k) || r.keyMax != 0) && sensitiveKey(r, k)
}

// sensitiveKey is isSensitiveKey past its inlined first test.
func sensitiveKey[T text](r *Redactor, k T) bool {
	return (r.words && defaultSensitive(k) || r.keyMax != 0 && isConfiguredKey(r, k)) && (r.allow == nil || !isAllowedKey(r, k))
}

// isAllowedKey reports whether k is one of Rules.AllowKeys. It runs only
// for names a key rule matched, so it need not be quick; it does not
// allocate.
func isAllowedKey[T text](r *Redactor, k T) bool {
	var buf [maxKeyLen]byte
	n := 0
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '-' || c == '_' {
			continue
		}
		if n == len(buf) {
			return false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	_, ok := r.allow[string(buf[:n])]
	return ok
}

// isConfiguredKey reports whether k is one of Rules.Keys. A first pass
// hashes the normalized name without storing it; a bloom filter and the
// set of lengths reject most names there. Only the rest are normalized
// into a stack buffer and looked up.
func isConfiguredKey[T text](r *Redactor, k T) bool {
	if r.keyMax == 0 || len(k) < r.keyMin {
		return false
	}
	n := 0
	var h uint32
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '-' || c == '_' {
			continue
		}
		h = h*31 + uint32(c|0x20)
		n++
	}
	if n > r.keyMax || r.keyLens&(1<<n) == 0 || r.keyBloom[(h>>6)&15]&(1<<(h&63)) == 0 {
		return false
	}
	var buf [maxKeyLen]byte
	n = 0
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '-' || c == '_' {
			continue
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	_, ok := r.keys[string(buf[:n])]
	return ok
}
