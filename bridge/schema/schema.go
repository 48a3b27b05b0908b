package schema

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"
)

// MaxNesting is how many levels of subschemas a converted schema keeps:
// a deeper one (an items or allOf chain thousands of levels long) is cut
// to an accept-all schema with a note. Each level is at most a few levels
// of JSON (a nullable allOf is {"anyOf":[{"allOf":[...]}]}), so a tool
// stays well inside the nesting clients accept (go-sdk's: 1,000, for the
// whole tools/list), and no argument can be nested deeper than 64 levels
// anyway. Real specs nest 15 at most.
const MaxNesting = 64

// schemaDirection says whether a schema describes data sent to the upstream
// (request) or received from it (response). It decides which of readOnly and
// writeOnly properties disappear from the converted schema.
type Direction int

const (
	// dirRequest drops readOnly properties: the agent must not be asked for them.
	Request Direction = iota
	// dirResponse drops writeOnly properties: the upstream never returns them.
	Response
)

// schemaConverter converts kin-openapi schemas (OpenAPI 3.0 and 3.1; Swagger
// 2.0 after openapi2conv) into JSON Schema 2020-12 for ONE tool, collecting
// shared and recursive schemas into $defs. Create one per tool schema (input
// or output); it is not safe for concurrent use.
//
// Schemas are keyed by their *openapi3.Schema pointer. Before converting, a
// pre-pass over the subtree counts the uses of each pointer and finds
// cycles. A schema used once is inlined, which reads best for a model; one
// used twice or more, or recursive, is converted once into $defs and each use
// becomes {"$ref": "#/$defs/Name"}. Across convert calls of one converter
// (the parameters and body of a tool), a schema already in $defs is referred
// to and one inlined earlier is inlined again: results are final when
// returned (no later call rewrites them), so callers may copy or annotate
// them. The output is always a tree, as jsonschema-go's Resolve requires.
type Converter struct {
	dir     Direction
	entries map[*openapi3.Schema]*entry
	taken   map[string]bool               // $defs names handed out
	defsMap map[string]*jsonschema.Schema // nil until the first $def

	// Pre-pass results for the current convert call.
	uses      map[*openapi3.Schema]int
	recursive map[*openapi3.Schema]bool
	onStack   map[*openapi3.Schema]bool

	cur     string   // $ref of the innermost referenced schema being converted
	depth   int      // subschema levels above the one being converted
	repairs []Repair // patterns rewritten or dropped

	chunks []*nodeChunk // where node hands out schemas from; see Release
	used   int          // schemas handed out from the last chunk
}

// schemaEntry is the conversion state of one *openapi3.Schema.
type entry struct {
	ref        string // first $ref it was reached through, "" if none yet
	hint       string // property name it was first met under, for unnamed schemas
	name       string // $defs name once it has (or is getting) a $defs body
	converting bool   // being inlined right now: meeting it again is a cycle
}

func NewConverter(dir Direction) *Converter {
	return &Converter{
		dir:       dir,
		entries:   make(map[*openapi3.Schema]*entry),
		taken:     make(map[string]bool),
		uses:      make(map[*openapi3.Schema]int),
		recursive: make(map[*openapi3.Schema]bool),
		onStack:   make(map[*openapi3.Schema]bool),
	}
}

// convert returns the JSON Schema for ref. A schema used once is inlined; one
// used twice or more within ref, recursive, or put in $defs by an earlier
// call becomes {"$ref":"#/$defs/X"} with the body in defs. A nil ref, or one whose
// target did not resolve, gives an accept-all schema.
func (c *Converter) Convert(ref *openapi3.SchemaRef) *jsonschema.Schema {
	clear(c.uses)
	clear(c.recursive)
	c.count(ref)
	return c.conv(ref, "")
}

// Repairs lists the patterns the converter rewrote for JavaScript or
// dropped (see [Pattern]), in the order met.
func (c *Converter) Repairs() []Repair { return c.repairs }

// side names the converter's direction in a [Repair].
func (c *Converter) side() string {
	if c.dir == Request {
		return "input"
	}
	return "output"
}

