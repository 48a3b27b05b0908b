package sanitizer

import (
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultKeep is the number of learned secrets a [Secrets] made with
// NewSecrets(0) keeps.
const DefaultKeep = 8

// Secrets is a bounded set of secret values learned while serving, such
// as the OAuth2 access tokens a bridge fetches and rotates: a [Redactor]
// built with it as [Rules.Learned] masks them as it masks [Rules.Secrets]
// (the value and every encoded form New derives), from the moment
// [Secrets.Add] returns. It keeps the most recently added values only, so
// a rotated-out token stays masked for a while (an answer or a log line
// may still carry it) without the set growing without bound.
//
// Secrets is safe for concurrent use. Add is rare and may be slow; the
// Redactors read the set with one atomic load per call and rebuild their
// matching tables once per change. Build it with [NewSecrets]; the zero
// value is not usable.
type Secrets struct {
	keep int
	mu   sync.Mutex // serializes Add
	cur  atomic.Pointer[learnedSet]
}

// learnedSet is one state of a Secrets, never modified once stored: its
// values, oldest first, and the literals the scanners look for.
type learnedSet struct {
	values []string
	lits   []lit
}

// NewSecrets returns an empty set that keeps the keep most recently added
// values; keep <= 0 means [DefaultKeep].
func NewSecrets(keep int) *Secrets {
	if keep <= 0 {
		keep = DefaultKeep
	}
	return &Secrets{keep: keep}
}

// Add makes v a secret for every Redactor that uses s, and reports whether
// it did: values shorter than 4 characters, or found inside [Mask], are
// ignored, as in Rules.Secrets. Adding a value the set already holds makes
// it the most recent again; beyond the set's capacity, the oldest value is
// dropped (and no longer masked).
func (s *Secrets) Add(v string) bool {
	if !isSecret(v) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var values []string
	if old := s.cur.Load(); old != nil {
		if n := len(old.values); old.values[n-1] == v {
			return true
		}
		values = slices.DeleteFunc(slices.Clone(old.values), func(o string) bool { return o == v })
	}
	values = append(values, v)
	if len(values) > s.keep {
		values = values[len(values)-s.keep:]
	}
	set := &learnedSet{values: values}
	for _, v := range values {
		set.lits = append(set.lits, secretVariants(v)...)
	}
	s.cur.Store(set)
	return true
}

// learnedView is a Redactor's view of its Rules.Learned: the Redactor
// extended with the set's current values, rebuilt when the set changes.
type learnedView struct {
	set *Secrets
	ext atomic.Pointer[extension]
}

// extension is a Redactor extended with the values of one learnedSet.
type extension struct {
	from *learnedSet
	r    *Redactor
}

// current is the Redactor every public method matches with: r itself
// when nothing was learned (or no set is configured), otherwise r
// extended with the secrets learned so far. The common case costs a nil
// check; with a set, one atomic load and a comparison.
func (r *Redactor) current() *Redactor {
	if r.learned == nil {
		return r
	}
	return r.learned.redactor(r)
}

// redactor returns base extended with the set's current values, built on
// the first call after each change. Concurrent callers may each build it
// once; the results are equal and the last one stays.
func (v *learnedView) redactor(base *Redactor) *Redactor {
	set := v.set.cur.Load()
	if set == nil {
		return base
	}
	if e := v.ext.Load(); e != nil && e.from == set {
		return e.r
	}
	e := &extension{from: set, r: base.extend(set.lits)}
	v.ext.Store(e)
	return e.r
}

// extend returns a copy of r that also matches the literals lits. The copy
// shares r's read-only parts (key set, patterns, JSON state pool) and has
// no learned view of its own.
func (r *Redactor) extend(lits []lit) *Redactor {
	x := *r
	x.learned = nil
	x.lits = slices.Clone(r.lits)
	for _, l := range x.addLits(lits) {
		x.anchorLit(l.s)
	}
	return &x
}
