package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// Fast checks JSON bytes against a schema that uses only structural
// keywords (type, properties, required, additionalProperties, items,
// prefixItems, allOf, anyOf, oneOf, $ref to "#" or its $defs, boolean
// schemas, and annotations), in one pass over the bytes: no decoding into
// Go values, no allocation on the common path. Tolerant output schemas
// ([Tolerant]) are such schemas, so a drift-free answer is accepted at a
// fraction of the cost of decoding it and running the full validator.
//
// Fast is sound, not complete: when it accepts a document, the full
// validator accepts it too; when it rejects one, the caller runs the full
// validator (which also says why). It must only be given valid JSON (the
// sanitizer's output is).
type Fast struct {
	root *fnode
}

// type bits of fnode.types; 0 means any type.
const (
	tNull uint8 = 1 << iota
	tBool
	tObject
	tArray
	tNumber
	tInteger
	tString
)

type fnode struct {
	types    uint8
	never    bool // the false schema
	props    map[string]*fnode
	required []string
	addl     *fnode // members not in props; nil: anything
	addlNo   bool   // additionalProperties: false
	items    *fnode // items past prefix; nil: anything
	prefix   []*fnode
	allOf    []*fnode // $ref is one more allOf member
	anyOf    []*fnode
	oneOf    []*fnode

	// Value keywords (input schemas use them; tolerant output schemas
	// have none).
	enum                bool // enum or const: the value must be listed
	enumStr             map[string]bool
	enumTrue, enumFalse bool
	enumNull            bool
	min, max            *float64
	exclMin, exclMax    *float64
	minLen, maxLen      *int
	re                  *regexp.Regexp
	minItems, maxItems  *int
	minProps, maxProps  *int
	// intFormat is an int32 or int64 format whose range a number must
	// lie in (arguments: intFormatOK); "" for none.
	intFormat string
}

// CompileFast returns the fast checker for root, or nil when root uses a
// keyword Fast does not check (a validator is needed). With
// ignoreFormat, "format" is an annotation (what jsonschema-go makes of it,
// which is how arguments are validated); without, a schema with a format
// needs the validator and the format checker ([Check]).
func CompileFast(root *jsonschema.Schema, ignoreFormat bool) *Fast {
	c := fastCompiler{root: root, memo: map[*jsonschema.Schema]*fnode{}, ignoreFormat: ignoreFormat}
	n := c.node(root)
	if c.bad {
		return nil
	}
	return &Fast{root: n}
}

// Valid reports whether data (one valid JSON value) satisfies the schema.
// false may also mean the document needs the full validator.
func (f *Fast) Valid(data []byte) bool {
	if f == nil {
		return false
	}
	end, ok := f.root.check(data, 0)
	return ok && ws(data, end) == len(data)
}

type fastCompiler struct {
	root         *jsonschema.Schema
	memo         map[*jsonschema.Schema]*fnode
	bad          bool
	ignoreFormat bool
}

func (c *fastCompiler) node(s *jsonschema.Schema) *fnode {
	if s == nil {
		return nil
	}
	if n, ok := c.memo[s]; ok {
		return n
	}
	n := &fnode{}
	c.memo[s] = n
	if s.Not != nil {
		if !unconstrained(s.Not) {
			c.bad = true
			return n
		}
		n.never = true // jsonschema-go's encoding of the schema false
	}
	if unsupported(s, c.ignoreFormat) || !c.values(n, s) {
		c.bad = true
		return n
	}
	for _, t := range append([]string{s.Type}, s.Types...) {
		switch t {
		case "":
		case "null":
			n.types |= tNull
		case "boolean":
			n.types |= tBool
		case "object":
			n.types |= tObject
		case "array":
			n.types |= tArray
		case "number":
			n.types |= tNumber | tInteger
		case "integer":
			n.types |= tInteger
		case "string":
			n.types |= tString
		default:
			c.bad = true
		}
	}
	if len(s.Properties) > 0 {
		n.props = make(map[string]*fnode, len(s.Properties))
		for k, p := range s.Properties {
			n.props[k] = c.anything(p)
		}
	}
	n.required = s.Required
	if a := s.AdditionalProperties; a != nil {
		if isFalseSchema(a) {
			n.addlNo = true
		} else {
			n.addl = c.anything(a)
		}
	}
	n.items = c.anything(s.Items)
	for _, p := range s.PrefixItems {
		n.prefix = append(n.prefix, c.node(p))
	}
	for _, b := range s.AllOf {
		n.allOf = append(n.allOf, c.node(b))
	}
	for _, b := range s.AnyOf {
		n.anyOf = append(n.anyOf, c.node(b))
	}
	for _, b := range s.OneOf {
		n.oneOf = append(n.oneOf, c.node(b))
	}
	if s.Ref != "" {
		target := c.ref(s.Ref)
		if target == nil {
			c.bad = true
			return n
		}
		n.allOf = append(n.allOf, c.node(target))
	}
	return n
}

