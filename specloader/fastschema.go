package specloader

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// This file decodes the common shapes of a JSON schema object straight from
// the text into openapi3.SchemaRef, without the yaml.Node tree and
// kin-openapi's reflective decoder (its field checks, extension collection
// and number normalisation walk every schema several times over): on
// GitHub's spec that path was half of the load's CPU, most of it the
// component schemas.
//
// It builds exactly what kin-openapi's native decoder builds from the same
// text, or declines: any keyword it does not handle, any value of a type
// it does not expect, a duplicate key, a $ref with siblings, a boolean
// schema... makes that one schema object go through the node path instead
// (its children that it can handle still come here). TestFastSchemaMatchesKin
// holds the two to deep equality, unexported fields included, over the
// corpus and a table of edge cases.

// fastSchemas turns the fast path on; tests turn it off to compare.
var fastSchemas = true

// fastSchemaMaxDepth bounds the recursion; deeper schemas take the node
// path, which has its own limit.
const fastSchemaMaxDepth = 200

// schemaKnown is the set of keys kin-openapi's Schema declares (its yaml
// tags): a key outside it is an extension, a key inside it that
// fastSchema does not handle sends the schema to the node path.
var schemaKnown = func() map[string]bool {
	known := map[string]bool{}
	t := reflect.TypeFor[openapi3.Schema]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			known[name] = true
		}
	}
	return known
}()

// schemaDecoder decodes schema objects at a cursor, falling back to the
// node path (nodeSchema) for what it declines.
type schemaDecoder struct {
	c *cursor
}

// mark is a cursor position to come back to.
type mark struct{ pos, line, lineStart int }

func (d *schemaDecoder) mark() mark { return mark{d.c.pos, d.c.line, d.c.lineStart} }

func (d *schemaDecoder) reset(m mark) { d.c.pos, d.c.line, d.c.lineStart = m.pos, m.line, m.lineStart }

// schemaRef decodes the schema at the cursor into dst: fast when it can,
// through the node path when it declines. The error is the node path's.
func (d *schemaDecoder) schemaRef(dst *openapi3.SchemaRef, depth int) error {
	m := d.mark()
	if depth < fastSchemaMaxDepth {
		if ok := d.fast(dst, depth); ok {
			return nil
		}
	}
	*dst = openapi3.SchemaRef{}
	d.reset(m)
	n, err := d.c.node(depth)
	if err != nil {
		return err
	}
	return n.Decode(dst)
}

// fast decodes the schema object at the cursor into dst, or reports false
// (dst and the cursor are then garbage; the caller resets both).
func (d *schemaDecoder) fast(dst *openapi3.SchemaRef, depth int) bool {
	c := d.c
	if c.peek() != '{' {
		return false
	}
	c.pos++
	s := &openapi3.Schema{}
	seen := make(map[string]bool, 8)
	var ref string
	if c.peek() == '}' {
		c.pos++
		dst.Value = s
		return true
	}
	for {
		if c.peek() != '"' {
			return false
		}
		key, err := c.str()
		if err != nil || seen[key] || key == "<<" {
			return false
		}
		seen[key] = true
		if c.expect(':') != nil {
			return false
		}
		if !d.field(s, key, &ref, depth) {
			return false
		}
		switch c.peek() {
		case ',':
			c.pos++
		case '}':
			c.pos++
			if ref != "" {
				if len(seen) != 1 {
					return false // siblings of $ref: kin keeps them aside
				}
				dst.Ref = ref
				return true
			}
			dst.Value = s
			return true
		default:
			return false
		}
	}
}