// pattern returns p as both Go and JavaScript read it, or "" when it must
// be dropped, recording a repair either way it changed.
func (c *Converter) pattern(p, kind string) string {
	src := p
	var out, why string
	ok := true
	if inner, flags, lit := regexLiteral(p); lit {
		p = inner
		if strings.Trim(flags, "dguy") != "" {
			ok, why = false, "a JavaScript regex literal whose flags ("+flags+") a pattern cannot carry"
		}
	}
	if ok {
		out, ok, why = Pattern(p)
	}
	switch {
	case !ok:
		c.repair(kind, fmt.Sprintf("%s %q dropped: %s", kind, src, why))
	case out != src:
		c.repair(kind, fmt.Sprintf("%s %q rewritten as %q, which Go and JavaScript (Unicode mode) both read alike", kind, src, out))
	}
	return out
}

// repair records a change the converter made to what the spec says, once
// (an inlined schema is converted once per use); kind names the keyword or
// "schema".
func (c *Converter) repair(kind, what string) {
	where := c.side() + " " + kind
	if c.cur != "" {
		where += " in " + c.cur
	}
	if rep := (Repair{Where: where, What: what}); !slices.Contains(c.repairs, rep) {
		c.repairs = append(c.repairs, rep)
	}
}

// regexLiteral recognizes a pattern written as a JavaScript regex literal,
// /^...$/flags: anchored inside its slashes, it can match nothing as a
// pattern ('^' after a literal '/'), so the author meant the body.
func regexLiteral(p string) (inner, flags string, ok bool) {
	j := strings.LastIndexByte(p, '/')
	if len(p) < 3 || p[0] != '/' || j < 2 {
		return "", "", false
	}
	inner, flags = p[1:j], p[j+1:]
	if strings.Trim(flags, "dgimsuvy") != "" {
		return "", "", false
	}
	anchored := strings.HasPrefix(inner, "^") || (strings.HasSuffix(inner, "$") && !strings.HasSuffix(inner, `\$`))
	return inner, flags, anchored
}

// defs returns the collected $defs (nil if none) to attach at the root schema.
// The map is the converter's own and grows with later convert calls.
func (c *Converter) Defs() map[string]*jsonschema.Schema {
	return c.defsMap
}

// convCount is the pre-pass: it counts the uses of every schema reachable
// from ref along the edges conv follows, and marks the schemas on a cycle.
func (c *Converter) count(ref *openapi3.SchemaRef) {
	if ref == nil || ref.Value == nil {
		return
	}
	s := ref.Value
	c.uses[s]++
	if c.onStack[s] {
		c.recursive[s] = true
	}
	if c.uses[s] > 1 {
		return
	}
	c.onStack[s] = true
	c.children(s, c.count)
	delete(c.onStack, s)
}

func (c *Converter) conv(ref *openapi3.SchemaRef, hint string) *jsonschema.Schema {
	if ref == nil {
		return c.node()
	}
	s := ref.Value
	if s == nil {
		if ref.Ref != "" {
			n := c.node()
			n.Description = "Unresolved reference " + ref.Ref + "."
			return n
		}
		return c.node()
	}
	e := c.entries[s]
	if e == nil {
		e = &entry{hint: hint}
		c.entries[s] = e
	}
	if e.ref == "" {
		e.ref = ref.Ref
	}
	if ref.Ref != "" {
		defer func(prev string) { c.cur = prev }(c.cur)
		c.cur = ref.Ref
	}
	switch {
	case e.name != "": // in $defs, or being converted into it
		return c.refTo(e.name)
	case e.converting: // a cycle the pre-pass did not see: close it with a $def
		c.assignName(s, e)
		return c.refTo(e.name)
	case c.depth >= MaxNesting:
		return c.cut()
	}
	c.depth++
	defer func() { c.depth-- }()
	switch {
	case c.recursive[s] || c.uses[s] > 1:
		c.assignName(s, e) // before the body, so that inner uses refer to it
		c.storeDef(e.name, c.body(s, hint))
		return c.refTo(e.name)
	}
	e.converting = true
	out := c.body(s, hint)
	e.converting = false
	if e.name != "" {
		c.storeDef(e.name, out)
		return c.refTo(e.name)
	}
	return out
}