// anything is node(s), except that a schema accepting every value is nil
// (the checker then only skips the value).
func (c *fastCompiler) anything(s *jsonschema.Schema) *fnode {
	if s == nil || unconstrained(s) {
		return nil
	}
	return c.node(s)
}

// ref resolves the local references the converter writes.
func (c *fastCompiler) ref(ref string) *jsonschema.Schema {
	if ref == "#" {
		return c.root
	}
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		name, ok := strings.CutPrefix(ref, prefix)
		if !ok || strings.ContainsAny(name, "/~%") {
			continue
		}
		defs := c.root.Defs
		if prefix == "#/definitions/" {
			defs = c.root.Definitions
		}
		return defs[name]
	}
	return nil
}

// unsupported reports whether s uses a keyword that Fast does not check
// (the value keywords [fastCompiler.values] takes are checked there).
// Annotations (title, description, examples, default, deprecated,
// readOnly, writeOnly, content*) and unknown keywords do not count.
func unsupported(s *jsonschema.Schema, ignoreFormat bool) bool {
	return s.ID != "" || s.Anchor != "" || s.DynamicAnchor != "" || s.DynamicRef != "" ||
		len(s.DependencySchemas) > 0 || len(s.DependencyStrings) > 0 ||
		s.MultipleOf != nil ||
		len(s.ItemsArray) > 0 ||
		s.AdditionalItems != nil || s.UniqueItems || s.Contains != nil ||
		s.MinContains != nil || s.MaxContains != nil ||
		(s.UnevaluatedItems != nil && !unconstrained(s.UnevaluatedItems)) ||
		len(s.DependentRequired) > 0 ||
		len(s.PatternProperties) > 0 || s.PropertyNames != nil ||
		(s.UnevaluatedProperties != nil && !unconstrained(s.UnevaluatedProperties)) ||
		s.If != nil || s.Then != nil || s.Else != nil || len(s.DependentSchemas) > 0 ||
		(s.Format != "" && !ignoreFormat)
}

// values takes the value keywords of s into n; false when one cannot be
// checked here (a numeric or structured enum value, a pattern Go's regexp
// does not compile).
func (c *fastCompiler) values(n *fnode, s *jsonschema.Schema) bool {
	enum := s.Enum
	if s.Const != nil {
		enum = append(slices.Clone(enum), *s.Const)
		if s.Enum != nil {
			return false // both: the intersection; leave it to the validator
		}
	}
	if enum != nil {
		n.enum = true
		for _, v := range enum {
			switch x := v.(type) {
			case string:
				if n.enumStr == nil {
					n.enumStr = map[string]bool{}
				}
				n.enumStr[x] = true
			case bool:
				if x {
					n.enumTrue = true
				} else {
					n.enumFalse = true
				}
			case nil:
				n.enumNull = true
			default:
				return false
			}
		}
	}
	n.min, n.max, n.exclMin, n.exclMax = s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum
	n.minLen, n.maxLen = s.MinLength, s.MaxLength
	n.minItems, n.maxItems = s.MinItems, s.MaxItems
	n.minProps, n.maxProps = s.MinProperties, s.MaxProperties
	if _, _, ok := intRange(s.Format); ok && c.ignoreFormat {
		n.intFormat = s.Format
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return false
		}
		n.re = re
	}
	return true
}

// unconstrained reports whether s constrains nothing (the schema true, or
// one with annotations only).
func unconstrained(s *jsonschema.Schema) bool {
	return s.Type == "" && len(s.Types) == 0 && s.Not == nil && s.Ref == "" &&
		len(s.Properties) == 0 && s.Required == nil && s.AdditionalProperties == nil &&
		s.Items == nil && len(s.PrefixItems) == 0 &&
		len(s.AllOf) == 0 && len(s.AnyOf) == 0 && len(s.OneOf) == 0 &&
		s.Enum == nil && s.Const == nil && s.Minimum == nil && s.Maximum == nil &&
		s.ExclusiveMinimum == nil && s.ExclusiveMaximum == nil &&
		s.MinLength == nil && s.MaxLength == nil && s.Pattern == "" &&
		s.MinItems == nil && s.MaxItems == nil && s.MinProperties == nil && s.MaxProperties == nil &&
		s.Format == "" && !unsupported(s, false)
}

