package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// checkMaxDepth bounds how deep the checker follows a value (and $refs);
// below it everything is accepted and the real validator has the last word.
const checkMaxDepth = 128

// checker validates decoded JSON values (as encoding/json decodes into
// any, numbers as float64 or json.Number) against a converted schema, the
// subset of 2020-12 this package writes, and says where the first failure
// is (an instance path) and why, with no value in the reason. It is used
// where jsonschema-go's validator, which names schemas rather than
// instance locations, cannot tell what to repair: reducing an answer to
// what its output schema admits ([Reduce]), and checking a schema's own
// defaults and examples ([RepairSchema]). Unlike jsonschema-go it asserts
// the common formats, as JavaScript clients do (format.go). It is not a
// full validator: unevaluatedProperties/Items are approximated, and the
// caller validates the outcome again with jsonschema-go.
type checker struct {
	defs      map[string]*jsonschema.Schema
	regexps   map[string]*regexp.Regexp // nil value: does not compile, ignored
	noFormats bool                      // assert no format but the integer ranges (arguments: intFormatOK)
}

func newChecker(root *jsonschema.Schema) *checker {
	return &checker{defs: root.Defs, regexps: map[string]*regexp.Regexp{}}
}

// failure is where and why a value does not conform.
type failure struct {
	path []string // JSON pointer tokens of the instance
	why  string

	// What failed, for messages in an agent's words (messages.go): the
	// keyword, the schema holding it, the value at path, and for required
	// and additionalProperties the property concerned.
	kw   string
	s    *jsonschema.Schema
	v    any
	prop string
	// name: what failed is the name of the property at path, held to
	// the object's propertyNames (s, kw and v are the name's own failure).
	name bool
}

