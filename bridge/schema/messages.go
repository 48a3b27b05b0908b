package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Explain says why the tool arguments v do not satisfy the input schema
// root, in a sentence an agent can act on: which argument, what it must be,
// and what it got, e.g. `"limit" must be an integer >= 1, got "ten"`. It
// names instance locations ("body.tags[0]"), never schema paths, and
// renders values as JSON, never as Go values. "" means the checker found no
// problem (the caller then falls back to the validator's own words).
//
// Formats are not asserted, as jsonschema-go does not assert them on
// arguments (a message never blames a value the call would accept), but
// for the ranges of int32 and int64, which the bridge holds arguments to
// itself (see [IntFormatError]).
func Explain(v any, root *jsonschema.Schema) string {
	if root == nil {
		return ""
	}
	k := newChecker(root)
	k.noFormats = true
	f := k.check(v, root, nil)
	if f == nil {
		return ""
	}
	path := f.path
	if (f.kw == "additionalProperties" || f.name) && len(path) > 0 {
		path = path[:len(path)-1] // the path of the property not allowed: name its object
	}
	return k.message(f, fieldName(v, path))
}

// IntFormatError says which number in v lies outside the range its
// schema's format (int32, int64) allows, in [Explain]'s words; "" when
// none does. jsonschema-go asserts no format, so arguments it accepts are
// checked here too, for schemas with such a format ([UsesIntFormat]).
// Where the checker finds another problem first (it reads a few keywords
// more loosely than the validator that accepted v), v is not blamed.
func IntFormatError(v any, root *jsonschema.Schema) string {
	if root == nil {
		return ""
	}
	k := newChecker(root)
	k.noFormats = true
	f := k.check(v, root, nil)
	if f == nil || f.kw != "format" {
		return ""
	}
	return k.message(f, fieldName(v, f.path))
}

// Describe says in words what a value of s must be ("an integer >= 1",
// `one of "asc", "desc"`), resolving "#/$defs/..." references against root;
// "" when s constrains nothing worth saying.
func Describe(s, root *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	var defs map[string]*jsonschema.Schema
	if root != nil {
		defs = root.Defs
	}
	k := &checker{defs: defs}
	return k.describe(s, 0)
}