// check validates the value starting at data[i] (after white space) and
// returns the index just past it.
func (n *fnode) check(data []byte, i int) (int, bool) {
	i = ws(data, i)
	if i >= len(data) {
		return i, false
	}
	if n == nil {
		return skip(data, i)
	}
	if n.never {
		return i, false
	}
	start := i
	end, ok := n.own(data, i)
	if !ok {
		return end, false
	}
	if len(n.allOf)+len(n.anyOf)+len(n.oneOf) == 0 {
		return end, true
	}
	span := data[start:end]
	for _, b := range n.allOf {
		if e, ok := b.check(span, 0); !ok || e != len(span) {
			return end, false
		}
	}
	if len(n.anyOf) > 0 {
		matched := false
		for _, b := range n.anyOf {
			if e, ok := b.check(span, 0); ok && e == len(span) {
				matched = true
				break
			}
		}
		if !matched {
			return end, false
		}
	}
	if len(n.oneOf) > 0 {
		matched := 0
		for _, b := range n.oneOf {
			if e, ok := b.check(span, 0); ok && e == len(span) {
				matched++
			}
		}
		if matched != 1 {
			return end, false
		}
	}
	return end, true
}

// own checks the type, the value keywords and the object and array
// keywords of n.
func (n *fnode) own(data []byte, i int) (int, bool) {
	switch c := data[i]; {
	case c == '{':
		if !n.allows(tObject) || n.enum {
			return i, false
		}
		return n.object(data, i)
	case c == '[':
		if !n.allows(tArray) || n.enum {
			return i, false
		}
		return n.array(data, i)
	case c == '"':
		if !n.allows(tString) {
			return i, false
		}
		end, raw, ok := str(data, i)
		if !ok {
			return end, false
		}
		if n.enum || n.minLen != nil || n.maxLen != nil || n.re != nil {
			v, ok := stringValue(raw)
			return end, ok && n.stringOK(v)
		}
		return end, true
	case c == 't':
		return i + 4, n.allows(tBool) && i+4 <= len(data) && (!n.enum || n.enumTrue)
	case c == 'f':
		return i + 5, n.allows(tBool) && i+5 <= len(data) && (!n.enum || n.enumFalse)
	case c == 'n':
		return i + 4, n.allows(tNull) && i+4 <= len(data) && (!n.enum || n.enumNull)
	default:
		end, integer, ok := scanNumber(data, i)
		if !ok || n.enum {
			return end, false
		}
		if integer && !n.allows(tInteger) || !integer && !n.allows(tNumber) {
			return end, false
		}
		if n.min != nil || n.max != nil || n.exclMin != nil || n.exclMax != nil {
			f, err := strconv.ParseFloat(string(data[i:end]), 64)
			if err != nil || math.IsInf(f, 0) {
				return end, false
			}
			if n.min != nil && f < *n.min || n.max != nil && f > *n.max ||
				n.exclMin != nil && f <= *n.exclMin || n.exclMax != nil && f >= *n.exclMax {
				return end, false
			}
		}
		if n.intFormat != "" && !intLiteralOK(n.intFormat, data[i:end]) {
			return end, false
		}
		return end, true
	}
}

// intLiteralOK is intFormatOK for the number literal lit, without
// allocating for a plain integer of up to 18 digits.
func intLiteralOK(format string, lit []byte) bool {
	digits := lit
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return intFormatOK(format, json.Number(lit))
	}
	var n int64
	for _, d := range digits {
		if d < '0' || d > '9' {
			return intFormatOK(format, json.Number(lit))
		}
		n = n*10 + int64(d-'0')
	}
	if len(digits) < len(lit) {
		n = -n
	}
	lo, hi, _ := intRange(format)
	return n >= lo && n <= hi
}

// stringOK checks the string keywords on the value v.
func (n *fnode) stringOK(v string) bool {
	if n.enum && !n.enumStr[v] {
		return false
	}
	if n.minLen != nil || n.maxLen != nil {
		runes := utf8.RuneCountInString(v)
		if n.minLen != nil && runes < *n.minLen || n.maxLen != nil && runes > *n.maxLen {
			return false
		}
	}
	return n.re == nil || n.re.MatchString(v)
}

