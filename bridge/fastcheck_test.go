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
	var schemas, compiled, valid, fastValid, rejected, mutants int
	for _, name := range corpusFiles(t) {
		corpusSkipUnderRace(t, name)
		res, err := corpusLoad(t, name)
		if err != nil {
			continue // the corpus test reports load failures
		}
		cat, _ := corpusBridge(t, res, "http://127.0.0.1:1", nil)
		for _, def := range cat.OperationDefs() {
			if def.OutputSchema == nil {
				continue
			}
			raw, err := json.Marshal(def.OutputSchema)
			if err != nil {
				t.Fatal(err)
			}
			schemas++
			var s jsonschema.Schema
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("%s: %v", def.Name, err)
			}
			fast := schema.CompileFast(&s)
			if fast == nil {
				continue
			}
			compiled++
			resolved, err := s.Resolve(nil)
			if err != nil {
				t.Fatalf("%s: resolve: %v", def.Name, err)
			}
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
						mutants++
					}
					b, _ := json.Marshal(doc)
					var back map[string]any
					json.Unmarshal(b, &back) //nolint:errcheck // our own encoding
					ok := resolved.Validate(back) == nil
					fastOK := fast.Valid(b)
					if fastOK && !ok {
						t.Errorf("%s %s: the fast checker accepts what the validator rejects: %s (%v)", name, def.Name, b, resolved.Validate(back))
					}
					if ok {
						valid++
						if fastOK {
							fastValid++
						}
					} else {
						rejected++
					}
				}
			}
		}
	}
	t.Logf("%d output schemas, %d compiled by the fast checker; %d conforming documents, %d accepted in one pass; %d rejected (%d mutants)",
		schemas, compiled, valid, fastValid, rejected, mutants)
	if schemas > 0 && compiled*100 < schemas*99 {
		t.Errorf("the fast checker compiles %d of %d tolerant output schemas, want at least 99%%", compiled, schemas)
	}
	if valid > 0 && fastValid*100 < valid*99 {
		t.Errorf("the fast checker accepts %d of %d conforming documents, want at least 99%%", fastValid, valid)
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
