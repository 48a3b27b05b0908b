package specloader

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
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
//   - a discriminator `mapping` entry that points to a file or URL that
//     cannot be read, or to a place missing from the document (DigitalOcean
//     ships mappings into files that are not published): the entry is
//     dropped; mappings are hints, and the oneOf/anyOf still lists the
//     schemas.
//
// It runs only in lenient mode and only after a failure, so a sound
// document never pays for the extra parse.
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

	r := repairer{s: s, root: root, loc: loc}
	r.walk(root, "")
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
	s     *session
	root  *yaml.Node
	loc   *url.URL
	notes []string
}

func (r *repairer) walk(n *yaml.Node, at string) {
	n.Style &^= yaml.FlowStyle // block style reads better in later errors
	switch n.Kind {
	case yaml.SequenceNode:
		for i, c := range n.Content {
			r.walk(c, fmt.Sprintf("%s/%d", at, i))
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			here := at + "/" + escapePointer(k.Value)
			switch {
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
			r.walk(v, here)
		}
	}
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