// message renders one failure.
func (k *checker) message(f *failure, field string) string {
	subject := "the arguments"
	if field != "" {
		subject = strconv.Quote(field)
	}
	if f.name && len(f.path) > 0 {
		// The property's name, not its value: "body" takes names of at most 5 characters.
		name := f.path[len(f.path)-1]
		d := k.describe(f.s, 0)
		if c := k.constraints(f.s, "string"); d == "" && c != "" {
			d = "a string" + c
		}
		if d == "" {
			d = "as its schema says"
		}
		if field == "" {
			return fmt.Sprintf("the argument name %s is not allowed: names must be %s", strconv.Quote(name), d)
		}
		return fmt.Sprintf("%s has a property named %s: its property names must be %s", subject, strconv.Quote(name), d)
	}
	switch f.kw {
	case "contains":
		a, _ := f.v.([]any)
		n := 0
		for _, item := range a {
			if k.check(item, f.s.Contains, nil) == nil {
				n++
			}
		}
		lo, hi := 1, -1
		if f.s.MinContains != nil {
			lo = *f.s.MinContains
		}
		if f.s.MaxContains != nil {
			hi = *f.s.MaxContains
		}
		var want string
		switch {
		case hi < 0:
			want = "at least " + plural(lo, "item", "items")
		case lo == hi:
			want = "exactly " + plural(lo, "item", "items")
		case lo == 0:
			want = "at most " + plural(hi, "item", "items")
		default:
			want = fmt.Sprintf("%d to %d items", lo, hi)
		}
		d := k.describe(f.s.Contains, 0)
		if d == "" {
			d = "matching its schema"
		} else {
			d = "that " + map[bool]string{true: "is", false: "are"}[lo == 1 && hi < 0 || lo == 1 && hi == 1] + " " + d
		}
		return fmt.Sprintf("%s must contain %s %s, got %s (%d such)", subject, want, d, renderValue(f.v), n)
	case "required":
		name := join(field, f.prop)
		msg := strconv.Quote(name) + " is required"
		if ps := f.s.Properties[f.prop]; ps != nil {
			if ps.Description == UndeclaredRequired {
				// Declared by [repairer.requiredUndeclared]: say what
				// to send, since no schema does.
				msg += " (the API requires it but its spec does not describe it: any value is accepted)"
			} else if d := k.describe(ps, 0); d != "" {
				msg += " (" + d + ")"
			}
		}
		return msg
	case "additionalProperties":
		if f.s.UnevaluatedProperties != nil {
			// Names the in-place subschemas declare are taken too.
			f.s = k.inPlaceProperties(f.s)
		}
		var msg string
		if field == "" {
			msg = "unknown argument " + strconv.Quote(f.prop)
		} else {
			msg = subject + " has no property " + strconv.Quote(f.prop)
		}
		if near := nearestName(f.prop, f.s.Properties); near != "" {
			msg += " (did you mean " + strconv.Quote(near) + "?)"
		}
		if allowed := allowedNames(f.s); allowed != "" {
			if field == "" {
				msg += "; the tool takes " + allowed
			} else {
				msg += "; it takes " + allowed
			}
		} else if field == "" {
			msg += "; the tool takes no arguments"
		}
		return msg
	case "dependentRequired":
		has, needs, _ := strings.Cut(f.prop, "\x00")
		return fmt.Sprintf("%s is required too, since %s is given", strconv.Quote(join(field, needs)), strconv.Quote(join(field, has)))
	case "minProperties", "maxProperties":
		n := len(f.v.(map[string]any))
		if f.kw == "minProperties" {
			return fmt.Sprintf("%s must have at least %s, got %d", subject, plural(*f.s.MinProperties, "property", "properties"), n)
		}
		return fmt.Sprintf("%s must have at most %s, got %d", subject, plural(*f.s.MaxProperties, "property", "properties"), n)
	case "oneOf>1":
		return subject + " matches more than one of the alternatives its schema allows (oneOf), got " + renderValue(f.v) + "; give a value that fits exactly one: " + k.describe(f.s, 0)
	case "not":
		return subject + " must not be " + k.describe(f.s.Not, 0) + ", got " + renderValue(f.v)
	case "false":
		return subject + " is not allowed here"
	case "double":
		return subject + " must be a number of magnitude below about 1.8e308 (a double), got " + renderValue(f.v)
	case "format":
		if lo, hi, ok := intRange(f.s.Format); ok {
			d := k.describe(f.s, 0)
			if d == "" {
				d = "a number"
			}
			return fmt.Sprintf("%s must be %s within the %s range, %d to %d, got %s", subject, d, f.s.Format, lo, hi, renderValue(f.v))
		}
	}
	d := k.describe(f.s, 0)
	if d == "" && f.s != nil && f.s.Type == "" && len(f.s.Types) == 0 {
		// A schema without a type of its own (a constraint beside a $ref,
		// inlined as allOf: [{maxLength: 2}]) constrains the value's type.
		if t := jsonKind(f.v); t != "" && t != "null" && t != "boolean" {
			if c := k.constraints(f.s, t); c != "" {
				d = typeNoun(t) + c
			}
		}
	}
	if d == "" {
		d = "a valid value"
	}
	return subject + " must be " + d + ", got " + renderGot(f.kw, f.v)
}

// fieldName renders instance path tokens as "body.tags[0]", walking v to
// tell array indices from property names.
func fieldName(v any, path []string) string {
	var b strings.Builder
	cur := v
	for _, tok := range path {
		switch x := cur.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(x) {
				cur = x[i]
			} else {
				cur = nil
			}
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
			if m, ok := x.(map[string]any); ok {
				cur = m[tok]
			} else {
				cur = nil
			}
		}
	}
	return b.String()
}

func join(field, prop string) string {
	if field == "" {
		return prop
	}
	return field + "." + prop
}