// cut is what stands for a subschema nested past [MaxNesting]: any value,
// said in its description and recorded as a repair.
func (c *Converter) cut() *jsonschema.Schema {
	n := c.node()
	n.Description = fmt.Sprintf("Nested deeper than %d levels: not described further; any value is accepted here.", MaxNesting)
	c.repair("schema", fmt.Sprintf("subschemas nested deeper than %d levels cut: any value is accepted there", MaxNesting))
	return n
}

// nodeChunk is a block of schemas node hands out one by one: one
// allocation for many of the ~30,000 schemas a large spec's tools are
// built from (GitHub's), and reused through chunkPool once Release says
// they are dead.
type nodeChunk [64]jsonschema.Schema

var chunkPool = sync.Pool{New: func() any { return new(nodeChunk) }}

// node returns a new, zero schema.
func (c *Converter) node() *jsonschema.Schema {
	if len(c.chunks) == 0 || c.used == len(nodeChunk{}) {
		c.chunks = append(c.chunks, chunkPool.Get().(*nodeChunk))
		c.used = 0
	}
	n := &c.chunks[len(c.chunks)-1][c.used]
	c.used++
	return n
}

// refTo returns {"$ref": "#/$defs/name"}.
func (c *Converter) refTo(name string) *jsonschema.Schema {
	n := c.node()
	n.Ref = defRef(name)
	return n
}

// never returns {"not": {}}, the schema nothing matches.
func (c *Converter) never() *jsonschema.Schema {
	n := c.node()
	n.Not = c.node()
	return n
}

// Release hands the schemas this converter made back for later
// converters to reuse, and empties them. Call it only once nothing
// reaches them any more (typically right after [Marshal] of the schema
// they are part of, and any check of it): a schema in use would change
// under its holder. It ends the converter's use too (its $defs are among
// those schemas). Not calling it is safe; they are then garbage like any
// other.
func (c *Converter) Release() {
	for i, ch := range c.chunks {
		n := len(ch)
		if i == len(c.chunks)-1 {
			n = c.used
		}
		clear(ch[:n])
		chunkPool.Put(ch)
	}
	c.chunks, c.used = nil, 0
}

func (c *Converter) storeDef(name string, body *jsonschema.Schema) {
	if c.defsMap == nil {
		c.defsMap = make(map[string]*jsonschema.Schema)
	}
	c.defsMap[name] = body
}

// convName gives e a unique $defs name, once: the last segment of the $ref it
// was reached through, else its title, else the property it sat under.
func (c *Converter) assignName(s *openapi3.Schema, e *entry) {
	if e.name != "" {
		return
	}
	base := refName(e.ref)
	if base == "" {
		base = sanitizeName(s.Title)
	}
	if base == "" {
		base = sanitizeName(e.hint)
	}
	if base == "" {
		base = "schema"
	}
	name := base
	for i := 2; c.taken[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	c.taken[name] = true
	e.name = name
}

func defRef(name string) string { return "#/$defs/" + name }

// schemaRefName is the sanitized last segment of a $ref
// ("#/components/schemas/Pet" → "Pet", "pet.yaml" → "pet"), "" for none.
func refName(ref string) string {
	if ref == "" {
		return ""
	}
	file, frag, hasFrag := strings.Cut(ref, "#")
	seg := frag
	if !hasFrag || frag == "" || frag == "/" {
		seg = file[strings.LastIndexByte(file, '/')+1:]
		for _, ext := range []string{".yaml", ".yml", ".json"} {
			seg = strings.TrimSuffix(seg, ext)
		}
	} else {
		seg = frag[strings.LastIndexByte(frag, '/')+1:]
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
	}
	return sanitizeName(seg)
}

// schemaSanitizeName keeps [A-Za-z0-9_.-], replaces other runs with "_" and
// caps the length, so the name needs no escaping in a JSON pointer or URI.
func sanitizeName(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-'
		switch {
		case ok:
			b.WriteRune(r)
			under = false
		case !under && b.Len() > 0:
			b.WriteByte('_')
			under = true
		}
		if b.Len() >= 64 {
			break
		}
	}
	return strings.TrimRight(b.String(), "_")
}

