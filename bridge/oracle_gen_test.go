package bridge_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
)

// The oracle's argument generator: given a tool's input schema (JSON
// Schema 2020-12 as decoded JSON), it writes arguments that satisfy it. It
// knows type (and type arrays), enum, const, format, pattern (through a
// small generator over regexp/syntax, or the schema's examples and
// default), numeric bounds with exclusive forms and multipleOf, string and
// array lengths, uniqueItems, required and optional properties,
// additionalProperties, patternProperties, minProperties, allOf (merged),
// oneOf/anyOf (one branch merged with the rest of the schema) and $ref into
// $defs. Choices (branches, enum members, optional properties) vary with
// the attempt so that a caller can retry until the whole value validates.

// genMaxDepth bounds recursion through recursive schemas.
const genMaxDepth = 14

// genRichDepth is the deepest object level whose optional properties the
// rich mode fills.
const genRichDepth = 3

// argGen generates one value. rng nil means the first choice everywhere.
type argGen struct {
	defs map[string]any
	rng  *rand.Rand
	rich bool
}

// genFail is a schema the generator cannot satisfy.
type genFail struct{ reason string }

func (e *genFail) Error() string { return e.reason }

func genFailf(format string, args ...any) error {
	return &genFail{reason: fmt.Sprintf(format, args...)}
}

// genArgs generates the arguments object for a tool input schema.
func genArgs(schema map[string]any, attempt int, rich bool) (map[string]any, error) {
	g := &argGen{rich: rich}
	if d, ok := schema["$defs"].(map[string]any); ok {
		g.defs = d
	}
	if attempt > 0 {
		g.rng = rand.New(rand.NewPCG(uint64(attempt), 7))
	}
	v, err := g.value(schema, 0, 0)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, genFailf("root is not an object: %T", v)
	}
	return obj, nil
}

// pick returns an index in [0,n): 0 without a rng.
func (g *argGen) pick(n int) int {
	if g.rng == nil || n <= 1 {
		return 0
	}
	return g.rng.IntN(n)
}

// coin is true three times in four (always without a rng).
func (g *argGen) coin() bool { return g.rng == nil || g.rng.IntN(4) > 0 }

// value generates a value for s. depth counts schema levels, objDepth
// object nesting (for the rich mode's optional properties).
func (g *argGen) value(raw any, depth, objDepth int) (any, error) {
	if depth > genMaxDepth {
		return nil, genFailf("value nesting deeper than %d", genMaxDepth)
	}
	s, err := g.resolve(schemaMap(raw), depth)
	if err != nil {
		return nil, err
	}
	// One branch of each oneOf/anyOf, merged with the rest of the schema;
	// a branch's own oneOf/anyOf lists join the queue.
	queue, _ := s["x-choices"].([]any)
	delete(s, "x-choices")
	for n := 0; len(queue) > 0; n++ {
		if n > 64 {
			return nil, genFailf("oneOf/anyOf nesting too deep")
		}
		list, _ := queue[0].([]any)
		queue = queue[1:]
		if len(list) == 0 {
			continue
		}
		// Start at a varying branch, and prefer one that is not just null.
		chosen := -1
		start := g.pick(len(list))
		for k := range list {
			i := (start + k) % len(list)
			if t, _ := schemaMap(list[i])["type"].(string); t != "null" {
				chosen = i
				break
			}
		}
		if chosen < 0 {
			chosen = start
		}
		br, err := g.resolve(schemaMap(list[chosen]), depth+1)
		if err != nil {
			return nil, err
		}
		if nested, ok := br["x-choices"].([]any); ok {
			delete(br, "x-choices")
			queue = append(queue, nested...)
		}
		s = genMerge(s, br)
	}
	if isFalseSchema(s) {
		return nil, genFailf("schema admits nothing")
	}
	if c, ok := s["const"]; ok {
		return c, nil
	}
	if e, ok := s["enum"].([]any); ok {
		if len(e) == 0 {
			return nil, genFailf("empty enum (after allOf)")
		}
		var nonNull []any
		for _, v := range e {
			if v != nil {
				nonNull = append(nonNull, v)
			}
		}
		if len(nonNull) == 0 {
			return nil, nil
		}
		return nonNull[g.pick(len(nonNull))], nil
	}
	switch typ := g.chooseType(s); typ {
	case "object":
		return g.object(s, depth, objDepth)
	case "array":
		return g.array(s, depth, objDepth)
	case "string":
		return g.str(s, 0)
	case "integer", "number":
		return genNumber(s, typ == "integer", 0)
	case "boolean":
		return true, nil
	case "null":
		return nil, nil
	case "impossible":
		return nil, genFailf("its types have nothing in common (allOf): schema admits nothing")
	case "":
		// An empty schema: any value; a short string is the most portable.
		if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
			return ex[0], nil
		}
		if d, ok := s["default"]; ok {
			return d, nil
		}
		return "example", nil
	default:
		return nil, genFailf("unknown type %q", typ)
	}
}