// nearestName is the declared property closest to name by edit distance
// (at most 2, or a third of name's length), "" when none is that close:
// the likely typo fix.
func nearestName(name string, props map[string]*jsonschema.Schema) string {
	limit := max(2, utf8.RuneCountInString(name)/3)
	best, bestD := "", limit+1
	lower := strings.ToLower(name)
	n := utf8.RuneCountInString(lower)
	for p := range props {
		lp := strings.ToLower(p)
		if abs(n-utf8.RuneCountInString(lp)) > bestD {
			// The distance is at least the difference in length: p
			// cannot be nearer, and a huge name is never compared
			// rune by rune.
			continue
		}
		if d := EditDistance(lower, lp); d < bestD || (d == bestD && p < best) {
			best, bestD = p, d
		}
	}
	return best
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// EditDistance is the optimal string alignment (restricted
// Damerau-Levenshtein) distance between a and b in runes: insertions,
// deletions, substitutions and transpositions of adjacent runes each cost
// 1 ("limt" and "lmiit" are both 1 from "limit"). The CLI's "did you mean"
// uses it too.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// maxListed bounds the names and enum values a message lists.
const maxListed = 12

// allowedNames lists the properties an object schema declares, quoted.
func allowedNames(s *jsonschema.Schema) string {
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range s.Properties {
			if !yield(n) {
				return
			}
		}
	})
	q := make([]string, 0, len(names))
	for i, n := range names {
		if i == maxListed {
			q = append(q, fmt.Sprintf("… (%d in all)", len(names)))
			break
		}
		q = append(q, strconv.Quote(n))
	}
	out := strings.Join(q, ", ")
	if len(s.PatternProperties) > 0 {
		pats := make([]string, 0, len(s.PatternProperties))
		for p := range s.PatternProperties {
			pats = append(pats, p)
		}
		sort.Strings(pats)
		if out != "" {
			out += ", and "
		}
		out += "names matching " + strings.Join(pats, " or ")
	}
	return out
}

// describeMaxDepth bounds how far describe follows references and
// alternatives.
const describeMaxDepth = 4

// describe says what a value of s must be.
func (k *checker) describe(s *jsonschema.Schema, depth int) string {
	if s == nil || depth > describeMaxDepth {
		return ""
	}
	if isFalse(s) {
		return "nothing (no value is allowed)"
	}
	if s.Enum != nil {
		return "one of " + listValues(s.Enum)
	}
	if s.Const != nil {
		return "exactly " + renderJSON(*s.Const)
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		if t := k.ref(s); t != nil {
			return k.describe(t, depth+1)
		}
		for _, alts := range [][]*jsonschema.Schema{s.AnyOf, s.OneOf} {
			if len(alts) > 0 {
				return k.describeAlternatives(alts, depth)
			}
		}
		for _, sub := range s.AllOf {
			if d := k.describe(sub, depth+1); d != "" {
				return d
			}
		}
		return ""
	}
	var parts []string
	nullable := false
	for _, t := range types {
		if t == "null" {
			nullable = true
			continue
		}
		parts = append(parts, typeNoun(t))
	}
	var out string
	if len(parts) == 1 {
		out = parts[0] + k.constraints(s, types[slices.IndexFunc(types, func(t string) bool { return t != "null" })])
	} else {
		out = strings.Join(parts, " or ")
	}
	if nullable {
		if out == "" {
			return "null"
		}
		out += " or null"
	}
	return out
}