// Where is the failure's instance location as a JSON pointer ("" for the
// root).
func (f *failure) Where() string {
	var b strings.Builder
	for _, p := range f.path {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func (f *failure) String() string {
	if w := f.Where(); w != "" {
		return w + ": " + f.why
	}
	return "(root): " + f.why
}

func fail(path []string, why string) *failure {
	return &failure{path: slices.Clone(path), why: why}
}

// failKW is fail with what failed: keyword kw of s, on the value v.
func failKW(path []string, why, kw string, s *jsonschema.Schema, v any) *failure {
	return &failure{path: slices.Clone(path), why: why, kw: kw, s: s, v: v}
}

// ref follows a "#/$defs/Name" reference; nil when it is not one.
func (k *checker) ref(s *jsonschema.Schema) *jsonschema.Schema {
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok {
		return k.defs[name]
	}
	return nil
}

func (k *checker) regexp(p string) *regexp.Regexp {
	re, ok := k.regexps[p]
	if !ok {
		re, _ = regexp.Compile(p)
		k.regexps[p] = re
	}
	return re
}

// isFalse reports whether s is the false schema ({"not": {}}).
func isFalse(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && s.Type == "" && s.Ref == "" && reflect.ValueOf(*s.Not).IsZero() && isOnlyNot(s)
}

func isOnlyNot(s *jsonschema.Schema) bool {
	cp := *s
	cp.Not = nil
	return reflect.ValueOf(cp).IsZero()
}

// jsonKind is the JSON Schema type of a decoded value ("integer" for a
// number without a fractional part), "" for anything else.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case float64:
		if _, f := math.Modf(x); f == 0 && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case json.Number:
		f, err := x.Float64()
		if err != nil && !math.IsInf(f, 0) {
			return "number"
		}
		if _, fr := math.Modf(f); fr == 0 {
			return "integer"
		}
		return "number"
	case int, int64:
		return "integer"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

func typeAdmits(want, got string) bool {
	return want == got || want == "number" && got == "integer"
}

// number is a decoded number as float64.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil || math.IsInf(f, 0)
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// jsonEqual compares decoded JSON values, numbers by value.
// uniqueItems reports whether no two items of a are equal as JSON values
// (jsonEqual), in one pass over canonical keys: comparing every pair made
// 150,000 items (1 MB of arguments) a minute and a half of CPU.
func uniqueItems(a []any) bool {
	if len(a) < 2 {
		return true
	}
	seen := make(map[string]struct{}, len(a))
	var b []byte
	for _, item := range a {
		b = appendCanonical(b[:0], item)
		if _, dup := seen[string(b)]; dup {
			return false
		}
		seen[string(b)] = struct{}{}
	}
	return true
}

// appendCanonical appends a key for v that two values share exactly when
// jsonEqual holds: numbers by their float64 value, objects with sorted
// members, and a type tag before each value.
func appendCanonical(b []byte, v any) []byte {
	if f, ok := number(v); ok {
		if f == 0 {
			f = 0 // -0 == 0
		}
		return strconv.AppendFloat(append(b, 'n'), f, 'g', -1, 64)
	}
	switch x := v.(type) {
	case nil:
		return append(b, 'z')
	case bool:
		if x {
			return append(b, 't')
		}
		return append(b, 'f')
	case string:
		return strconv.AppendQuote(append(b, 's'), x)
	case []any:
		b = append(b, '[')
		for _, e := range x {
			b = append(appendCanonical(b, e), ',')
		}
		return append(b, ']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for _, k := range keys {
			b = append(strconv.AppendQuote(b, k), ':')
			b = append(appendCanonical(b, x[k]), ',')
		}
		return append(b, '}')
	}
	return fmt.Appendf(append(b, '?'), "%#v", v)
}

func jsonEqual(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for key, xv := range x {
			yv, ok := y[key]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return a == b
}

// check reports the first way v does not conform to s, nil when it does.
func (k *checker) check(v any, s *jsonschema.Schema, path []string) *failure {
	return k.checkDepth(v, s, path, 0)
}

func (k *checker) checkDepth(v any, s *jsonschema.Schema, path []string, depth int) *failure {
	if s == nil || depth > checkMaxDepth {
		return nil
	}
	if isFalse(s) {
		return failKW(path, "no value is allowed here", "false", s, v)
	}
	if s.Ref != "" {
		if t := k.ref(s); t != nil {
			if f := k.checkDepth(v, t, path, depth+1); f != nil {
				return f
			}
		}
	}
	if f := k.scalar(v, s, path); f != nil {
		return f
	}
	switch x := v.(type) {
	case map[string]any:
		if f := k.object(x, s, path, depth); f != nil {
			return f
		}
	case []any:
		if f := k.array(x, s, path, depth); f != nil {
			return f
		}
	}
	return k.logic(v, s, path, depth)
}

// scalar checks the keywords that look at v itself: type, enum, const,
// and the numeric and string constraints.
func (k *checker) scalar(v any, s *jsonschema.Schema, path []string) *failure {
	kind := jsonKind(v)
	if s.Type != "" && !typeAdmits(s.Type, kind) {
		return failKW(path, "type "+kind+", want "+s.Type, "type", s, v)
	}
	if len(s.Types) > 0 && !slices.ContainsFunc(s.Types, func(t string) bool { return typeAdmits(t, kind) }) {
		return failKW(path, "type "+kind+", want "+strings.Join(s.Types, " or "), "type", s, v)
	}
	if x, ok := v.(json.Number); ok && (s.Type == "number" || s.Type == "integer" ||
		slices.Contains(s.Types, "number") || slices.Contains(s.Types, "integer")) {
		// Beyond float64's range: the validator reads no number in it.
		if f, _ := x.Float64(); math.IsInf(f, 0) {
			return failKW(path, "beyond float64", "double", s, v)
		}
	}
	if s.Enum != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return jsonEqual(v, e) }) {
		return failKW(path, "not one of the enum values", "enum", s, v)
	}
	if s.Const != nil && !jsonEqual(v, *s.Const) {
		return failKW(path, "not the const value", "const", s, v)
	}
	if s.Format != "" && (k.noFormats && !intFormatOK(s.Format, v) || !k.noFormats && !formatOK(s.Format, v)) {
		return failKW(path, "not a valid "+s.Format, "format", s, v)
	}
	if n, ok := number(v); ok {
		switch {
		case s.Minimum != nil && n < *s.Minimum:
			return failKW(path, "below minimum", "minimum", s, v)
		case s.Maximum != nil && n > *s.Maximum:
			return failKW(path, "above maximum", "maximum", s, v)
		case s.ExclusiveMinimum != nil && n <= *s.ExclusiveMinimum:
			return failKW(path, "not above exclusiveMinimum", "exclusiveMinimum", s, v)
		case s.ExclusiveMaximum != nil && n >= *s.ExclusiveMaximum:
			return failKW(path, "not below exclusiveMaximum", "exclusiveMaximum", s, v)
		case s.MultipleOf != nil && *s.MultipleOf > 0:
			if q := n / *s.MultipleOf; math.Abs(q-math.Round(q)) > 1e-9 {
				return failKW(path, "not a multiple of multipleOf", "multipleOf", s, v)
			}
		}
	}
	if str, ok := v.(string); ok {
		n := utf8.RuneCountInString(str)
		switch {
		case s.MinLength != nil && n < *s.MinLength:
			return failKW(path, "shorter than minLength", "minLength", s, v)
		case s.MaxLength != nil && n > *s.MaxLength:
			return failKW(path, "longer than maxLength", "maxLength", s, v)
		case s.Pattern != "":
			if re := k.regexp(s.Pattern); re != nil && !re.MatchString(str) {
				return failKW(path, "does not match the pattern", "pattern", s, v)
			}
		}
	}
	return nil
}

func (k *checker) object(m map[string]any, s *jsonschema.Schema, path []string, depth int) *failure {
	for _, name := range sortedKeys(m) {
		val := m[name]
		p := append(path, name)
		if s.PropertyNames != nil {
			if f := k.checkDepth(name, s.PropertyNames, p, depth+1); f != nil {
				f.why = "property name: " + f.why
				f.path, f.name = p, true
				return f
			}
		}
		for _, sub := range k.propertySchemas(s, name) {
			if f := k.checkDepth(val, sub, p, depth+1); f != nil {
				if sub == s.AdditionalProperties && isFalse(sub) {
					f.kw, f.s, f.v, f.prop = "additionalProperties", s, m, name // f.path stays the property's
				}
				return f
			}
		}
		if ds := s.DependentSchemas[name]; ds != nil {
			if f := k.checkDepth(m, ds, path, depth+1); f != nil {
				return f
			}
		}
		if req := s.DependentRequired[name]; len(req) > 0 {
			for _, r := range req {
				if _, ok := m[r]; !ok {
					f := failKW(path, "missing property "+strconv.Quote(r)+" (dependentRequired)", "dependentRequired", s, m)
					f.prop = name + "\x00" + r
					return f
				}
			}
		}
	}
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			f := failKW(path, "missing required property "+strconv.Quote(r), "required", s, m)
			f.prop = r
			return f
		}
	}
	if s.MinProperties != nil && len(m) < *s.MinProperties {
		return failKW(path, "fewer properties than minProperties", "minProperties", s, m)
	}
	if s.MaxProperties != nil && len(m) > *s.MaxProperties {
		return failKW(path, "more properties than maxProperties", "maxProperties", s, m)
	}
	if s.UnevaluatedProperties != nil {
		for _, name := range sortedKeys(m) {
			if k.evaluatesProperty(s, name, 0) {
				continue
			}
			if f := k.checkDepth(m[name], s.UnevaluatedProperties, append(path, name), depth+1); f != nil {
				if isFalse(s.UnevaluatedProperties) {
					f.why = "unexpected property"
					f.kw, f.s, f.v, f.prop = "additionalProperties", s, m, name // f.path stays the property's
				}
				return f
			}
		}
	}
	return nil
}

