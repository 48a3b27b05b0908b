package bridge_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	judge "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/result"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// The drift test: real answers drift from their specs, and a strict
// client (the TypeScript SDK) fails a whole call whose structuredContent
// is missing or does not validate against the declared outputSchema. For
// every corpus tool with an output schema, a recording upstream answers a
// value generated from the spec's response schema, then that value
// deviated once per kind; every result must carry structuredContent that
// an independent 2020-12 validator (santhosh-tekuri/jsonschema, with
// formats asserted as Ajv with ajv-formats does) accepts against the
// declared outputSchema, and a first text content that is the whole
// redacted answer.

// driftRaceTools bounds the tools per spec checked under -race.
const driftRaceTools = 40

// driftKinds are the deviations, after the undeviated answer ("none").
var driftKinds = []string{"none", "null", "missing-required", "extra-property", "wrong-type", "outside-enum"}

// driftStats counts answers per mode; each answer is one call.
type driftStats struct {
	Tools, NoArgs, NoBase int
	Answers, Deviated     int            // deviated: the answer breaks the spec's schema
	Accepted, DevAccepted int            // a strict client accepts the result
	Before, DevBefore     int            // ... as the bridge answered before tolerant schemas
	Whole, Reduced, Empty int            // structuredContent: the answer, a reduction, {}
	AsError               int            // strict: nothing conforms, an error result with the answer
	PerKind               map[string]int // answers per kind
	Inapplicable          map[string]int // tools with no site for the kind
}

func (s *driftStats) add(o *driftStats) {
	s.Tools += o.Tools
	s.NoArgs += o.NoArgs
	s.NoBase += o.NoBase
	s.Answers += o.Answers
	s.Deviated += o.Deviated
	s.Accepted += o.Accepted
	s.DevAccepted += o.DevAccepted
	s.Before += o.Before
	s.DevBefore += o.DevBefore
	s.Whole += o.Whole
	s.Reduced += o.Reduced
	s.Empty += o.Empty
	s.AsError += o.AsError
	for k, v := range o.PerKind {
		s.PerKind[k] += v
	}
	for k, v := range o.Inapplicable {
		s.Inapplicable[k] += v
	}
}

func newDriftStats() *driftStats {
	return &driftStats{PerKind: map[string]int{}, Inapplicable: map[string]int{}}
}

func pct(n, d int) string {
	if d == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

func TestDrift(t *testing.T) {
	var mu sync.Mutex
	totals := map[string]*driftStats{"tolerant": newDriftStats(), "strict": newDriftStats()}
	t.Run("specs", func(t *testing.T) {
		for _, name := range corpusFiles(t) {
			if corpus[name].LoadErr != "" {
				continue
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				corpusSkipUnderRace(t, name)
				got := driftSpec(t, name)
				mu.Lock()
				defer mu.Unlock()
				for mode, s := range got {
					totals[mode].add(s)
				}
			})
		}
	})
	for _, mode := range []string{"tolerant", "strict"} {
		s := totals[mode]
		t.Logf("--output-schema %s: %d tools with an output schema (%d without generable arguments, %d without a conforming generated answer); %d answers, %d of them break the spec's schema",
			mode, s.Tools, s.NoArgs, s.NoBase, s.Answers, s.Deviated)
		t.Logf("  a strict client accepts %d/%d results (%s), %d/%d of the deviated ones (%s); before: %s and %s",
			s.Accepted, s.Answers, pct(s.Accepted, s.Answers), s.DevAccepted, s.Deviated, pct(s.DevAccepted, s.Deviated),
			pct(s.Before, s.Answers), pct(s.DevBefore, s.Deviated))
		t.Logf("  structuredContent: %d whole answers, %d reduced, %d {}; %d error results (no structuredContent conforms); answers per kind %v; tools with no site for a kind %v",
			s.Whole, s.Reduced, s.Empty, s.AsError, s.PerKind, s.Inapplicable)
	}
}

// driftUpstream answers every request with the current answer and
// records what it sent.
type driftUpstream struct {
	mu     sync.Mutex
	answer []byte
	sent   [][]byte
}

func (u *driftUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	a := u.answer
	u.sent = append(u.sent, a)
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(a)
}

func (u *driftUpstream) set(a []byte) {
	u.mu.Lock()
	u.answer, u.sent = a, nil
	u.mu.Unlock()
}