// convBody converts the keywords of s itself; subschemas go through conv.
func (c *Converter) body(s *openapi3.Schema, hint string) *jsonschema.Schema {
	if s.Always != nil { // 3.1 boolean schema
		if *s.Always {
			return c.node()
		}
		return c.never()
	}
	out := c.node()
	out.Title, out.Description, out.Deprecated, out.Format = s.Title, s.Description, s.Deprecated, s.Format
	var notes []string
	if s.DynamicRef != "" {
		// Not followed (no tool schema carries the dynamic scope it needs):
		// what it names is accepted unchecked, which a repair note says.
		c.repair("schema", fmt.Sprintf("$dynamicRef %q not followed: any value is accepted there", s.DynamicRef))
	}

	types := c.types(s, out, &notes)
	if len(s.Enum) > 0 {
		out.Enum = slices.Clone(s.Enum)
		if s.Nullable && !slices.Contains(out.Enum, nil) {
			out.Enum = append(out.Enum, nil)
		}
	}
	if s.Const != nil {
		v := s.Const
		out.Const = &v
	}
	if s.Default != nil {
		if raw, err := json.Marshal(s.Default); err == nil {
			out.Default = raw
		}
	}
	if s.Example != nil {
		out.Examples = append(out.Examples, s.Example)
	}
	out.Examples = append(out.Examples, s.Examples...)

	c.number(s, out, &notes)
	out.MinLength = intPtr(s.MinLength)
	out.MaxLength = uintPtr(s.MaxLength)
	if s.Pattern != "" {
		if out.Pattern = c.pattern(s.Pattern, "pattern"); out.Pattern == "" {
			notes = append(notes, "Pattern not enforced: "+s.Pattern)
		}
	}
	out.ContentSchema = c.optional(s.ContentSchema, hint)
	out.ContentMediaType = s.ContentMediaType
	out.ContentEncoding = s.ContentEncoding

	c.array(s, out, hint)
	if slices.Contains(types, "array") && out.Items == nil {
		out.Items = c.node() // 3.0 arrays often omit items; clients want one
	}
	c.object(s, out, &notes)

	out.AllOf = c.list(s.AllOf, hint)
	out.AnyOf = c.list(s.AnyOf, hint)
	out.OneOf = c.list(s.OneOf, hint)
	out.Not = c.optional(s.Not, hint)
	out.If, out.Then, out.Else = c.optional(s.If, hint), c.optional(s.Then, hint), c.optional(s.Else, hint)
	c.unrequireHidden(s, out)
	overlap := false
	if d := s.Discriminator; d != nil && d.PropertyName != "" {
		notes = append(notes, discriminatorNote(s))
		// The discriminator picks the variant: OpenAPI's variants often
		// overlap as JSON Schema (Cat and Dog both open objects with a
		// pet_type), and "exactly one" would then refuse every value.
		overlap = true
	} else if len(out.OneOf) > 1 && oneOfOverlaps(s.OneOf) {
		// Without a discriminator, alternatives that share values would
		// refuse the very values the author meant (see oneOfOverlaps).
		c.repair("oneOf", "alternatives that overlap (open objects a value can fit together) are offered as anyOf")
		overlap = true
	}
	if overlap {
		if len(out.OneOf) > 0 {
			if out.AnyOf == nil {
				out.AnyOf = out.OneOf
			} else {
				out.AllOf = append(out.AllOf, &jsonschema.Schema{AnyOf: out.OneOf})
			}
			out.OneOf = nil
		}
	}
	if len(notes) > 0 {
		out.Description = strings.Join(slices.Insert(notes, 0, out.Description), "\n\n")
		out.Description = strings.TrimLeft(out.Description, "\n")
	}

	if s.Nullable && (out.AllOf != nil || out.AnyOf != nil || out.OneOf != nil || out.Not != nil) {
		return nullable(out)
	}
	return out
}

