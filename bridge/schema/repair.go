package schema

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Repair is one contradiction of a spec that the bridge resolved rather
// than let it make a tool unusable (a schema no value satisfies, an enum
// value its own type rejects, a default that breaks the schema).
type Repair struct {
	// Where locates it: a JSON pointer into the tool's input or output
	// schema ("output#/$defs/Pet/properties/status"), or for a pattern the
	// spec schema it sits in ("input pattern in #/components/schemas/Pet").
	Where string `json:"where"`
	// What says what was wrong and what the bridge did.
	What string `json:"what"`
}

// RepairSchema resolves, in place, the contradictions of a converted tool
// schema (root with its $defs) that would reject values the spec means to
// allow, and returns what it did; side names the schema in Where ("input"
// or "output"):
//
//   - an allOf branch that closes additionalProperties while another
//     branch or the schema itself declares more properties (no object
//     could satisfy both) gets those property names, as accept-all
//     members, so the union is still closed; the same for a schema that
//     closes additionalProperties next to an allOf that declares more;
//   - a `required` entry that a closed object does not declare is dropped;
//   - enum and const values whose type disagrees with `type` are coerced
//     when that is lossless ("1" → 1 for an integer, 1 → "1" for a string,
//     "true" → true for a boolean), dropped otherwise; an enum left empty
//     is dropped;
//   - a default or an example that its own schema rejects is dropped;
//   - in an output schema, an array's items next to prefixItems, and a
//     contains that minContains: 0 voids, are made to read alike in
//     draft-07 ([repairer.tuple]), and a property named like a member of
//     JavaScript's Object.prototype accepts anything ([repairer.inherited]),
//     and a format only Ajv asserts is dropped ([repairer.ajvFormat]).
func RepairSchema(root *jsonschema.Schema, side string) []Repair {
	r := &repairer{side: side, k: newChecker(root), seen: map[*jsonschema.Schema]bool{}}
	r.walk(root, "")
	for _, name := range sortedKeys(root.Defs) {
		r.walkIn(root.Defs[name], "$defs", name)
	}
	return r.out
}

type repairer struct {
	side string
	k    *checker
	seen map[*jsonschema.Schema]bool
	path []string // JSON pointer tokens of the schema being repaired
	out  []Repair
}