// stringValue is the value of a JSON string's content.
func stringValue(raw []byte) (string, bool) {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	return keyString(raw)
}

func (n *fnode) allows(t uint8) bool { return n.types == 0 || n.types&t != 0 }

func (n *fnode) object(data []byte, i int) (int, bool) {
	var seen uint64 // bit k: required[k] was present (the first 64)
	i = ws(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, n.requiredMet(seen) && n.countOK(0, n.minProps, n.maxProps)
	}
	for members := 1; i < len(data); members++ {
		end, raw, ok := str(data, i)
		if !ok {
			return end, false
		}
		i = ws(data, end)
		if i >= len(data) || data[i] != ':' {
			return i, false
		}
		var child *fnode
		var known bool
		if bytes.IndexByte(raw, '\\') < 0 {
			// string(raw) in these expressions does not allocate.
			child, known = n.props[string(raw)]
			for k, r := range n.required {
				if k < 64 && r == string(raw) {
					seen |= 1 << k
				}
			}
		} else {
			key, ok := keyString(raw)
			if !ok {
				return end, false
			}
			child, known = n.props[key]
			for k, r := range n.required {
				if k < 64 && r == key {
					seen |= 1 << k
				}
			}
		}
		if !known {
			if n.addlNo {
				return i, false
			}
			child = n.addl
		}
		if i, ok = child.check(data, i+1); !ok {
			return i, false
		}
		i = ws(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = ws(data, i+1)
		case '}':
			return i + 1, n.requiredMet(seen) && n.countOK(members, n.minProps, n.maxProps)
		default:
			return i, false
		}
	}
	return i, false
}

// countOK checks a member or item count against its bounds.
func (n *fnode) countOK(count int, lo, hi *int) bool {
	return (lo == nil || count >= *lo) && (hi == nil || count <= *hi)
}

func (n *fnode) requiredMet(seen uint64) bool {
	if len(n.required) > 64 {
		return false // not tracked: let the validator decide
	}
	return seen == (uint64(1)<<len(n.required))-1
}

func (n *fnode) array(data []byte, i int) (int, bool) {
	i = ws(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, n.countOK(0, n.minItems, n.maxItems)
	}
	for idx := 0; i < len(data); idx++ {
		child := n.items
		if idx < len(n.prefix) {
			child = n.prefix[idx]
		}
		var ok bool
		if i, ok = child.check(data, i); !ok {
			return i, false
		}
		i = ws(data, i)
		if i >= len(data) {
			return i, false
		}
		switch data[i] {
		case ',':
			i = ws(data, i+1)
		case ']':
			return i + 1, n.countOK(idx+1, n.minItems, n.maxItems)
		default:
			return i, false
		}
	}
	return i, false
}

// ws skips JSON white space.
func ws(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// str scans the string starting at data[i] ('"'); raw is its content
// between the quotes, still escaped.
func str(data []byte, i int) (end int, raw []byte, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return i, nil, false
	}
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1, data[i+1 : j], true
		}
	}
	return len(data), nil, false
}

// keyString is the value of an escaped object key.
func keyString(raw []byte) (string, bool) {
	var s string
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

// scanNumber scans the number at data[i]; integer reports whether JSON Schema
// counts it as one (no fraction, as 1.0 and 1e3 are).
func scanNumber(data []byte, i int) (end int, integer, ok bool) {
	j, plain := i, true
	for j < len(data) {
		c := data[j]
		if c >= '0' && c <= '9' || c == '-' || c == '+' {
			j++
			continue
		}
		if c == '.' || c == 'e' || c == 'E' {
			plain = false
			j++
			continue
		}
		break
	}
	if j == i {
		return i, false, false
	}
	if plain {
		return j, true, true
	}
	f, err := strconv.ParseFloat(string(data[i:j]), 64)
	if err != nil || math.IsInf(f, 0) {
		return j, false, false // the validator decides
	}
	_, frac := math.Modf(f)
	return j, frac == 0, true
}

// skip returns the index just past the value at data[i].
func skip(data []byte, i int) (int, bool) {
	switch data[i] {
	case '"':
		end, _, ok := str(data, i)
		return end, ok
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end, _, ok := str(data, j)
				if !ok {
					return end, false
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return len(data), false
	case 't', 'n':
		return i + 4, i+4 <= len(data)
	case 'f':
		return i + 5, i+5 <= len(data)
	default:
		end, _, ok := scanNumber(data, i)
		return end, ok
	}
}
