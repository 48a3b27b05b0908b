package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// marshalSchema encodes a converted schema as compact JSON in one pass.
//
// jsonschema.Schema's own MarshalJSON re-encodes every subschema at each
// level of nesting (encoding/json compacts the bytes a Marshaler returns),
// which made it the largest cost of building GitHub's 1,223 tools. This
// writer keeps its key order (type, properties, items, then the struct's
// field order, then Extra) and differs in three ways: an empty schema is
// written {} rather than true (some model providers reject boolean
// subschemas), the false schema is written {"not":{}} where it is a
// member of properties or $defs (the TypeScript SDK's client rejects a
// boolean there), and strings are not HTML-escaped (<, > and & cost six bytes
// each otherwise). TestMarshalSchemaMatchesLibrary holds it to the
// library's output, value for value, over the whole corpus.
func Marshal(s *jsonschema.Schema) ([]byte, error) {
	w := writer{buf: make([]byte, 0, 1024)}
	w.schema(s)
	if w.err != nil {
		return nil, w.err
	}
	return w.buf, nil
}

type writer struct {
	buf []byte
	err error
}

func (w *writer) schema(s *jsonschema.Schema) {
	if s == nil {
		w.buf = append(w.buf, "null"...)
		return
	}
	if isFalseSchema(s) {
		w.buf = append(w.buf, "false"...)
		return
	}
	if s.Type != "" && s.Types != nil {
		w.fail("both Type and Types are set")
		return
	}
	w.buf = append(w.buf, '{')
	first := true
	key := func(k string) {
		if !first {
			w.buf = append(w.buf, ',')
		}
		first = false
		w.str(k)
		w.buf = append(w.buf, ':')
	}
	str := func(k, v string) {
		if v != "" {
			key(k)
			w.str(v)
		}
	}
	flag := func(k string, v bool) {
		if v {
			key(k)
			w.buf = append(w.buf, "true"...)
		}
	}
	sub := func(k string, v *jsonschema.Schema) {
		if v != nil {
			key(k)
			w.schema(v)
		}
	}
	list := func(k string, v []*jsonschema.Schema) {
		if len(v) > 0 {
			key(k)
			w.buf = append(w.buf, '[')
			for i, e := range v {
				if i > 0 {
					w.buf = append(w.buf, ',')
				}
				w.schema(e)
			}
			w.buf = append(w.buf, ']')
		}
	}
	smap := func(k string, m map[string]*jsonschema.Schema, order []string) {
		if m == nil || (len(m) == 0 && k != "properties") {
			return
		}
		key(k)
		w.buf = append(w.buf, '{')
		n := 0
		done := map[string]bool{}
		for _, name := range order {
			if v, ok := m[name]; ok && !done[name] {
				done[name] = true
				if n > 0 {
					w.buf = append(w.buf, ',')
				}
				n++
				w.str(name)
				w.buf = append(w.buf, ':')
				w.member(v)
			}
		}
		for _, name := range sortedKeys(m) {
			if done[name] {
				continue
			}
			if n > 0 {
				w.buf = append(w.buf, ',')
			}
			n++
			w.str(name)
			w.buf = append(w.buf, ':')
			w.member(m[name])
		}
		w.buf = append(w.buf, '}')
	}
	num := func(k string, v *float64) {
		if v != nil {
			key(k)
			w.float(*v)
		}
	}
	integer := func(k string, v *int) {
		if v != nil {
			key(k)
			w.buf = strconv.AppendInt(w.buf, int64(*v), 10)
		}
	}
	value := func(k string, v any) {
		key(k)
		w.value(v)
	}

	switch {
	case s.Type != "":
		key("type")
		w.str(s.Type)
	case s.Types != nil:
		key("type")
		w.strings(s.Types)
	}
	smap("properties", s.Properties, s.PropertyOrder)
	if len(s.DependencySchemas)+len(s.DependencyStrings) > 0 {
		dep := map[string]any{}
		for k, v := range s.DependencySchemas {
			dep[k] = v
		}
		for k, v := range s.DependencyStrings {
			dep[k] = v
		}
		value("dependencies", dep)
	}
	switch {
	case s.Items != nil:
		sub("items", s.Items)
	case s.ItemsArray != nil:
		list("items", s.ItemsArray)
	}
	str("$id", s.ID)
	str("$schema", s.Schema)
	str("$ref", s.Ref)
	str("$comment", s.Comment)
	smap("$defs", s.Defs, nil)
	smap("definitions", s.Definitions, nil)
	str("$anchor", s.Anchor)
	str("$dynamicAnchor", s.DynamicAnchor)
	str("$dynamicRef", s.DynamicRef)
	if len(s.Vocabulary) > 0 {
		value("$vocabulary", s.Vocabulary)
	}
	str("title", s.Title)
	str("description", s.Description)
	if len(s.Default) > 0 {
		key("default")
		w.raw(s.Default)
	}
	flag("deprecated", s.Deprecated)
	flag("readOnly", s.ReadOnly)
	flag("writeOnly", s.WriteOnly)
	if len(s.Examples) > 0 {
		value("examples", s.Examples)
	}
	if len(s.Enum) > 0 {
		value("enum", s.Enum)
	}
	if s.Const != nil {
		value("const", *s.Const)
	}
	num("multipleOf", s.MultipleOf)
	num("minimum", s.Minimum)
	num("maximum", s.Maximum)
	num("exclusiveMinimum", s.ExclusiveMinimum)
	num("exclusiveMaximum", s.ExclusiveMaximum)
	integer("minLength", s.MinLength)
	integer("maxLength", s.MaxLength)
	str("pattern", s.Pattern)
	list("prefixItems", s.PrefixItems)
	integer("minItems", s.MinItems)
	integer("maxItems", s.MaxItems)
	sub("additionalItems", s.AdditionalItems)
	flag("uniqueItems", s.UniqueItems)
	sub("contains", s.Contains)
	integer("minContains", s.MinContains)
	integer("maxContains", s.MaxContains)
	sub("unevaluatedItems", s.UnevaluatedItems)
	integer("minProperties", s.MinProperties)
	integer("maxProperties", s.MaxProperties)
	if len(s.Required) > 0 {
		key("required")
		w.strings(s.Required)
	}
	if len(s.DependentRequired) > 0 {
		value("dependentRequired", s.DependentRequired)
	}
	smap("patternProperties", s.PatternProperties, nil)
	sub("additionalProperties", s.AdditionalProperties)
	sub("propertyNames", s.PropertyNames)
	sub("unevaluatedProperties", s.UnevaluatedProperties)
	list("allOf", s.AllOf)
	list("anyOf", s.AnyOf)
	list("oneOf", s.OneOf)
	sub("not", s.Not)
	sub("if", s.If)
	sub("then", s.Then)
	sub("else", s.Else)
	smap("dependentSchemas", s.DependentSchemas, nil)
	str("contentEncoding", s.ContentEncoding)
	str("contentMediaType", s.ContentMediaType)
	sub("contentSchema", s.ContentSchema)
	str("format", s.Format)
	for _, k := range sortedKeys(s.Extra) {
		value(k, s.Extra[k])
	}
	w.buf = append(w.buf, '}')
}