func escapeToken(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// add records a repair at the current place plus suffix (JSON pointer
// tokens already escaped).
func (r *repairer) add(suffix, format string, args ...any) {
	var b strings.Builder
	b.WriteString(r.side)
	b.WriteByte('#')
	for _, t := range r.path {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	b.WriteString(suffix)
	r.out = append(r.out, Repair{Where: b.String(), What: fmt.Sprintf(format, args...)})
}

// walk repairs s, reached from the current place through the keyword kw
// ("" for none), and its subschemas.
func (r *repairer) walk(s *jsonschema.Schema, kw string) {
	if kw == "" {
		r.visit(s)
		return
	}
	r.path = append(r.path, kw)
	r.visit(s)
	r.path = r.path[:len(r.path)-1]
}

// walkIn is walk for keywords holding several subschemas: name is the
// property name or index.
func (r *repairer) walkIn(s *jsonschema.Schema, kw, name string) {
	r.path = append(r.path, kw, name)
	r.visit(s)
	r.path = r.path[:len(r.path)-2]
}

func (r *repairer) visit(s *jsonschema.Schema) {
	if s == nil || r.seen[s] {
		return
	}
	r.seen[s] = true
	r.allOf(s)
	r.required(s)
	r.enum(s)
	r.examples(s)
	for _, name := range sortedKeys(s.Properties) {
		r.walkIn(s.Properties[name], "properties", name)
	}
	for _, name := range sortedKeys(s.PatternProperties) {
		r.walkIn(s.PatternProperties[name], "patternProperties", name)
	}
	for _, name := range sortedKeys(s.DependentSchemas) {
		r.walkIn(s.DependentSchemas[name], "dependentSchemas", name)
	}
	for i, sub := range s.AllOf {
		r.walkIn(sub, "allOf", strconv.Itoa(i))
	}
	for i, sub := range s.AnyOf {
		r.walkIn(sub, "anyOf", strconv.Itoa(i))
	}
	for i, sub := range s.OneOf {
		r.walkIn(sub, "oneOf", strconv.Itoa(i))
	}
	for i, sub := range s.PrefixItems {
		r.walkIn(sub, "prefixItems", strconv.Itoa(i))
	}
	r.walk(s.Items, "items")
	r.walk(s.AdditionalProperties, "additionalProperties")
	r.walk(s.UnevaluatedProperties, "unevaluatedProperties")
	r.walk(s.UnevaluatedItems, "unevaluatedItems")
	r.walk(s.Contains, "contains")
	r.walk(s.PropertyNames, "propertyNames")
	r.walk(s.Not, "not")
	r.walk(s.If, "if")
	r.walk(s.Then, "then")
	r.walk(s.Else, "else")
	r.walk(s.ContentSchema, "contentSchema")
	r.tuple(s) // after its subschemas: it copies repaired ones
	r.inherited(s)
	r.ajvFormat(s)
}

// ajvFormat drops, in an output schema, a format that ajv-formats asserts
// (the TypeScript SDK client's) and the bridge's checker does not
// ([assertedFormat]): the client would refuse an answer the bridge
// declared conforming. ajv-formats' float, double, password and binary
// accept anything.
func (r *repairer) ajvFormat(s *jsonschema.Schema) {
	switch s.Format {
	case "iso-date-time", "iso-time", "json-pointer-uri-fragment":
		if r.side == "output" {
			r.add("/format", "format %q was dropped: JavaScript clients (ajv-formats) assert it, and this bridge does not check it", s.Format)
			s.Format = ""
		}
	}
}

// objectPrototype are the members of JavaScript's Object.prototype that
// Ajv reads through the prototype when an object lacks its own (its
// properties keyword tests data.name !== undefined); __proto__ it handles.
var objectPrototype = map[string]bool{
	"constructor": true, "hasOwnProperty": true, "isPrototypeOf": true,
	"propertyIsEnumerable": true, "toLocaleString": true, "toString": true,
	"valueOf": true, "__defineGetter__": true, "__defineSetter__": true,
	"__lookupGetter__": true, "__lookupSetter__": true,
}

// inherited makes, in an output schema, each property named like a member
// of Object.prototype accept anything (keeping its title and
// description): the TypeScript SDK client's Ajv validates an answer
// without the member (which the schema allows) against the inherited
// function, which no type admits, and failed the call.
func (r *repairer) inherited(s *jsonschema.Schema) {
	if r.side != "output" {
		return
	}
	for _, name := range sortedKeys(s.Properties) {
		p := s.Properties[name]
		if !objectPrototype[name] || p == nil || unconstrained(p) {
			continue
		}
		s.Properties[name] = &jsonschema.Schema{Title: p.Title, Description: p.Description}
		r.add("/properties/"+escapeToken(name), "its schema was dropped: JavaScript clients (Ajv, in the TypeScript SDK) read a missing %q through Object.prototype and would refuse the answer", name)
	}
}

// tuple rewrites, in an output schema, items next to prefixItems so that
// a draft-07 validator admits every answer the schema admits: the
// TypeScript SDK's client checks structuredContent with Ajv's default
// dialect, draft-07, which knows no prefixItems and applies items to every
// item, the prefix's included (it failed the call of a conforming tuple).
// items: false, no item past the prefix, becomes maxItems (draft-07 would
// refuse every item); an items schema also admits what the prefix does.
// The array's 2020-12 reading loosens only in that an item past the
// prefix may match a prefix schema.
//
// contains with minContains: 0 asks for nothing in 2020-12, and for a
// matching item in draft-07, which knows no minContains: it is dropped
// (with maxContains, which counts its matches).
func (r *repairer) tuple(s *jsonschema.Schema) {
	if r.side != "output" {
		return
	}
	if s.Contains != nil && s.MinContains != nil && *s.MinContains == 0 {
		s.Contains, s.MinContains, s.MaxContains = nil, nil, nil
		r.add("/contains", "contains with minContains: 0 was dropped (a draft-07 client, such as the TypeScript SDK's, asks for one matching item)")
	}
	if len(s.PrefixItems) == 0 || s.Items == nil || unconstrained(s.Items) {
		return
	}
	n := len(s.PrefixItems)
	if isFalse(s.Items) {
		if s.MaxItems == nil || *s.MaxItems > n {
			s.MaxItems = &n
		}
		s.Items = nil
		r.add("/items", "items: false after %d prefixItems became maxItems: %d (a draft-07 client, such as the TypeScript SDK's, applies items to every item)", n, n)
		return
	}
	alts := []*jsonschema.Schema{s.Items}
	for _, p := range s.PrefixItems {
		alts = append(alts, p.CloneSchemas()) // the schemas must form a tree
	}
	s.Items = &jsonschema.Schema{AnyOf: alts}
	r.add("/items", "items also admits what the %d prefixItems do (a draft-07 client, such as the TypeScript SDK's, applies items to every item)", n)
}

// target is s, or the $defs body it refers to when it is a bare $ref.
func (r *repairer) target(s *jsonschema.Schema) *jsonschema.Schema {
	if t := r.k.ref(s); t != nil {
		return t
	}
	return s
}

// declared collects the property names s declares, through allOf and
// bare $refs (bounded).
func (r *repairer) declared(s *jsonschema.Schema, into map[string]bool, depth int) {
	if s == nil || depth > 8 {
		return
	}
	for name := range s.Properties {
		into[name] = true
	}
	if t := r.k.ref(s); t != nil {
		r.declared(t, into, depth+1)
	}
	for _, sub := range s.AllOf {
		r.declared(sub, into, depth+1)
	}
}

// closedMissing lists the names of want that closed schema s neither
// declares nor matches with patternProperties, sorted.
func (r *repairer) closedMissing(s *jsonschema.Schema, want map[string]bool) []string {
	var missing []string
	for _, name := range sortedKeys(want) {
		if _, ok := s.Properties[name]; ok {
			continue
		}
		matched := false
		for pat := range s.PatternProperties {
			if re := r.k.regexp(pat); re != nil && re.MatchString(name) {
				matched = true
			}
		}
		if !matched {
			missing = append(missing, name)
		}
	}
	return missing
}

// allOf opens contradictory closures between s and its allOf branches by
// declaring, in each closed one, the properties the others declare.
func (r *repairer) allOf(s *jsonschema.Schema) {
	if len(s.AllOf) == 0 {
		return
	}
	all := map[string]bool{}
	for name := range s.Properties {
		all[name] = true
	}
	for _, b := range s.AllOf {
		r.declared(b, all, 0)
	}
	for i, b := range s.AllOf {
		body := r.target(b)
		if body == nil || !isFalse(body.AdditionalProperties) {
			continue
		}
		missing := r.closedMissing(body, all)
		if len(missing) == 0 {
			continue
		}
		if body != b {
			// A shared $defs body stays closed where it is used alone: this
			// use gets its own copy.
			body = body.CloneSchemas()
			s.AllOf[i] = body
		}
		addAccepting(body, missing)
		r.add("/allOf/"+strconv.Itoa(i), "allOf branch closes additionalProperties but its siblings declare %s: declared there too, so an object may have both", quoteList(missing))
	}
	if isFalse(s.AdditionalProperties) {
		if missing := r.closedMissing(s, all); len(missing) > 0 {
			addAccepting(s, missing)
			r.add("", "additionalProperties is false but allOf declares %s: declared here too", quoteList(missing))
		}
	}
}

// addAccepting declares names in s as accept-all properties; the branch
// that declares each still constrains it.
func addAccepting(s *jsonschema.Schema, names []string) {
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	for _, n := range names {
		s.Properties[n] = &jsonschema.Schema{}
	}
}

func quoteList(names []string) string {
	const most = 8
	q := make([]string, 0, min(len(names), most))
	for _, n := range names[:min(len(names), most)] {
		q = append(q, strconv.Quote(n))
	}
	out := strings.Join(q, ", ")
	if len(names) > most {
		out += fmt.Sprintf(" and %d more", len(names)-most)
	}
	return out
}

// required drops the required entries a closed object cannot have and, in
// an input schema, declares those an open object requires without
// declaring them ([repairer.requiredUndeclared]).
func (r *repairer) required(s *jsonschema.Schema) {
	if len(s.Required) == 0 {
		return
	}
	if !isFalse(s.AdditionalProperties) {
		if r.side == "input" {
			r.requiredUndeclared(s)
		}
		return
	}
	want := map[string]bool{}
	for _, n := range s.Required {
		want[n] = true
	}
	missing := r.closedMissing(s, want)
	if len(missing) == 0 {
		return
	}
	s.Required = slices.DeleteFunc(s.Required, func(n string) bool { return slices.Contains(missing, n) })
	if len(s.Required) == 0 {
		s.Required = nil
	}
	r.add("/required", "required %s, which the closed object does not declare: dropped", quoteList(missing))
}

// UndeclaredRequired is the description of a property an input object
// requires without declaring it.
const UndeclaredRequired = "Required by the API, whose spec does not describe it: any value is accepted."

// requiredUndeclared declares, accepting any value, the properties an open
// input object lists in required without declaring them (nor matching
// them with patternProperties). They stay required, as the API wants, but
// the model now sees each among the properties with a description saying
// so, rather than a bare name in required that nothing describes (and
// that some hosts refuse: Gemini rejects a function whose required names
// an undefined property). Left alone: an object that declares no property
// (a constraint such as oneOf [{required: [a]}, {required: [b]}]), one
// reached as an allOf, anyOf, oneOf or not branch, or with anyOf or oneOf
// of its own, whose siblings may declare the name; allOf branches and
// $refs it has are looked into.
func (r *repairer) requiredUndeclared(s *jsonschema.Schema) {
	if len(s.Properties) == 0 || s.Ref != "" || len(s.AnyOf)+len(s.OneOf) > 0 {
		return
	}
	if n := len(r.path); n >= 2 {
		switch r.path[n-2] {
		case "allOf", "anyOf", "oneOf":
			return
		}
	}
	if n := len(r.path); n >= 1 && r.path[n-1] == "not" {
		return
	}
	all := map[string]bool{}
	r.declared(s, all, 0)
	want := map[string]bool{}
	for _, name := range s.Required {
		if !all[name] {
			want[name] = true
		}
	}
	missing := r.closedMissing(s, want)
	if len(missing) == 0 {
		return
	}
	if ap := s.AdditionalProperties; ap != nil && !isEmptySchema(ap) {
		// The name is described after all, by additionalProperties: it
		// is declared with that schema, so its value is still checked.
		for _, n := range missing {
			p := ap.CloneSchemas()
			if p.Description == "" {
				p.Description = UndeclaredRequiredAdditional
			}
			s.Properties[n] = p
		}
		r.add("/required", "required %s, which the object does not declare: declared with its additionalProperties schema", quoteList(missing))
		return
	}
	for _, n := range missing {
		s.Properties[n] = &jsonschema.Schema{Description: UndeclaredRequired}
	}
	r.add("/required", "required %s, which the object does not declare: declared, accepting any value", quoteList(missing))
}

// UndeclaredRequiredAdditional is the description of a property an input
// object requires without declaring it, whose additionalProperties schema
// it is given.
const UndeclaredRequiredAdditional = "Required by the API, whose spec describes it only as one of the object's additional properties."

// types is the type list of s; nil when it has none.
func types(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// coerce converts v losslessly to one of the types, reporting whether it
// could.
func coerce(v any, ts []string) (any, bool) {
	kind := jsonKind(v)
	for _, t := range ts {
		if typeAdmits(t, kind) {
			return v, true
		}
	}
	for _, t := range ts {
		switch x := v.(type) {
		case string:
			switch t {
			case "integer":
				if n, err := strconv.ParseInt(x, 10, 64); err == nil && strconv.FormatInt(n, 10) == x && math.Abs(float64(n)) < 1<<53 {
					return float64(n), true
				}
			case "number":
				if f, err := strconv.ParseFloat(x, 64); err == nil && strconv.FormatFloat(f, 'f', -1, 64) == x {
					return f, true
				}
			case "boolean":
				if x == "true" || x == "false" {
					return x == "true", true
				}
			}
		case float64, json.Number, int, int64:
			if t == "string" {
				f, _ := number(x)
				return strconv.FormatFloat(f, 'f', -1, 64), true
			}
		case bool:
			if t == "string" {
				return strconv.FormatBool(x), true
			}
		}
	}
	return nil, false
}

// enum coerces or drops the enum and const values that the schema's own
// type rejects.
func (r *repairer) enum(s *jsonschema.Schema) {
	if len(s.Enum) == 0 && s.Const == nil {
		return
	}
	ts := types(s)
	if len(ts) == 0 {
		return
	}
	if r.enumType(s, ts) {
		ts = types(s)
	}
	if len(s.Enum) > 0 {
		var kept []any
		var changed, dropped []string
		seen := make(map[string]struct{}, len(s.Enum)) // canonical keys: one pass, not every pair
		var key []byte
		for _, v := range s.Enum {
			if jsonKind(v) == "" { // a Go type YAML gave: compare as JSON
				if n, err := normalize(v); err == nil {
					v = n
				}
			}
			c, ok := coerce(v, ts)
			switch {
			case !ok:
				dropped = append(dropped, render(v))
				continue
			case jsonKind(c) != jsonKind(v):
				changed = append(changed, render(v)+" → "+render(c))
			}
			key = appendCanonical(key[:0], c)
			if _, dup := seen[string(key)]; !dup {
				seen[string(key)] = struct{}{}
				kept = append(kept, c)
			}
		}
		if len(changed)+len(dropped) > 0 {
			var what []string
			if len(changed) > 0 {
				what = append(what, "coerced "+strings.Join(changed, ", "))
			}
			if len(dropped) > 0 {
				what = append(what, "dropped "+strings.Join(dropped, ", "))
			}
			if len(kept) == 0 {
				what = append(what, "no value left, enum removed")
				kept = nil
			}
			s.Enum = kept
			r.add("/enum", "enum values disagree with type %s: %s", strings.Join(ts, "|"), strings.Join(what, "; "))
		}
	}
	if s.Const != nil {
		c, ok := coerce(*s.Const, ts)
		switch {
		case !ok:
			r.add("/const", "const %s disagrees with type %s: removed", render(*s.Const), strings.Join(ts, "|"))
			s.Const = nil
		case jsonKind(c) != jsonKind(*s.Const):
			r.add("/const", "const %s disagrees with type %s: coerced to %s", render(*s.Const), strings.Join(ts, "|"), render(c))
			s.Const = &c
		}
	}
}

// enumType fixes the type of s when none of its enum values has it or
// converts to it and all of them share another scalar type (Okta declares
// `type: object` for enums of strings): the values are what the API
// sends, so the type follows them. It reports whether it changed the type.
func (r *repairer) enumType(s *jsonschema.Schema, ts []string) bool {
	var declared []string
	for _, t := range ts {
		if t != "null" {
			declared = append(declared, t)
		}
	}
	if len(declared) != 1 || len(s.Enum) == 0 {
		return false
	}
	kind := ""
	for _, v := range s.Enum {
		if v == nil {
			continue
		}
		if jsonKind(v) == "" {
			n, err := normalize(v)
			if err != nil {
				return false
			}
			v = n
		}
		if _, ok := coerce(v, declared); ok {
			return false
		}
		k := jsonKind(v)
		if k == "integer" && kind == "number" || k == "number" && kind == "integer" {
			k = "number"
		} else if kind != "" && k != kind {
			return false
		}
		kind = k
	}
	if kind == "" || kind == "object" || kind == "array" {
		return false
	}
	if len(ts) > 1 {
		s.Type, s.Types = "", []string{kind, "null"}
	} else {
		s.Type, s.Types = kind, nil
	}
	r.add("/type", "type %s, but every enum value is a %s: type set to %s", declared[0], kind, kind)
	return true
}

// render is v as short JSON for a message.
func render(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if len(b) > 40 {
		return string(b[:37]) + "…"
	}
	return string(b)
}

// examples drops a default or examples that s itself rejects.
func (r *repairer) examples(s *jsonschema.Schema) {
	if s.Default != nil {
		var v any
		if err := json.Unmarshal(s.Default, &v); err != nil {
			s.Default = nil
			r.add("/default", "default is not JSON: removed")
		} else if f := r.k.check(v, s, nil); f != nil {
			s.Default = nil
			r.add("/default", "default %s violates its schema (%s): removed", render(v), f)
		}
	}
	if len(s.Examples) == 0 {
		return
	}
	var kept []any // nil until an example is dropped
	for i, ex := range s.Examples {
		v, err := ex, error(nil)
		if !plainJSON(ex, 0) {
			v, err = normalize(ex)
		}
		if err == nil {
			if f := r.k.check(v, s, nil); f != nil {
				err = fmt.Errorf("%s", f)
			}
		}
		switch {
		case err != nil:
			r.add("/examples/"+strconv.Itoa(i), "example %s violates its schema (%s): removed", render(ex), err)
			if kept == nil {
				kept = append(make([]any, 0, len(s.Examples)), s.Examples[:i]...)
			}
		case kept != nil:
			kept = append(kept, ex)
		}
	}
	if kept != nil {
		if len(kept) == 0 {
			kept = nil
		}
		s.Examples = kept
	}
}

// plainJSON reports whether v holds only what encoding/json decodes into
// (or int, which the checker reads as a number), so that checking it needs
// no round trip.
func plainJSON(v any, depth int) bool {
	if depth > 32 {
		return false
	}
	switch x := v.(type) {
	case nil, bool, string, float64, int, int64, json.Number:
		return true
	case []any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !plainJSON(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// normalize turns a Go value from the spec (YAML may give int, map[any]any
// is already converted by kin) into what encoding/json decodes.
func normalize(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(b, &out)
}