// propertySchemas are the subschemas a property's value must satisfy:
// its properties entry and matching patternProperties, else
// additionalProperties.
func (k *checker) propertySchemas(s *jsonschema.Schema, name string) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	matched := false
	if p, ok := s.Properties[name]; ok {
		out = append(out, p)
		matched = true
	}
	for pat, ps := range s.PatternProperties {
		if re := k.regexp(pat); re != nil && re.MatchString(name) {
			out = append(out, ps)
			matched = true
		}
	}
	if !matched && s.AdditionalProperties != nil {
		out = append(out, s.AdditionalProperties)
	}
	return out
}

// evaluatesProperty approximates unevaluatedProperties: whether s or a
// subschema in place (allOf, anyOf, oneOf, $ref, if/then/else, dependent
// schemas) declares the property, whatever the branch's outcome.
func (k *checker) evaluatesProperty(s *jsonschema.Schema, name string, depth int) bool {
	if s == nil || depth > 16 {
		return false
	}
	if _, ok := s.Properties[name]; ok || s.AdditionalProperties != nil {
		return true
	}
	for pat := range s.PatternProperties {
		if re := k.regexp(pat); re != nil && re.MatchString(name) {
			return true
		}
	}
	subs := slices.Concat(s.AllOf, s.AnyOf, s.OneOf, []*jsonschema.Schema{k.ref(s), s.If, s.Then, s.Else})
	for _, ds := range s.DependentSchemas {
		subs = append(subs, ds)
	}
	for _, sub := range subs {
		if k.evaluatesProperty(sub, name, depth+1) {
			return true
		}
	}
	return false
}