// describeAlternatives joins what each branch must be: "an integer or a
// string".
func (k *checker) describeAlternatives(alts []*jsonschema.Schema, depth int) string {
	var ds []string
	for _, a := range alts {
		d := k.describe(a, depth+1)
		if d == "" {
			return ""
		}
		if !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	return strings.Join(ds, ", or ")
}

func typeNoun(t string) string {
	switch t {
	case "integer", "object", "array":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

// constraints are the words after the type noun: " >= 1", " of at least 3
// characters matching ^[a-z]+$", " of strings with at least 1 item".
func (k *checker) constraints(s *jsonschema.Schema, typ string) string {
	var b strings.Builder
	switch typ {
	case "integer", "number":
		lo, hi := "", ""
		switch {
		case s.Minimum != nil:
			lo = ">= " + num(*s.Minimum)
		case s.ExclusiveMinimum != nil:
			lo = "> " + num(*s.ExclusiveMinimum)
		}
		switch {
		case s.Maximum != nil:
			hi = "<= " + num(*s.Maximum)
		case s.ExclusiveMaximum != nil:
			hi = "< " + num(*s.ExclusiveMaximum)
		}
		switch {
		case s.Minimum != nil && s.Maximum != nil:
			b.WriteString(" between " + num(*s.Minimum) + " and " + num(*s.Maximum))
		case lo != "" && hi != "":
			b.WriteString(" " + lo + " and " + hi)
		case lo != "":
			b.WriteString(" " + lo)
		case hi != "":
			b.WriteString(" " + hi)
		}
		if s.MultipleOf != nil {
			if b.Len() > 0 {
				b.WriteString(" and")
			}
			b.WriteString(" a multiple of " + num(*s.MultipleOf))
		}
	case "string":
		switch {
		case s.MinLength != nil && s.MaxLength != nil && *s.MinLength == *s.MaxLength:
			b.WriteString(" of exactly " + plural(*s.MinLength, "character", "characters"))
		case s.MinLength != nil && s.MaxLength != nil:
			fmt.Fprintf(&b, " of %d to %d characters", *s.MinLength, *s.MaxLength)
		case s.MinLength != nil:
			b.WriteString(" of at least " + plural(*s.MinLength, "character", "characters"))
		case s.MaxLength != nil:
			b.WriteString(" of at most " + plural(*s.MaxLength, "character", "characters"))
		}
		if s.Pattern != "" {
			b.WriteString(" matching " + s.Pattern)
		}
		if s.Format != "" {
			b.WriteString(" in " + s.Format + " format")
		}
	case "array":
		if items := s.Items; items != nil {
			if t := k.ref(items); t != nil && items.Type == "" {
				items = t
			}
			if items.Type != "" && items.Type != "null" {
				b.WriteString(" of " + items.Type + "s")
			}
		}
		switch {
		case s.MinItems != nil && s.MaxItems != nil && *s.MinItems == *s.MaxItems:
			b.WriteString(" with exactly " + plural(*s.MinItems, "item", "items"))
		case s.MinItems != nil && s.MaxItems != nil:
			fmt.Fprintf(&b, " with %d to %d items", *s.MinItems, *s.MaxItems)
		case s.MinItems != nil:
			b.WriteString(" with at least " + plural(*s.MinItems, "item", "items"))
		case s.MaxItems != nil:
			b.WriteString(" with at most " + plural(*s.MaxItems, "item", "items"))
		}
		if s.UniqueItems {
			b.WriteString(" without duplicates")
		}
	case "object":
		if s.MinProperties != nil {
			b.WriteString(" with at least " + plural(*s.MinProperties, "property", "properties"))
		}
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// num renders a bound without trailing zeros: 1, 0.5, 1e+21.
func num(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// listValues quotes enum values as JSON: `"a", "b" or "c"`.
func listValues(vs []any) string {
	q := make([]string, 0, len(vs))
	for i, v := range vs {
		if i == maxListed {
			q = append(q, fmt.Sprintf("… (%d in all)", len(vs)))
			break
		}
		q = append(q, renderJSON(v))
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// maxRendered bounds a value quoted in a message.
const maxRendered = 60

// renderGot is the "got ..." part: the value, plus its length when the
// length is what failed.
func renderGot(kw string, v any) string {
	r := renderValue(v)
	switch x := v.(type) {
	case string:
		if kw == "minLength" || kw == "maxLength" {
			r += " (" + plural(utf8.RuneCountInString(x), "character", "characters") + ")"
		}
	case []any:
		if (kw == "minItems" || kw == "maxItems") && !strings.HasPrefix(r, "an array") {
			r += " (" + plural(len(x), "item", "items") + ")"
		}
	}
	return r
}

// renderValue shows a JSON value in a message, shortened: a long string
// keeps its start, a long array or object is named by its size.
func renderValue(v any) string {
	switch x := v.(type) {
	case string:
		if utf8.RuneCountInString(x) > maxRendered {
			r := []rune(x)
			return renderJSON(string(r[:maxRendered-10])) + "…"
		}
	case []any:
		if s := renderJSON(x); len(s) > maxRendered {
			return "an array of " + plural(len(x), "item", "items")
		}
	case map[string]any:
		if s := renderJSON(x); len(s) > maxRendered {
			return "an object with " + plural(len(x), "property", "properties")
		}
	}
	return renderJSON(v)
}

// renderJSON is v as compact JSON (numbers as numbers, never Go syntax),
// with <, > and & as themselves: a message quotes what the agent sent, and
// "a\u0026b" is not what it sent.
func renderJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "a value that is not JSON"
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// DescribeAt is [Describe] of the subschema at a JSON pointer into root,
// such as the "/properties/limit" of a jsonschema-go error; "" when the
// pointer leads nowhere.
func DescribeAt(root *jsonschema.Schema, pointer string) string {
	s := root
	toks := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	if pointer == "" {
		toks = nil
	}
	for i := 0; i < len(toks) && s != nil; i++ {
		tok := strings.ReplaceAll(strings.ReplaceAll(toks[i], "~1", "/"), "~0", "~")
		next := func() string {
			i++
			if i < len(toks) {
				return strings.ReplaceAll(strings.ReplaceAll(toks[i], "~1", "/"), "~0", "~")
			}
			return ""
		}
		index := func(list []*jsonschema.Schema) *jsonschema.Schema {
			n, err := strconv.Atoi(next())
			if err != nil || n < 0 || n >= len(list) {
				return nil
			}
			return list[n]
		}
		switch tok {
		case "properties":
			s = s.Properties[next()]
		case "patternProperties":
			s = s.PatternProperties[next()]
		case "$defs":
			s = s.Defs[next()]
		case "dependentSchemas":
			s = s.DependentSchemas[next()]
		case "items":
			s = s.Items
		case "additionalProperties":
			s = s.AdditionalProperties
		case "unevaluatedProperties":
			s = s.UnevaluatedProperties
		case "unevaluatedItems":
			s = s.UnevaluatedItems
		case "propertyNames":
			s = s.PropertyNames
		case "contains":
			s = s.Contains
		case "not":
			s = s.Not
		case "if":
			s = s.If
		case "then":
			s = s.Then
		case "else":
			s = s.Else
		case "allOf":
			s = index(s.AllOf)
		case "anyOf":
			s = index(s.AnyOf)
		case "oneOf":
			s = index(s.OneOf)
		case "prefixItems":
			s = index(s.PrefixItems)
		default:
			return ""
		}
	}
	return Describe(s, root)
}

// inPlaceProperties is s with the properties and patternProperties of its
// in-place subschemas (allOf, anyOf, oneOf, $ref, if/then/else, dependent
// schemas) added, those unevaluatedProperties counts as evaluated: an
// object refused a name under unevaluatedProperties: false takes them all.
func (k *checker) inPlaceProperties(s *jsonschema.Schema) *jsonschema.Schema {
	out := &jsonschema.Schema{Properties: map[string]*jsonschema.Schema{}, PatternProperties: map[string]*jsonschema.Schema{}}
	seen := map[*jsonschema.Schema]bool{}
	var walk func(s *jsonschema.Schema, depth int)
	walk = func(s *jsonschema.Schema, depth int) {
		if s == nil || depth > 16 || seen[s] {
			return
		}
		seen[s] = true
		for n, p := range s.Properties {
			if _, ok := out.Properties[n]; !ok {
				out.Properties[n] = p
			}
		}
		for n, p := range s.PatternProperties {
			out.PatternProperties[n] = p
		}
		for _, sub := range slices.Concat(s.AllOf, s.AnyOf, s.OneOf, []*jsonschema.Schema{k.ref(s), s.If, s.Then, s.Else}) {
			walk(sub, depth+1)
		}
		for _, name := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
			walk(s.DependentSchemas[name], depth+1)
		}
	}
	walk(s, 0)
	return out
}