// chooseType picks the type to generate: a declared one other than null
// (the first, or another on later attempts), else one the keywords imply.
func (g *argGen) chooseType(s map[string]any) string {
	types := genTypes(s["type"])
	if _, declared := s["type"]; declared && len(types) == 0 {
		return "impossible"
	}
	var nonNull []string
	for _, t := range types {
		if ts, _ := t.(string); ts != "null" {
			nonNull = append(nonNull, ts)
		}
	}
	switch {
	case len(nonNull) > 0:
		return nonNull[g.pick(len(nonNull))]
	case len(types) > 0:
		return "null"
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := s[k]; ok {
				return true
			}
		}
		return false
	}
	switch {
	case has("properties", "required", "additionalProperties", "patternProperties", "minProperties", "propertyNames"):
		return "object"
	case has("items", "prefixItems", "minItems", "maxItems", "uniqueItems"):
		return "array"
	case has("pattern", "minLength", "maxLength", "contentEncoding", "contentMediaType"):
		return "string"
	case has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return "number"
	case has("format"):
		switch s["format"] {
		case "int32", "int64", "integer":
			return "integer"
		case "float", "double", "number", "decimal":
			return "number"
		}
		return "string"
	}
	return ""
}

// object fills the required properties, the optional ones in rich mode
// (down to genRichDepth), required names that only additionalProperties
// or patternProperties describe, and up to minProperties.
func (g *argGen) object(s map[string]any, depth, objDepth int) (any, error) {
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	for _, r := range genTypes(s["required"]) {
		if name, ok := r.(string); ok {
			required[name] = true
		}
	}
	out := map[string]any{}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	optional := g.rich && objDepth <= genRichDepth
	for _, name := range names {
		ps := schemaMap(props[name])
		if isFalseSchema(ps) {
			continue
		}
		if !required[name] && (!optional || !g.coin()) {
			continue
		}
		v, err := g.value(ps, depth+1, objDepth+1)
		if err != nil {
			if required[name] {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			continue // an optional property we cannot fill is left out
		}
		out[name] = v
	}
	// Required properties that properties does not describe.
	extra := s["additionalProperties"]
	for name := range required {
		if _, ok := out[name]; ok {
			continue
		}
		if _, described := props[name]; described {
			continue
		}
		v, err := g.value(g.propSchema(s, name, extra), depth+1, objDepth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = v
	}
	minProps := int(genNumOr(s["minProperties"], 0))
	if len(props) == 0 && optional && extra != nil && !isFalseSchema(schemaMap(extra)) {
		minProps = max(minProps, 1)
	}
	for i := 1; len(out) < minProps && i < 64; i++ {
		if extra != nil && isFalseSchema(schemaMap(extra)) {
			// Fill from the declared properties first.
			for _, name := range names {
				if _, ok := out[name]; !ok && len(out) < minProps {
					if v, err := g.value(props[name], depth+1, objDepth+1); err == nil {
						out[name] = v
					}
				}
			}
			break
		}
		name := g.propName(s, i)
		if _, ok := out[name]; ok {
			continue
		}
		v, err := g.value(g.propSchema(s, name, extra), depth+1, objDepth+1)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// propName makes up the name of an additional property.
func (g *argGen) propName(s map[string]any, i int) string {
	if pn, ok := s["propertyNames"].(map[string]any); ok {
		if v, err := g.str(pn, i); err == nil {
			return v.(string)
		}
	}
	if pp, ok := s["patternProperties"].(map[string]any); ok && len(pp) > 0 {
		for pat := range pp {
			if v, ok := genPattern(pat, 1, 40, i); ok {
				return v
			}
		}
	}
	return "key" + strconv.Itoa(i)
}

// propSchema is the schema an undeclared property name must satisfy.
func (g *argGen) propSchema(s map[string]any, name string, extra any) any {
	if pp, ok := s["patternProperties"].(map[string]any); ok {
		for pat, ps := range pp {
			if re, err := regexp.Compile(pat); err == nil && re.MatchString(name) {
				return ps
			}
		}
	}
	if extra != nil {
		return extra
	}
	return map[string]any{"type": "string"}
}

// array writes minItems items (one in rich mode when there is no
// minimum), prefixItems first, distinct ones for uniqueItems.
func (g *argGen) array(s map[string]any, depth, objDepth int) (any, error) {
	n := int(genNumOr(s["minItems"], 0))
	if n == 0 && g.rich {
		n = 1
	}
	if mx := genNumOr(s["maxItems"], math.Inf(1)); float64(n) > mx {
		n = int(mx)
	}
	prefix, _ := s["prefixItems"].([]any)
	n = max(n, min(len(prefix), 1))
	unique, _ := s["uniqueItems"].(bool)
	out := make([]any, 0, n)
	for i := range n {
		var item any
		if i < len(prefix) {
			item = prefix[i]
		} else if it, ok := s["items"]; ok {
			item = it
		} else {
			item = map[string]any{"type": "string"}
		}
		var v any
		var err error
		for try := range 8 {
			v, err = g.itemValue(item, depth+1, objDepth, i+try)
			if err != nil {
				return nil, err
			}
			if !unique || !slices.ContainsFunc(out, func(x any) bool { return genEqual(x, v) }) {
				break
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// itemValue is value with a variant that makes array items differ.
func (g *argGen) itemValue(raw any, depth, objDepth, variant int) (any, error) {
	if variant == 0 {
		return g.value(raw, depth, objDepth)
	}
	s, err := g.resolve(schemaMap(raw), depth)
	if err != nil {
		return nil, err
	}
	if _, ok := s["x-choices"]; ok {
		return g.value(raw, depth, objDepth)
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[variant%len(e)], nil
	}
	switch g.chooseType(s) {
	case "string":
		return g.str(s, variant)
	case "integer":
		return genNumber(s, true, variant)
	case "number":
		return genNumber(s, false, variant)
	}
	return g.value(raw, depth, objDepth)
}