func (k *checker) array(a []any, s *jsonschema.Schema, path []string, depth int) *failure {
	for i, item := range a {
		sub := s.Items
		if i < len(s.PrefixItems) {
			sub = s.PrefixItems[i]
		} else if sub == nil && len(s.PrefixItems) == 0 {
			sub = s.UnevaluatedItems // approximation: nothing else evaluates it
		}
		if f := k.checkDepth(item, sub, append(path, strconv.Itoa(i)), depth+1); f != nil {
			return f
		}
	}
	if s.MinItems != nil && len(a) < *s.MinItems {
		return failKW(path, "fewer items than minItems", "minItems", s, a)
	}
	if s.MaxItems != nil && len(a) > *s.MaxItems {
		return failKW(path, "more items than maxItems", "maxItems", s, a)
	}
	if s.UniqueItems && !uniqueItems(a) {
		return failKW(path, "items are not unique", "uniqueItems", s, a)
	}
	if s.Contains != nil {
		n := 0
		for _, item := range a {
			if k.checkDepth(item, s.Contains, path, depth+1) == nil {
				n++
			}
		}
		lo := 1
		if s.MinContains != nil {
			lo = *s.MinContains
		}
		if n < lo || s.MaxContains != nil && n > *s.MaxContains {
			return failKW(path, "contains: wrong number of matching items", "contains", s, a)
		}
	}
	return nil
}

// logic checks allOf, anyOf, oneOf, not and if/then/else. A failed anyOf
// or oneOf reports the failure of the branch that went deepest, the one v
// was most likely meant for.
func (k *checker) logic(v any, s *jsonschema.Schema, path []string, depth int) *failure {
	for _, sub := range s.AllOf {
		if f := k.checkDepth(v, sub, path, depth+1); f != nil {
			return f
		}
	}
	if len(s.AnyOf) > 0 {
		if f := k.best(v, s.AnyOf, path, depth); f != nil {
			return alternatives(f, "anyOf", s, v, path)
		}
	}
	if len(s.OneOf) > 0 {
		if f := k.best(v, s.OneOf, path, depth); f != nil {
			return alternatives(f, "oneOf", s, v, path)
		}
		n := 0
		for _, sub := range s.OneOf {
			if k.checkDepth(v, sub, path, depth+1) == nil {
				n++
			}
		}
		if n > 1 {
			return failKW(path, "matches more than one oneOf branch", "oneOf>1", s, v)
		}
	}
	if s.Not != nil && !isFalse(s) && k.checkDepth(v, s.Not, path, depth+1) == nil {
		return failKW(path, "matches the schema of not", "not", s, v)
	}
	if s.If != nil {
		next := s.Else
		if k.checkDepth(v, s.If, path, depth+1) == nil {
			next = s.Then
		}
		if f := k.checkDepth(v, next, path, depth+1); f != nil {
			return f
		}
	}
	return nil
}

// alternatives is the failure of an anyOf or oneOf whose branches all
// failed: the deepest branch's when it went below v (v was meant for that
// branch), else one naming the alternatives, since v is none of them.
func alternatives(f *failure, kw string, s *jsonschema.Schema, v any, path []string) *failure {
	if len(f.path) > len(path) || (f.kw != "type" && f.kw != "enum" && f.kw != "const" && f.kw != kw) {
		return f
	}
	return &failure{path: f.path, why: f.why, kw: kw, s: s, v: v}
}

// best is nil when some branch admits v, else the deepest branch failure.
func (k *checker) best(v any, branches []*jsonschema.Schema, path []string, depth int) *failure {
	var deepest *failure
	for _, sub := range branches {
		f := k.checkDepth(v, sub, path, depth+1)
		if f == nil {
			return nil
		}
		if deepest == nil || len(f.path) > len(deepest.path) {
			deepest = f
		}
	}
	return deepest
}

// branchFor picks the branch of an anyOf/oneOf v is meant for: one that
// admits it, else the one whose failure went deepest.
func (k *checker) branchFor(v any, branches []*jsonschema.Schema, path []string, depth int) *jsonschema.Schema {
	var pick *jsonschema.Schema
	best := -1
	for _, sub := range branches {
		f := k.checkDepth(v, sub, path, depth+1)
		if f == nil {
			return sub
		}
		if len(f.path) > best {
			best, pick = len(f.path), sub
		}
	}
	return pick
}
