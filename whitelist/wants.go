package whitelist

import (
	"slices"
	"strings"
)

// Wants reports whether some entry of p could select the operation with
// this method (any case), path template (as written under the spec's
// paths), operationId and tags, by the rules of [Policy.Select]: method and
// path compared by shape, operationId exactly, tag by membership. It is
// always true for a policy with All, and false for a nil or empty policy.
//
// Wants is a prefilter for loading only what a whitelist needs (it fits
// specloader's Options.Keep): cheap, allocation-free, and conservative. It
// never returns false for an operation Select would pick from the whole
// document, but it may return true for more: every operation of an
// ambiguous shape, and whatever an invalid entry would match on any of its
// selectors (Select then fails anyway). Select on the document loaded this
// way picks what it picks on the whole document, and fails when it fails
// there, only with suggestions drawn from what was loaded.
func (p *Policy) Wants(method, path, operationID string, tags []string) bool {
	if p == nil {
		return false
	}
	if p.All {
		return true
	}
	var buf [256]byte
	var opShape []byte // computed on the first entry that needs it
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.OperationID != "" && e.OperationID == operationID {
			return true
		}
		if e.Tag != "" && slices.Contains(tags, e.Tag) {
			return true
		}
		if e.Path == "" || e.Method != "" && !strings.EqualFold(e.Method, method) {
			continue
		}
		if opShape == nil {
			opShape = appendShape(buf[:0], path)
		}
		if sameShape(opShape, e.Path) {
			return true
		}
	}
	return false
}

// sameShape reports whether path has the given shape, without allocating.
func sameShape(shape []byte, path string) bool {
	var buf [256]byte
	return string(appendShape(buf[:0], path)) == string(shape)
}
