package schema

import (
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxRemovedListed bounds the removed locations [Reduce] lists.
const maxRemovedListed = 20

// Reduction is what [Reduce] did to a value.
type Reduction struct {
	// Removed lists the JSON pointers of the object members and array
	// items that were removed, at most 20 of them.
	Removed []string
	// Count is the number of removals (Removed may list fewer).
	Count int
	// First is the first difference between the value and the schema,
	// as "pointer: reason" (no value quoted).
	First string
}

// Reduce makes v, a JSON value decoded into any (numbers as float64 or
// json.Number), conform to root by removing the object members and array
// items that do not conform to their subschemas, deepest first: a member
// whose value can be repaired by removals inside it is kept. It modifies v
// in place and returns what remains, and ok=false when no removal makes
// the whole value conform (a scalar of the wrong type at the root, a
// required member that cannot be kept). A value that already conforms
// comes back unchanged with a zero Reduction.
//
// The conformance test is this package's own checker, which knows where a
// value fails; callers should still validate the result with the real
// validator before relying on it.
func Reduce(v any, root *jsonschema.Schema) (out any, red Reduction, ok bool) {
	r := reducer{k: newChecker(root)}
	if f := r.k.check(v, root, nil); f != nil {
		r.red.First = f.String()
	} else {
		return v, r.red, true
	}
	out, ok = r.prune(v, root, nil, 0)
	return out, r.red, ok
}

type reducer struct {
	k      *checker
	red    Reduction
	trials int
}

func (r *reducer) removed(path []string) {
	r.red.Count++
	if len(r.red.Removed) < maxRemovedListed {
		r.red.Removed = append(r.red.Removed, (&failure{path: path}).Where())
	}
}

// prune returns v with the non-conforming parts removed and whether the
// result conforms to s.
func (r *reducer) prune(v any, s *jsonschema.Schema, path []string, depth int) (any, bool) {
	k := r.k
	if s == nil || depth > checkMaxDepth || k.checkDepth(v, s, path, depth) == nil {
		return v, true
	}
	if isFalse(s) || k.scalar(v, s, path) != nil {
		return v, false // nothing inside v can fix its type, enum or bounds
	}
	ok := true
	if t := k.ref(s); t != nil {
		if v, ok = r.prune(v, t, path, depth+1); !ok {
			return v, false
		}
	}
	for _, sub := range s.AllOf {
		if v, ok = r.prune(v, sub, path, depth+1); !ok {
			return v, false
		}
	}
	for _, alts := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf} {
		if len(alts) == 0 {
			continue
		}
		if v, ok = r.prune(v, r.branchFor(v, alts, path, depth), path, depth+1); !ok {
			return v, false
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, name := range sortedKeys(x) {
			p := append(path, name)
			if s.PropertyNames != nil && k.checkDepth(name, s.PropertyNames, p, depth+1) != nil {
				delete(x, name)
				r.removed(p)
				continue
			}
			subs := k.propertySchemas(s, name)
			if s.UnevaluatedProperties != nil && !k.evaluatesProperty(s, name, 0) {
				subs = append(subs, s.UnevaluatedProperties)
			}
			val := x[name]
			keep := true
			for _, sub := range subs {
				if val, keep = r.prune(val, sub, p, depth+1); !keep {
					break
				}
			}
			if keep {
				x[name] = val
			} else {
				delete(x, name)
				r.removed(p)
			}
		}
	case []any:
		kept := x[:0]
		for i, item := range x {
			p := append(path, strconv.Itoa(i))
			if i < len(s.PrefixItems) {
				// Positional: removing an item would move the others.
				nv, keep := r.prune(item, s.PrefixItems[i], p, depth+1)
				if !keep {
					return v, false
				}
				kept = append(kept, nv)
				continue
			}
			sub := s.Items
			if sub == nil && len(s.PrefixItems) == 0 {
				sub = s.UnevaluatedItems
			}
			if nv, keep := r.prune(item, sub, p, depth+1); keep {
				kept = append(kept, nv)
			} else {
				r.removed(p)
			}
		}
		v = kept
	}
	return v, k.checkDepth(v, s, path, depth) == nil
}

// maxTrials bounds the trial reductions of anyOf/oneOf branches in one
// [Reduce]; past it, branches are chosen by where they fail.
const maxTrials = 256

// branchFor picks the anyOf/oneOf branch v was meant for: the one that
// admits it once the fewest parts are removed (tried on a copy), else the
// one whose failure went deepest.
func (r *reducer) branchFor(v any, alts []*jsonschema.Schema, path []string, depth int) *jsonschema.Schema {
	if r.trials < maxTrials {
		var pick *jsonschema.Schema
		fewest := -1
		for _, sub := range alts {
			r.trials++
			trial := reducer{k: r.k, trials: maxTrials} // no nested trials
			if _, ok := trial.prune(CopyJSON(v), sub, path, depth+1); ok && (fewest < 0 || trial.red.Count < fewest) {
				pick, fewest = sub, trial.red.Count
			}
		}
		if pick != nil {
			return pick
		}
	}
	return r.k.branchFor(v, alts, path, depth)
}

// CopyJSON copies the objects and arrays of a decoded JSON value.
func CopyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = CopyJSON(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = CopyJSON(e)
		}
		return a
	}
	return v
}