// field decodes the value of one keyword into s.
func (d *schemaDecoder) field(s *openapi3.Schema, key string, ref *string, depth int) bool {
	c := d.c
	switch key {
	case "$ref":
		v, ok := d.str()
		if !ok || v == "" {
			return false
		}
		*ref = v
		return true
	case "type":
		switch c.peek() {
		case '"':
			v, ok := d.str()
			if !ok {
				return false
			}
			s.Type = &openapi3.Types{v}
			return true
		case '[':
			list, ok := d.strings()
			if !ok {
				return false
			}
			t := openapi3.Types(list)
			s.Type = &t
			return true
		}
		return false
	case "title":
		return d.strInto(&s.Title)
	case "format":
		return d.strInto(&s.Format)
	case "description":
		return d.strInto(&s.Description)
	case "pattern":
		return d.strInto(&s.Pattern)
	case "$comment":
		return d.strInto(&s.Comment)
	case "contentMediaType":
		return d.strInto(&s.ContentMediaType)
	case "contentEncoding":
		return d.strInto(&s.ContentEncoding)
	case "nullable":
		return d.boolInto(&s.Nullable)
	case "readOnly":
		return d.boolInto(&s.ReadOnly)
	case "writeOnly":
		return d.boolInto(&s.WriteOnly)
	case "deprecated":
		return d.boolInto(&s.Deprecated)
	case "uniqueItems":
		return d.boolInto(&s.UniqueItems)
	case "allowEmptyValue":
		return d.boolInto(&s.AllowEmptyValue)
	case "minimum":
		return d.floatPtr(&s.Min)
	case "maximum":
		return d.floatPtr(&s.Max)
	case "multipleOf":
		return d.floatPtr(&s.MultipleOf)
	case "minLength":
		return d.uintInto(&s.MinLength)
	case "minItems":
		return d.uintInto(&s.MinItems)
	case "minProperties":
		return d.uintInto(&s.MinProps)
	case "maxLength":
		return d.uintPtr(&s.MaxLength)
	case "maxItems":
		return d.uintPtr(&s.MaxItems)
	case "maxProperties":
		return d.uintPtr(&s.MaxProps)
	case "exclusiveMinimum":
		return d.bound(&s.ExclusiveMin)
	case "exclusiveMaximum":
		return d.bound(&s.ExclusiveMax)
	case "required":
		if c.peek() != '[' {
			return false
		}
		list, ok := d.strings()
		s.Required = list
		return ok
	case "enum":
		list, ok := d.anyList(depth)
		s.Enum = list
		return ok
	case "examples":
		list, ok := d.anyList(depth)
		s.Examples = list
		return ok
	case "default":
		v, ok := d.anyValue(depth)
		s.Default = v
		return ok
	case "example":
		v, ok := d.anyValue(depth)
		s.Example = v
		return ok
	case "const":
		v, ok := d.anyValue(depth)
		s.Const = v
		return ok
	case "items":
		return d.child(&s.Items, depth)
	case "not":
		return d.child(&s.Not, depth)
	case "allOf":
		return d.list(&s.AllOf, depth)
	case "oneOf":
		return d.list(&s.OneOf, depth)
	case "anyOf":
		return d.list(&s.AnyOf, depth)
	case "properties":
		return d.props(&s.Properties, depth)
	case "additionalProperties":
		switch c.peek() {
		case 't', 'f':
			var b bool
			if !d.boolInto(&b) {
				return false
			}
			s.AdditionalProperties.Has = &b
			return true
		case '{':
			return d.child(&s.AdditionalProperties.Schema, depth)
		}
		return false
	}
	if schemaKnown[key] {
		return false // declared, but not handled here: the node path's
	}
	v, ok := d.anyValue(depth)
	if !ok {
		return false
	}
	if s.Extensions == nil {
		s.Extensions = map[string]any{}
	}
	s.Extensions[key] = v
	return true
}

// child decodes a subschema (an object) into *dst.
func (d *schemaDecoder) child(dst **openapi3.SchemaRef, depth int) bool {
	if d.c.peek() != '{' {
		return false
	}
	sr := &openapi3.SchemaRef{}
	if d.schemaRef(sr, depth+1) != nil {
		return false
	}
	*dst = sr
	return true
}

