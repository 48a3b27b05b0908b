package bridge_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/schema"
)

// TestCorpusFastCheck compares the one-pass output checker
// (schema.CompileFast) with the full validator over every tolerant output
// schema of the corpus: answers generated from each schema, then mutated
// at random (a value of another type, a member removed, an extra one).
// The fast checker must never accept what the validator rejects (it is
// what lets a conforming answer skip the validator), and it must accept
// nearly every conforming answer, or it saves nothing.
func TestCorpusFastCheck(t *testing.T) {
	attempts := 4
	if bridge.RaceEnabled {
		attempts = 1 // the run without -race (CI's corpus step) does them all
	}
	type stats struct{ schemas, compiled, valid, fastValid, rejected, mutants int }
	var out, in stats
	for _, name := range corpusFiles(t) {
		if bridge.RaceEnabled && corpusLarge(name) {
			continue // checked without -race (CI's corpus step)
		}
		res, err := corpusLoad(t, name)
		if err != nil {
			continue // the corpus test reports load failures
		}
		cat, _ := corpusBridge(t, res, "http://127.0.0.1:1", nil)
		for _, def := range cat.OperationDefs() {
			for _, side := range []struct {
				st     *stats
				schema any
				args   bool
			}{{&out, def.OutputSchema, false}, {&in, def.InputSchema, true}} {
				if side.schema == nil {
					continue
				}
				fastCheckOne(t, name+" "+def.Name, side.schema, side.args, attempts, &side.st.schemas, &side.st.compiled, &side.st.valid, &side.st.fastValid, &side.st.rejected, &side.st.mutants)
			}
		}
	}
	for _, r := range []struct {
		what string
		st   stats
		min  int // percent of schemas the checker must compile
	}{{"tolerant output", out, 99}, {"input", in, 80}} {
		st := r.st
		t.Logf("%s schemas: %d, %d compiled by the fast checker; %d conforming documents, %d accepted in one pass; %d rejected (%d mutants)",
			r.what, st.schemas, st.compiled, st.valid, st.fastValid, st.rejected, st.mutants)
		if st.schemas > 0 && st.compiled*100 < st.schemas*r.min {
			t.Errorf("%s: the fast checker compiles %d of %d schemas, want at least %d%%", r.what, st.compiled, st.schemas, r.min)
		}
		if st.valid > 0 && st.fastValid*100 < st.valid*r.min {
			t.Errorf("%s: the fast checker accepts %d of %d conforming documents, want at least %d%%", r.what, st.fastValid, st.valid, r.min)
		}
	}
}

// fastCheckOne generates documents for one schema and compares the fast
// checker with the validator on each.
func fastCheckOne(t *testing.T, label string, sch any, args bool, attempts int, schemas, compiled, valid, fastValid, rejected, mutants *int) {
	t.Helper()
	raw, err := json.Marshal(sch)
	if err != nil {
		t.Fatal(err)
	}
	*schemas++
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	fast := schema.CompileFast(&s, args)
	if fast == nil {
		return
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return // the corpus test reports schemas that do not resolve
	}
	*compiled++
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for attempt := range attempts {
		v, err := genArgs(m, attempt, true)
		if err != nil {
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(attempt), 11))
		for k := range 4 {
			doc := v
			if k > 0 {
				doc = mutate(rng, deepCopy(v).(map[string]any)).(map[string]any)
				*mutants++
			}
			b, _ := json.Marshal(doc)
			var back map[string]any
			json.Unmarshal(b, &back) //nolint:errcheck // our own encoding
			ok := resolved.Validate(back) == nil
			fastOK := fast.Valid(b)
			if fastOK && !ok {
				t.Errorf("%s: the fast checker accepts what the validator rejects: %s (%v)", label, b, resolved.Validate(back))
			}
			if ok {
				*valid++
				if fastOK {
					*fastValid++
				}
			} else {
				*rejected++
			}
		}
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// mutate changes one random place of v.
func mutate(rng *rand.Rand, v any) any {
	others := []any{nil, true, 1.5, 7, "x", []any{1}, map[string]any{"zz": 1}}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 || rng.IntN(5) == 0 {
			x["extra_member"] = others[rng.IntN(len(others))]
			return x
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		k := keys[rng.IntN(len(keys))]
		switch rng.IntN(3) {
		case 0:
			delete(x, k)
		case 1:
			x[k] = others[rng.IntN(len(others))]
		default:
			x[k] = mutate(rng, x[k])
		}
		return x
	case []any:
		if len(x) == 0 {
			return append(x, others[rng.IntN(len(others))])
		}
		i := rng.IntN(len(x))
		x[i] = mutate(rng, x[i])
		return x
	}
	return others[rng.IntN(len(others))]
}