// driftTool is one tool of a spec, in both modes.
type driftTool struct {
	name   string
	args   json.RawMessage
	spec   map[string]any           // the strict output schema without a size limit, decoded: generation and sites
	strict *jsonschema.Resolved     // the same, as the bridge validated answers before
	judged map[string]*judge.Schema // mode → the declared outputSchema, for the judge
	before *judge.Schema            // the strict schema as declared before (16 KiB limit), nil: none
}

func driftSpec(t *testing.T, name string) map[string]*driftStats {
	res, err := corpusLoad(t, name)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	up := &driftUpstream{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	build := func(mode string, maxOut int) *bridge.Catalog {
		c, err := bridge.New(ops, bridge.Options{BaseURL: srv.URL, Client: srv.Client(), Version: "test", OutputSchema: mode, MaxOutputSchemaBytes: maxOut})
		if err != nil {
			t.Fatalf("bridge.New(%s): %v", mode, err)
		}
		return c
	}
	cats := map[string]*bridge.Catalog{"tolerant": build("", 0), "strict": build("strict", 0)}
	spec := build("strict", -1)
	out := map[string]*driftStats{"tolerant": newDriftStats(), "strict": newDriftStats()}

	var defs []*mcp.Tool
	for _, def := range cats["tolerant"].OperationDefs() {
		if def.OutputSchema != nil {
			defs = append(defs, def)
		}
	}
	if bridge.RaceEnabled && len(defs) > driftRaceTools {
		// The race detector makes each tool ~10× dearer: under -race a
		// spread sample of each large spec runs (the run without -race
		// covers every tool).
		step := (len(defs) + driftRaceTools - 1) / driftRaceTools
		var sample []*mcp.Tool
		for i := 0; i < len(defs); i += step {
			sample = append(sample, defs[i])
		}
		defs = sample
	}
	var tools []*driftTool
	for _, def := range defs {
		dt := &driftTool{name: def.Name, judged: map[string]*judge.Schema{}}
		for mode, c := range cats {
			tl, _ := c.Lookup(def.Name)
			if tl.Def().OutputSchema != nil {
				dt.judged[mode] = driftCompile(t, def.Name+"."+mode, tl.Def().OutputSchema)
			}
			if mode == "strict" {
				dt.before = dt.judged[mode]
			}
		}
		st, _ := spec.Lookup(def.Name)
		raw, _ := json.Marshal(st.Def().OutputSchema)
		_ = json.Unmarshal(raw, &dt.spec)
		var js jsonschema.Schema
		_ = json.Unmarshal(raw, &js)
		if dt.strict, err = js.Resolve(nil); err != nil {
			t.Fatalf("%s: strict schema does not resolve: %v", def.Name, err)
		}
		for _, s := range out {
			s.Tools++
		}
		args, err := oracleArgs(def, 0)
		if err != nil {
			for _, s := range out {
				s.NoArgs++
			}
			continue
		}
		dt.args, _ = json.Marshal(args)
		tools = append(tools, dt)
	}

	redactor := cats["tolerant"].Redactor()
	for _, dt := range tools {
		base, ok := driftBase(dt)
		if !ok {
			for _, s := range out {
				s.NoBase++
			}
		}
		for _, kind := range driftKinds {
			v := driftCopy(base)
			if !driftDeviate(dt, v, kind) {
				for _, s := range out {
					s.Inapplicable[kind]++
				}
				continue
			}
			answer, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			red, err := redactor.RedactJSON(nil, answer)
			if err != nil {
				t.Fatal(err)
			}
			var redV map[string]any
			_ = json.Unmarshal(red, &redV)
			deviated := dt.strict.Validate(redV) != nil
			before := !deviated && dt.before != nil && driftJudge(dt.before, red) == nil
			for mode, c := range cats {
				s := out[mode]
				s.Answers++
				s.PerKind[kind]++
				if deviated {
					s.Deviated++
				}
				if before || dt.before == nil {
					s.Before++
					if deviated {
						s.DevBefore++
					}
				}
				up.set(answer)
				o, err := bridge.NewRuntime(c).Call(t.Context(), &bridge.Call{Tool: dt.name, Args: dt.args})
				if err != nil {
					t.Fatalf("%s: %v", dt.name, err)
				}
				ok := driftCheck(t, mode, dt, kind, o.Result, red, s)
				if ok {
					s.Accepted++
					if deviated {
						s.DevAccepted++
					}
				}
			}
		}
	}
	return out
}

// driftCheck reports whether a strict client accepts r, and fails the
// test where the bridge promises more: the first text content is the
// redacted answer, and in tolerant mode structuredContent is always there
// and valid.
func driftCheck(t *testing.T, mode string, dt *driftTool, kind string, r *mcp.CallToolResult, red []byte, s *driftStats) bool {
	t.Helper()
	if r.IsError {
		// Strict: when no structuredContent conforms (not even {}), the
		// answer goes whole as an error result, which strict clients take
		// without one. Nothing else may be an error.
		tc, ok := r.Content[0].(*mcp.TextContent)
		if mode != "strict" || r.StructuredContent != nil || !ok || tc.Text != string(red) {
			t.Errorf("%s (%s, %s): an error result: %v", dt.name, mode, kind, r.Content)
		}
		s.AsError++
		return false
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != string(red) {
		t.Errorf("%s (%s, %s): the first content is not the redacted answer", dt.name, mode, kind)
	}
	wire, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Structured json.RawMessage `json:"structuredContent"`
		Meta       map[string]any  `json:"_meta"`
	}
	if err := json.Unmarshal(wire, &got); err != nil {
		t.Fatal(err)
	}
	sch := dt.judged[mode]
	if sch == nil {
		return true // no outputSchema in this mode (over the size limit)
	}
	if got.Structured == nil {
		if mode == "tolerant" {
			t.Errorf("%s (%s, %s): no structuredContent", dt.name, mode, kind)
		}
		return false
	}
	meta, _ := got.Meta[result.MetaKey].(map[string]any)
	switch {
	case bytes.Equal(got.Structured, red):
		s.Whole++
	case meta["replaced"] == true:
		s.Empty++
		if testing.Verbose() {
			t.Logf("%s (%s, %s): structuredContent {}: %v", dt.name, mode, kind, meta["reason"])
		}
	default:
		s.Reduced++
	}
	if !bytes.Equal(got.Structured, red) && got.Meta[result.MetaKey] == nil {
		t.Errorf("%s (%s, %s): structuredContent reduced without %s in _meta", dt.name, mode, kind, result.MetaKey)
	}
	if err := driftJudge(sch, got.Structured); err != nil {
		t.Errorf("%s (%s, %s): structuredContent does not validate against the declared outputSchema: %v", dt.name, mode, kind, err)
		return false
	}
	return true
}

func driftCompile(t *testing.T, name string, schema any) *judge.Schema {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := judge.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := judge.NewCompiler()
	c.DefaultDraft(judge.Draft2020)
	c.AssertFormat()
	url := "mem://drift/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: the judge does not compile the outputSchema: %v", name, err)
	}
	return sch
}