// list decodes an array of subschemas.
func (d *schemaDecoder) list(dst *openapi3.SchemaRefs, depth int) bool {
	c := d.c
	if c.peek() != '[' {
		return false
	}
	c.pos++
	out := openapi3.SchemaRefs{}
	if c.peek() == ']' {
		c.pos++
		*dst = out
		return true
	}
	for {
		var sr *openapi3.SchemaRef
		if !d.child(&sr, depth) {
			return false
		}
		out = append(out, sr)
		switch c.peek() {
		case ',':
			c.pos++
		case ']':
			c.pos++
			*dst = out
			return true
		default:
			return false
		}
	}
}

// props decodes an object of named subschemas.
func (d *schemaDecoder) props(dst *openapi3.Schemas, depth int) bool {
	c := d.c
	if c.peek() != '{' {
		return false
	}
	c.pos++
	out := openapi3.Schemas{}
	if c.peek() == '}' {
		c.pos++
		*dst = out
		return true
	}
	for {
		if c.peek() != '"' {
			return false
		}
		name, err := c.str()
		if err != nil || name == "<<" {
			return false
		}
		if _, dup := out[name]; dup {
			return false
		}
		if c.expect(':') != nil {
			return false
		}
		var sr *openapi3.SchemaRef
		if !d.child(&sr, depth) {
			return false
		}
		out[name] = sr
		switch c.peek() {
		case ',':
			c.pos++
		case '}':
			c.pos++
			*dst = out
			return true
		default:
			return false
		}
	}
}

func (d *schemaDecoder) str() (string, bool) {
	if d.c.peek() != '"' {
		return "", false
	}
	s, err := d.c.str()
	return s, err == nil
}

func (d *schemaDecoder) strInto(dst *string) bool {
	s, ok := d.str()
	*dst = s
	return ok
}

// strings decodes an array of strings (anything else in it declines).
func (d *schemaDecoder) strings() ([]string, bool) {
	c := d.c
	if c.peek() != '[' {
		return nil, false
	}
	c.pos++
	out := []string{}
	if c.peek() == ']' {
		c.pos++
		return out, true
	}
	for {
		s, ok := d.str()
		if !ok {
			return nil, false
		}
		out = append(out, s)
		switch c.peek() {
		case ',':
			c.pos++
		case ']':
			c.pos++
			return out, true
		default:
			return nil, false
		}
	}
}

func (d *schemaDecoder) boolInto(dst *bool) bool {
	switch d.c.peek() {
	case 't', 'f':
	default:
		return false
	}
	text, err := d.c.scalarText()
	switch {
	case err != nil:
		return false
	case text == "true":
		*dst = true
	case text == "false":
		*dst = false
	default:
		return false
	}
	return true
}

// number reads a JSON number and the tag go-yaml resolves it to.
func (d *schemaDecoder) number() (text, tag string, ok bool) {
	b := d.c.peek()
	if b != '-' && (b < '0' || b > '9') {
		return "", "", false
	}
	text, err := d.c.scalarText()
	if err != nil {
		return "", "", false
	}
	tag = numberTag(text)
	return text, tag, tag == "!!int" || tag == "!!float"
}

// floatValue is the float64 go-yaml decodes a number into: an !!int
// through its integer, an !!float parsed.
func floatValue(text, tag string) (float64, bool) {
	if tag == "!!int" {
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return float64(i), true
		}
		if u, err := strconv.ParseUint(text, 10, 64); err == nil {
			return float64(u), true
		}
		return 0, false
	}
	f, err := strconv.ParseFloat(text, 64)
	return f, err == nil
}

func (d *schemaDecoder) floatPtr(dst **float64) bool {
	text, tag, ok := d.number()
	if !ok {
		return false
	}
	f, ok := floatValue(text, tag)
	if !ok {
		return false
	}
	*dst = &f
	return true
}

func (d *schemaDecoder) uintInto(dst *uint64) bool {
	text, tag, ok := d.number()
	if !ok || tag != "!!int" {
		return false
	}
	u, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return false
	}
	*dst = u
	return true
}