// convTypes sets type/types on out: OpenAPI 3.0 nullable adds "null", 3.1 type
// arrays pass through, Swagger's "file" becomes a binary string and unknown
// names are dropped with a note. It returns the final type list.
func (c *Converter) types(s *openapi3.Schema, out *jsonschema.Schema, notes *[]string) []string {
	if s.Type == nil || len(*s.Type) == 0 {
		return nil
	}
	types := make([]string, 0, len(*s.Type)+1)
	for _, t := range *s.Type {
		if t == "file" {
			t = "string"
			if out.Format == "" {
				out.Format = "binary"
			}
		}
		switch {
		case !knownType(t):
			*notes = append(*notes, "Unknown type "+strconv.Quote(t)+" ignored.")
		case !slices.Contains(types, t):
			types = append(types, t)
		}
	}
	if s.Nullable && len(types) > 0 && !slices.Contains(types, "null") {
		types = append(types, "null")
	}
	switch len(types) {
	case 0:
	case 1:
		out.Type = types[0]
	default:
		out.Types = types
	}
	return types
}

// convNumber maps the numeric bounds. OpenAPI 3.0 (and Swagger 2.0) write
// exclusiveMinimum/Maximum as booleans modifying minimum/maximum; 2020-12 and
// OpenAPI 3.1 write the bound itself.
func (c *Converter) number(s *openapi3.Schema, out *jsonschema.Schema, notes *[]string) {
	out.Minimum, out.Maximum = floatPtr(s.Min), floatPtr(s.Max)
	switch {
	case s.ExclusiveMin.Value != nil:
		out.ExclusiveMinimum = floatPtr(s.ExclusiveMin.Value)
	case s.ExclusiveMin.IsTrue() && s.Min != nil:
		out.ExclusiveMinimum, out.Minimum = out.Minimum, nil
	}
	switch {
	case s.ExclusiveMax.Value != nil:
		out.ExclusiveMaximum = floatPtr(s.ExclusiveMax.Value)
	case s.ExclusiveMax.IsTrue() && s.Max != nil:
		out.ExclusiveMaximum, out.Maximum = out.Maximum, nil
	}
	if m := s.MultipleOf; m != nil && *m > 0 {
		if x := *m * 1024; x == math.Trunc(x) {
			// An integer, or a fraction binary floating point holds
			// exactly (0.5, 0.25): division checks it right.
			out.MultipleOf = floatPtr(m)
		} else {
			// A fraction such as 0.01 has no exact binary value, and
			// validators that divide in floating point (jsonschema-go's,
			// Ajv's) refuse 19.99 as a multiple of 0.01: the constraint
			// is said, not enforced; the upstream decides.
			*notes = append(*notes, "Must be a multiple of "+strconv.FormatFloat(*m, 'g', -1, 64)+" (not checked by this bridge).")
		}
	}
}

func (c *Converter) array(s *openapi3.Schema, out *jsonschema.Schema, hint string) {
	out.Items = c.optional(s.Items, hint)
	out.PrefixItems = c.list(s.PrefixItems, hint)
	out.Contains = c.optional(s.Contains, hint)
	out.MinContains = uintPtr(s.MinContains)
	out.MaxContains = uintPtr(s.MaxContains)
	out.UnevaluatedItems = c.boolean(s.UnevaluatedItems, hint)
	out.MinItems = intPtr(s.MinItems)
	out.MaxItems = uintPtr(s.MaxItems)
	out.UniqueItems = s.UniqueItems
}