// isFalseSchema reports the {"not": {}} form of the false schema.
func isFalseSchema(s *jsonschema.Schema) bool {
	if s.Not == nil || !isEmptySchema(s.Not) {
		return false
	}
	cp := *s
	cp.Not = nil
	return isEmptySchema(&cp)
}

func isEmptySchema(s *jsonschema.Schema) bool {
	raw, err := json.Marshal(s)
	return err == nil && string(raw) == "true"
}

// member writes a schema that is the value of a map of schemas
// (properties, $defs...): the false schema as {"not":{}}, not false. The
// TypeScript SDK's client refuses a tools/list whose tool has a boolean
// among its top-level properties, and other clients may be as strict.
func (w *writer) member(s *jsonschema.Schema) {
	if s != nil && isFalseSchema(s) {
		w.buf = append(w.buf, `{"not":{}}`...)
		return
	}
	w.schema(s)
}

func (w *writer) fail(msg string) {
	if w.err == nil {
		w.err = fmt.Errorf("marshaling schema: %s", msg)
	}
}

func (w *writer) strings(ss []string) {
	w.buf = append(w.buf, '[')
	for i, s := range ss {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.str(s)
	}
	w.buf = append(w.buf, ']')
}

// value writes a leaf value (enum, examples, const, extras) with
// encoding/json, HTML escaping off.
func (w *writer) value(v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		w.fail("encoding JSON: " + err.Error())
		return
	}
	w.buf = append(w.buf, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

func (w *writer) raw(r json.RawMessage) {
	if !json.Valid(r) {
		w.fail("invalid default value")
		return
	}
	var v any
	if err := json.Unmarshal(r, &v); err != nil {
		w.fail(err.Error())
		return
	}
	w.value(v)
}

func (w *writer) float(f float64) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.fail("unsupported number")
		return
	}
	// The same format as encoding/json.
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(w.buf)
	w.buf = strconv.AppendFloat(w.buf, f, format, -1, 64)
	if format == 'e' {
		n := len(w.buf) - start
		if n >= 4 && w.buf[len(w.buf)-4] == 'e' && w.buf[len(w.buf)-3] == '-' && w.buf[len(w.buf)-2] == '0' {
			w.buf[len(w.buf)-2] = w.buf[len(w.buf)-1]
			w.buf = w.buf[:len(w.buf)-1]
		}
	}
}

const hexDigits = "0123456789abcdef"

// str writes a JSON string as encoding/json does, without HTML escaping.
func (w *writer) str(s string) {
	b := append(w.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	w.buf = append(b, '"')
}