func (d *schemaDecoder) uintPtr(dst **uint64) bool {
	var u uint64
	if !d.uintInto(&u) {
		return false
	}
	*dst = &u
	return true
}

// bound decodes exclusiveMinimum/Maximum: a bool (3.0) or a number (3.1).
func (d *schemaDecoder) bound(dst *openapi3.ExclusiveBound) bool {
	switch d.c.peek() {
	case 't', 'f':
		var b bool
		if !d.boolInto(&b) {
			return false
		}
		dst.Bool = &b
		return true
	}
	return d.floatPtr(&dst.Value)
}

// anyValue decodes a JSON value as kin-openapi's normalised YAML decode
// into any does: objects map[string]any, arrays []any, numbers float64.
func (d *schemaDecoder) anyValue(depth int) (any, bool) {
	if depth > fastSchemaMaxDepth {
		return nil, false
	}
	c := d.c
	switch c.peek() {
	case '{':
		c.pos++
		m := map[string]any{}
		if c.peek() == '}' {
			c.pos++
			return m, true
		}
		for {
			if c.peek() != '"' {
				return nil, false
			}
			k, err := c.str()
			if err != nil || k == "<<" {
				return nil, false
			}
			if _, dup := m[k]; dup {
				return nil, false
			}
			if c.expect(':') != nil {
				return nil, false
			}
			v, ok := d.anyValue(depth + 1)
			if !ok {
				return nil, false
			}
			m[k] = v
			switch c.peek() {
			case ',':
				c.pos++
			case '}':
				c.pos++
				return m, true
			default:
				return nil, false
			}
		}
	case '[':
		return d.anyList(depth)
	case '"':
		return d.str()
	case 't', 'f':
		var b bool
		ok := d.boolInto(&b)
		return b, ok
	case 'n':
		text, err := c.scalarText()
		return nil, err == nil && text == "null"
	}
	text, tag, ok := d.number()
	if !ok {
		return nil, false
	}
	f, ok := floatValue(text, tag)
	return f, ok
}

// anyList decodes a JSON array of values.
func (d *schemaDecoder) anyList(depth int) ([]any, bool) {
	c := d.c
	if c.peek() != '[' {
		return nil, false
	}
	c.pos++
	out := []any{}
	if c.peek() == ']' {
		c.pos++
		return out, true
	}
	for {
		v, ok := d.anyValue(depth + 1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		switch c.peek() {
		case ',':
			c.pos++
		case ']':
			c.pos++
			return out, true
		default:
			return nil, false
		}
	}
}

// example decodes a component example object (no $ref) into dst, or
// reports false; like fast, it leaves the cursor and dst to reset.
func (d *schemaDecoder) example(dst *openapi3.ExampleRef) bool {
	c := d.c
	if c.peek() != '{' {
		return false
	}
	c.pos++
	e := &openapi3.Example{}
	dst.Value = e
	if c.peek() == '}' {
		c.pos++
		return true
	}
	seen := make(map[string]bool, 4)
	for {
		if c.peek() != '"' {
			return false
		}
		key, err := c.str()
		if err != nil || seen[key] || key == "<<" || key == "$ref" {
			return false
		}
		seen[key] = true
		if c.expect(':') != nil {
			return false
		}
		ok := false
		switch key {
		case "summary":
			ok = d.strInto(&e.Summary)
		case "description":
			ok = d.strInto(&e.Description)
		case "externalValue":
			ok = d.strInto(&e.ExternalValue)
		case "value":
			e.Value, ok = d.anyValue(0)
		default:
			var v any
			if v, ok = d.anyValue(0); ok {
				if e.Extensions == nil {
					e.Extensions = map[string]any{}
				}
				e.Extensions[key] = v
			}
		}
		if !ok {
			return false
		}
		switch c.peek() {
		case ',':
			c.pos++
		case '}':
			c.pos++
			return true
		default:
			return false
		}
	}
}