func driftJudge(sch *judge.Schema, data []byte) error {
	v, err := judge.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// driftBase generates an answer from the spec's schema, preferring one
// the strict schema accepts; ok is false when none is.
func driftBase(dt *driftTool) (map[string]any, bool) {
	var last map[string]any
	for _, rich := range []bool{true, false} {
		for attempt := range 6 {
			v, err := genArgs(dt.spec, attempt, rich)
			if err != nil {
				continue
			}
			var norm map[string]any
			if err := json.Unmarshal([]byte(oracleJSON(v)), &norm); err != nil {
				continue
			}
			last = norm
			if dt.strict.Validate(norm) == nil {
				return norm, true
			}
		}
	}
	if last == nil {
		last = map[string]any{}
	}
	return last, false
}

func driftCopy(v map[string]any) map[string]any {
	raw, _ := json.Marshal(v)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// driftSite is an object member of the answer with its effective schema.
type driftSite struct {
	parent   map[string]any
	key      string
	schema   map[string]any // $ref and allOf resolved, the branch of anyOf/oneOf the value takes
	required bool
}

// driftSites lists the members of v, shallowest first, and the objects
// with the effective schema of each.
func driftSites(dt *driftTool, v map[string]any) (sites []driftSite, objects []driftSite) {
	g := &argGen{}
	if d, ok := dt.spec["$defs"].(map[string]any); ok {
		g.defs = d
	}
	type item struct {
		obj    map[string]any
		schema map[string]any
		depth  int
	}
	queue := []item{{v, dt.spec, 0}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		eff := driftEffective(g, it.schema, it.obj)
		objects = append(objects, driftSite{parent: it.obj, schema: eff})
		props, _ := eff["properties"].(map[string]any)
		req := map[string]bool{}
		if list, ok := eff["required"].([]any); ok {
			for _, r := range list {
				if s, ok := r.(string); ok {
					req[s] = true
				}
			}
		}
		keys := make([]string, 0, len(it.obj))
		for k := range it.obj {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sub := schemaMap(props[k])
			if props[k] == nil {
				sub = schemaMap(eff["additionalProperties"])
			}
			val := it.obj[k]
			sEff := driftEffective(g, sub, val)
			sites = append(sites, driftSite{parent: it.obj, key: k, schema: sEff, required: req[k]})
			if it.depth >= 6 {
				continue
			}
			switch x := val.(type) {
			case map[string]any:
				queue = append(queue, item{x, sub, it.depth + 1})
			case []any:
				if len(x) > 0 {
					if m, ok := x[0].(map[string]any); ok {
						queue = append(queue, item{m, schemaMap(sEff["items"]), it.depth + 1})
					}
				}
			}
		}
	}
	return sites, objects
}

// driftEffective resolves s for the value v: $ref and allOf merged, and
// of each anyOf/oneOf the first branch whose type admits v.
func driftEffective(g *argGen, s map[string]any, v any) map[string]any {
	eff, err := g.resolve(s, 0)
	if err != nil {
		return map[string]any{}
	}
	for n := 0; n < 8; n++ {
		choices, _ := eff["x-choices"].([]any)
		if len(choices) == 0 {
			break
		}
		delete(eff, "x-choices")
		for _, c := range choices {
			list, _ := c.([]any)
			for _, br := range list {
				r, err := g.resolve(schemaMap(br), 0)
				if err != nil || !driftAdmits(r, v) || r["type"] == "null" && v != nil {
					continue
				}
				eff = genMerge(eff, r)
				break
			}
		}
	}
	return eff
}

// driftKind is the JSON type of a decoded value.
func driftKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

func driftTypes(s map[string]any) []string {
	switch x := s["type"].(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if t, ok := e.(string); ok {
				out = append(out, t)
			}
		}
		return out
	}
	return nil
}

func driftAdmits(s map[string]any, v any) bool {
	ts := driftTypes(s)
	if len(ts) == 0 {
		return true
	}
	k := driftKind(v)
	return slices.Contains(ts, k) || k == "integer" && slices.Contains(ts, "number")
}

// driftDeviate changes v by one deviation of kind, reporting whether the
// answer had a place for it.
func driftDeviate(dt *driftTool, v map[string]any, kind string) bool {
	if kind == "none" {
		return true
	}
	sites, objects := driftSites(dt, v)
	first := func(ok func(driftSite) bool) (driftSite, bool) {
		for _, s := range sites {
			if ok(s) {
				return s, true
			}
		}
		return driftSite{}, false
	}
	switch kind {
	case "null":
		s, ok := first(func(s driftSite) bool {
			return s.parent[s.key] != nil && len(driftTypes(s.schema)) > 0 && !driftAdmits(s.schema, nil)
		})
		if ok {
			s.parent[s.key] = nil
		}
		return ok
	case "missing-required":
		s, ok := first(func(s driftSite) bool { return s.required })
		if ok {
			delete(s.parent, s.key)
		}
		return ok
	case "extra-property":
		target := v
		for _, o := range objects {
			if ap, ok := o.schema["additionalProperties"].(map[string]any); ok && isFalseSchema(ap) {
				target = o.parent
				break
			}
			if ap, ok := o.schema["additionalProperties"].(bool); ok && !ap {
				target = o.parent
				break
			}
		}
		target["driftExtra"] = "surprise"
		return true
	case "wrong-type":
		for _, want := range []string{"string", "integer", "number", "boolean"} {
			s, ok := first(func(s driftSite) bool {
				ts := driftTypes(s.schema)
				return len(ts) == 1 && ts[0] == want && s.parent[s.key] != nil
			})
			if !ok {
				continue
			}
			if want == "string" {
				s.parent[s.key] = 12345 // an integer for a string
			} else {
				s.parent[s.key] = "not a " + want
			}
			return true
		}
		return false
	case "outside-enum":
		s, ok := first(func(s driftSite) bool {
			e, _ := s.schema["enum"].([]any)
			return len(e) > 0 && s.parent[s.key] != nil
		})
		if !ok {
			return false
		}
		if e, _ := s.schema["enum"].([]any); strings.Contains(fmt.Sprint(driftKind(e[0])), "string") {
			s.parent[s.key] = "zz-outside-the-enum"
		} else {
			s.parent[s.key] = 987654321
		}
		return true
	}
	return false
}
