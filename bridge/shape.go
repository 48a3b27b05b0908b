package bridge

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/mcpbridge/mcpbridge/bridge/schema"
)

// shapePlan is a whitelist entry's response shaping: the parts of a JSON
// answer to keep (a tree of member names, "[]" stepping into arrays) and a
// cap on every array. The zero plan keeps everything.
type shapePlan struct {
	Keep     *fieldTree
	MaxItems int
}

// fieldTree is the set of kept paths: a node with no children keeps the
// whole value under it.
type fieldTree struct {
	Children map[string]*fieldTree
}

func newShapePlan(fields []string, maxItems int) *shapePlan {
	if len(fields) == 0 && maxItems == 0 {
		return nil
	}
	p := &shapePlan{MaxItems: maxItems}
	if len(fields) > 0 {
		p.Keep = &fieldTree{}
		for _, f := range fields {
			n := p.Keep
			for _, part := range splitPath(f) {
				if n.Children == nil {
					n.Children = map[string]*fieldTree{}
				}
				c, ok := n.Children[part]
				if !ok {
					c = &fieldTree{}
					n.Children[part] = c
				}
				n = c
			}
		}
	}
	return p
}

// splitPath turns "items[].owner.login" into items, [], owner, login.
func splitPath(p string) []string {
	var out []string
	for _, seg := range strings.Split(p, ".") {
		for strings.HasSuffix(seg, "[]") && seg != "[]" {
			out = append(out, strings.TrimSuffix(seg, "[]"))
			seg = "[]"
		}
		if seg != "" {
			out = append(out, seg)
		}
	}
	return out
}

// shaping records what apply left out, for the note the agent reads.
type shaping struct {
	dropped map[string]bool // paths of the members left out, each once
	cut     map[string]int  // array path → items left out
}

// apply shapes the decoded answer v.
func (p *shapePlan) apply(v any) (any, string) {
	s := &shaping{dropped: map[string]bool{}, cut: map[string]int{}}
	out := p.walk(v, p.Keep, "", s)
	return out, s.note()
}

func (p *shapePlan) walk(v any, keep *fieldTree, at string, s *shaping) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			var child *fieldTree
			if keep != nil && keep.Children != nil {
				c, ok := keep.Children[k]
				if !ok {
					s.dropped[join(at, k)] = true // once, not once per item of an array
					continue
				}
				child = c
			}
			out[k] = p.walk(e, child, join(at, k), s)
		}
		return out
	case []any:
		var item *fieldTree
		if keep != nil && keep.Children != nil {
			item = keep.Children["[]"] // a path that names the array keeps its items whole
			if item == nil {
				item = keep // "items.name" reads as "items[].name"
			}
		}
		n := len(x)
		if p.MaxItems > 0 && n > p.MaxItems {
			s.cut[at+"[]"] += n - p.MaxItems
			n = p.MaxItems
		}
		out := make([]any, n)
		for i := range n {
			out[i] = p.walk(x[i], item, at+"[]", s)
		}
		return out
	}
	return v
}