// convObject maps the object keywords, leaving out the properties the
// direction hides (readOnly in requests, writeOnly in responses) and their
// required entries. Maps are walked in sorted order so that $defs names are
// deterministic.
func (c *Converter) object(s *openapi3.Schema, out *jsonschema.Schema, notes *[]string) {
	var hidden map[string]bool
	if len(s.Properties) > 0 {
		out.Properties = make(map[string]*jsonschema.Schema, len(s.Properties))
		for _, name := range sortedKeys(s.Properties) {
			p := s.Properties[name]
			if c.hidden(p) {
				if hidden == nil {
					hidden = make(map[string]bool)
				}
				hidden[name] = true
				continue
			}
			out.Properties[name] = c.conv(p, name)
		}
	}
	if len(s.Required) > 0 {
		req := make([]string, 0, len(s.Required))
		for _, name := range s.Required {
			if !hidden[name] && !slices.Contains(req, name) {
				req = append(req, name)
			}
		}
		if len(req) > 0 {
			out.Required = req
		}
	}
	out.MinProperties = intPtr(s.MinProps)
	out.MaxProperties = uintPtr(s.MaxProps)
	out.AdditionalProperties = c.boolean(s.AdditionalProperties, "")
	out.UnevaluatedProperties = c.boolean(s.UnevaluatedProperties, "")
	if len(s.PatternProperties) > 0 {
		out.PatternProperties = make(map[string]*jsonschema.Schema, len(s.PatternProperties))
		for _, pat := range sortedKeys(s.PatternProperties) {
			key := c.pattern(pat, "patternProperties key")
			if _, dup := out.PatternProperties[key]; key == "" || dup {
				*notes = append(*notes, "Pattern property not enforced: "+pat)
				continue
			}
			out.PatternProperties[key] = c.conv(s.PatternProperties[pat], "")
		}
	}
	if len(s.DependentSchemas) > 0 {
		out.DependentSchemas = make(map[string]*jsonschema.Schema, len(s.DependentSchemas))
		for _, name := range sortedKeys(s.DependentSchemas) {
			out.DependentSchemas[name] = c.conv(s.DependentSchemas[name], name)
		}
	}
	out.PropertyNames = c.optional(s.PropertyNames, "")
	if len(s.DependentRequired) > 0 {
		out.DependentRequired = make(map[string][]string, len(s.DependentRequired))
		for k, v := range s.DependentRequired {
			out.DependentRequired[k] = slices.Clone(v)
		}
	}
}

// unrequireHidden drops the properties this direction hides (readOnly in a
// request, writeOnly in a response) from the lists that would still demand
// them: s's own required list and dependentRequired, and the required
// lists of its inline allOf members and then/else branches. A property
// counts as hidden when s or one of its allOf members declares it so:
// OpenAPI's `allOf: [$ref Base (id readOnly), {required: [id, name]}]`
// demanded an `id` the tool does not describe (and, beside
// `unevaluatedProperties: false`, refused every value). Members that are a
// $ref are shared definitions and stay as they are; their own required
// lists were already pruned when they were converted.
func (c *Converter) unrequireHidden(s *openapi3.Schema, out *jsonschema.Schema) {
	var hidden map[string]bool
	collect := func(sch *openapi3.Schema) {
		for name, p := range sch.Properties {
			if c.hidden(p) {
				if hidden == nil {
					hidden = make(map[string]bool)
				}
				hidden[name] = true
			}
		}
	}
	collect(s)
	for _, m := range s.AllOf {
		if m != nil && m.Value != nil {
			collect(m.Value)
		}
	}
	if hidden == nil {
		return
	}
	drop := func(req []string) []string {
		if !slices.ContainsFunc(req, func(n string) bool { return hidden[n] }) {
			return req
		}
		kept := slices.DeleteFunc(slices.Clone(req), func(n string) bool { return hidden[n] })
		if len(kept) == 0 {
			return nil
		}
		return kept
	}
	out.Required = drop(out.Required)
	for k, v := range out.DependentRequired {
		if v = drop(v); v == nil {
			delete(out.DependentRequired, k)
		} else {
			out.DependentRequired[k] = v
		}
	}
	if len(out.DependentRequired) == 0 {
		out.DependentRequired = nil
	}
	inline := func(src *openapi3.SchemaRef, n *jsonschema.Schema) {
		if src != nil && src.Ref == "" && n != nil && n.Ref == "" {
			n.Required = drop(n.Required)
		}
	}
	for i, m := range s.AllOf {
		if i < len(out.AllOf) {
			inline(m, out.AllOf[i])
		}
	}
	inline(s.Then, out.Then)
	inline(s.Else, out.Else)
}

// convHidden reports whether the direction hides property p: readOnly ones
// are not sent, writeOnly ones are not returned.
func (c *Converter) hidden(p *openapi3.SchemaRef) bool {
	return p != nil && p.Value != nil && (c.dir == Request && p.Value.ReadOnly || c.dir == Response && p.Value.WriteOnly)
}

// convChildren calls fn for every subschema of s that convBody converts, so
// that the pre-pass counts exactly the uses conv will meet.
func (c *Converter) children(s *openapi3.Schema, fn func(*openapi3.SchemaRef)) {
	if s.Always != nil {
		return
	}
	for _, p := range s.Properties { // counting needs no order
		if !c.hidden(p) {
			fn(p)
		}
	}
	for _, m := range []openapi3.Schemas{s.PatternProperties, s.DependentSchemas} {
		for _, r := range m {
			fn(r)
		}
	}
	for _, list := range []openapi3.SchemaRefs{s.PrefixItems, s.AllOf, s.AnyOf, s.OneOf} {
		for _, r := range list {
			fn(r)
		}
	}
	for _, r := range []*openapi3.SchemaRef{
		s.Items, s.Contains, s.UnevaluatedItems.Schema,
		s.AdditionalProperties.Schema, s.UnevaluatedProperties.Schema, s.PropertyNames,
		s.Not, s.If, s.Then, s.Else, s.ContentSchema,
	} {
		if r != nil {
			fn(r)
		}
	}
}

// convBool maps a kin boolean-or-schema keyword; nil when absent.
func (c *Converter) boolean(b openapi3.BoolSchema, hint string) *jsonschema.Schema {
	switch {
	case b.Schema != nil:
		return c.conv(b.Schema, hint)
	case b.Has == nil:
		return nil
	case *b.Has:
		return c.node()
	default:
		return c.never()
	}
}

// convOpt converts an optional subschema keyword: nil stays absent.
func (c *Converter) optional(r *openapi3.SchemaRef, hint string) *jsonschema.Schema {
	if r == nil {
		return nil
	}
	return c.conv(r, hint)
}

func (c *Converter) list(refs openapi3.SchemaRefs, hint string) []*jsonschema.Schema {
	if len(refs) == 0 {
		return nil
	}
	out := make([]*jsonschema.Schema, len(refs))
	for i, r := range refs {
		out[i] = c.conv(r, hint)
	}
	return out
}

// convNullable makes a composite schema accept null, as a 3.0 `nullable:
// true` next to allOf/oneOf/anyOf/not means in practice (GitHub has ~90 of
// them, mostly without a type): a lone anyOf gains a null branch, anything
// else is wrapped in anyOf [schema, null] with the annotations lifted to the
// wrapper.
func nullable(s *jsonschema.Schema) *jsonschema.Schema {
	null := &jsonschema.Schema{Type: "null"}
	if s.AllOf == nil && s.OneOf == nil && s.Not == nil {
		s.AnyOf = append(s.AnyOf, null)
		return s
	}
	w := &jsonschema.Schema{
		Title: s.Title, Description: s.Description, Deprecated: s.Deprecated,
		Default: s.Default, Examples: s.Examples,
		AnyOf: []*jsonschema.Schema{s, null},
	}
	s.Title, s.Description, s.Deprecated, s.Default, s.Examples = "", "", false, nil, nil
	return w
}

// schemaDiscriminatorNote describes a discriminator for the model, since
// JSON Schema has no such keyword: the property and which value selects
// which variant (component names, which may or may not be in $defs).
func discriminatorNote(s *openapi3.Schema) string {
	d := s.Discriminator
	var variants []string
	if len(d.Mapping) > 0 {
		for _, k := range sortedKeys(d.Mapping) {
			variants = append(variants, k+" → "+cmp.Or(refName(d.Mapping[k].Ref), d.Mapping[k].Ref))
		}
	} else {
		for _, r := range slices.Concat(s.OneOf, s.AnyOf) {
			if r == nil {
				continue
			}
			if n := refName(r.Ref); n != "" {
				variants = append(variants, n)
			}
		}
	}
	note := fmt.Sprintf("Discriminator: property `%s` selects the variant", d.PropertyName)
	if len(variants) > 0 {
		note += " (" + strings.Join(variants, ", ") + ")"
	}
	return note + "."
}

// convKnownType reports whether t is a JSON Schema type name; any other
// name would make a schema that rejects every instance.
func knownType(t string) bool {
	switch t {
	case "array", "boolean", "integer", "null", "number", "object", "string":
		return true
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func floatPtr(f *float64) *float64 {
	if f == nil {
		return nil
	}
	v := *f
	return &v
}

// convIntPtr maps a kin count where 0 means absent.
func intPtr(n uint64) *int {
	if n == 0 {
		return nil
	}
	return uintPtr(&n)
}

func uintPtr(n *uint64) *int {
	if n == nil {
		return nil
	}
	v := int(min(*n, math.MaxInt))
	return &v
}