func join(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

// note says what the shaping left out ("" when nothing).
func (s *shaping) note() string {
	var parts []string
	if len(s.cut) > 0 {
		paths := make([]string, 0, len(s.cut))
		for p := range s.cut {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			name := strings.TrimSuffix(p, "[]")
			if name == "" {
				name = "the answer"
			}
			parts = append(parts, fmt.Sprintf("%d items of %s left out (maxItems)", s.cut[p], name))
		}
	}
	if len(s.dropped) > 0 {
		paths := make([]string, 0, len(s.dropped))
		for p := range s.dropped {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		more := ""
		if len(paths) > 10 {
			more = fmt.Sprintf(" and %d more", len(paths)-10)
			paths = paths[:10]
		}
		parts = append(parts, fmt.Sprintf("fields not kept by the whitelist's fields: %s%s", strings.Join(paths, ", "), more))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Shaped answer: " + strings.Join(parts, "; ") + "."
}

// reshape is the result.Tool hook: it shapes redacted JSON.
func (p *shapePlan) reshape(red []byte) ([]byte, string, bool) {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(red)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, "", false
	}
	out, note := p.apply(v)
	data, err := json.Marshal(out)
	if err != nil {
		return nil, "", false
	}
	return data, note, true
}

// keeps reports whether the plan changes the output schema: fields prune
// it, and maxItems lowers the minItems above it.
func (p *shapePlan) keeps() bool { return p != nil && (p.Keep != nil || p.MaxItems > 0) }

// shapeSchema prunes an output schema's properties to the kept fields and
// lowers every minItems above maxItems, so that the schema follows the
// shaping (a strict schema's minItems: 3 would otherwise refuse an answer
// capped at 2 items).
func (p *shapePlan) shapeSchema(raw json.RawMessage) json.RawMessage {
	if !p.keeps() || raw == nil {
		return raw
	}
	var root map[string]any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return raw
	}
	pruneSchema(root, root, p.Keep)
	if p.MaxItems > 0 {
		capMinItems(root, p.MaxItems)
	}
	out, err := json.Marshal(root)
	if err != nil {
		return raw
	}
	return out
}

// pruneSchema prunes the schema s, part of root, to keep. A $ref is
// followed where something below it is pruned: the shared definition stays
// whole (other references keep all of it) and a pruned copy takes the
// reference's place, so that a strict schema does not require what the
// shaping left out.
func pruneSchema(root, s map[string]any, keep *fieldTree) {
	(&pruner{root: root, open: map[inlined]bool{}}).prune(s, keep)
}

type pruner struct {
	root map[string]any
	open map[inlined]bool // definitions being copied: a cycle stops there
}

type inlined struct {
	keep *fieldTree
	ref  string
}

func (p *pruner) prune(s map[string]any, keep *fieldTree) {
	if keep == nil || keep.Children == nil {
		return
	}
	props, _ := s["properties"].(map[string]any)
	for name, ps := range props {
		c, ok := keep.Children[name]
		if !ok {
			delete(props, name)
			continue
		}
		if m, ok := ps.(map[string]any); ok {
			p.prune(m, c)
		}
	}
	if req, ok := s["required"].([]any); ok {
		kept := req[:0]
		for _, r := range req {
			if n, ok := r.(string); ok {
				if _, ok := keep.Children[n]; ok {
					kept = append(kept, r)
				}
			}
		}
		s["required"] = kept
	}
	if items, ok := s["items"].(map[string]any); ok {
		c := keep.Children["[]"]
		if c == nil {
			c = keep
		}
		p.prune(items, c)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[k].([]any); ok {
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok {
					p.prune(m, keep)
				}
			}
		}
	}
	ref, _ := s["$ref"].(string)
	def := p.definition(ref)
	if def == nil || p.open[inlined{keep, ref}] {
		return
	}
	c := schema.CopyJSON(def).(map[string]any)
	delete(c, "$defs")
	p.open[inlined{keep, ref}] = true
	p.prune(c, keep)
	delete(p.open, inlined{keep, ref})
	delete(s, "$ref")
	alts, _ := s["allOf"].([]any)
	s["allOf"] = append(alts, c)
}

// definition is the schema a local $ref names ("#" or "#/$defs/name"),
// nil for any other.
func (p *pruner) definition(ref string) map[string]any {
	if ref == "#" {
		return p.root
	}
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok || strings.Contains(name, "/") {
		return nil
	}
	if n, err := url.PathUnescape(name); err == nil {
		name = n
	}
	name = strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~")
	defs, _ := p.root["$defs"].(map[string]any)
	def, _ := defs[name].(map[string]any)
	return def
}

// capMinItems lowers every minItems above max in the schema s, $defs
// included; values (enum, const, default, examples) are left alone.
func capMinItems(s any, max int) {
	switch x := s.(type) {
	case map[string]any:
		for k, v := range x {
			switch k {
			case "enum", "const", "default", "examples", "example":
				continue
			case "minItems":
				if n, ok := v.(json.Number); ok { // else a property named minItems
					if i, err := n.Int64(); err == nil && i > int64(max) {
						x[k] = max
					}
					continue
				}
			}
			capMinItems(v, max)
		}
	case []any:
		for _, v := range x {
			capMinItems(v, max)
		}
	}
}
