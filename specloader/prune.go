package specloader

import (
	"net/url"
	"strings"
)

// This file decides, before any model is built, which parts of a JSON
// OpenAPI 3 document a load with Options.Keep needs: the path items and
// operations Keep accepts, and the components reachable from them and from
// the rest of the document, following $refs transitively. Everything is
// found by scanning the text: the operations' operationId and tags, and the
// $ref strings inside the parts kept. Decoding the 13 MB GitHub spec into
// map[string]any alone would cost as much as the whole pruned load.
//
// The plan is conservative: whatever it cannot prove unneeded is kept, and
// when it meets something it cannot follow (a $ref to another document, to
// the whole document or to an anchor; an escaped "$ref" key) it gives up and
// the document is decoded whole.

// prunePlan says which members of paths and of components' sections
// decodeJSON builds. The other members of the document are all decoded.
type prunePlan struct {
	// paths lists the members of the paths object to decode, in document
	// order: the kept path items and every x- extension.
	paths []member
	// drop gives, by path, the operations left out of a kept path item;
	// absent for items kept whole.
	drop map[string]map[string]bool
	// sections holds, for each section pruned, the entries kept, in
	// document order. A section not in the map is decoded whole.
	sections map[string][]member
}

// prunable reports whether a components section is pruned to the entries
// reached by $refs. securitySchemes are named by security requirements, not
// referred to, and stay whole, as do extensions and sections kin-openapi
// does not model (3.1's pathItems), whose non-extension ones are scanned
// for $refs.
func prunable(section string) bool {
	switch section {
	case "schemas", "parameters", "headers", "requestBodies", "responses", "examples", "links", "callbacks":
		return true
	}
	return false
}

// section is a pruned components section.
type section struct {
	entries []member
	byName  map[string]int
	kept    []bool
}

// pruner builds a prunePlan. It marks what is kept in slices of its own,
// parallel to the document's index, which stays as it is for a later load
// of the whole document.
type pruner struct {
	data     []byte
	paths    []pathEntry
	byPath   map[string]int
	keptItem []bool   // by path entry: kept, with at least its fields other than operations
	keptOp   [][]bool // by path entry, by field
	sections map[string]*section
	queue    []span // kept values not yet scanned for $refs
	giveUp   bool
}

// planPrune returns the plan for loading of jd only what keep accepts, or
// nil when the document must be decoded whole: it has no paths to prune,
// its structure is not what the plan expects (decoding reports that), or
// it holds a $ref the plan cannot follow.
func planPrune(jd *jsonDoc, keep func(method, path, operationID string, tags []string) bool) *prunePlan {
	if jd.paths == nil {
		return nil
	}
	p := &pruner{data: jd.data, paths: jd.paths.entries}
	hasComps := false
	for _, m := range jd.top {
		switch {
		case m.key == "paths":
		case m.key == "components":
			hasComps = true
		case !strings.HasPrefix(m.key, "x-"):
			// info, servers, security, tags, webhooks...: kept whole, and
			// their $refs followed. kin-openapi resolves no $ref inside an
			// extension, so extensions are kept but not scanned.
			p.queue = append(p.queue, m.val)
		}
	}
	if hasComps && jd.comps == nil {
		return nil // components is not an object
	}
	if jd.comps != nil {
		p.sections = make(map[string]*section)
		for _, m := range jd.comps.members {
			entries, isObject := jd.comps.sections[m.key]
			switch {
			case prunable(m.key) && isObject:
				sec := &section{entries: entries, byName: make(map[string]int, len(entries)), kept: make([]bool, len(entries))}
				for i, e := range entries {
					sec.byName[e.key] = i
				}
				p.sections[m.key] = sec
			case !strings.HasPrefix(m.key, "x-"):
				p.queue = append(p.queue, m.val)
			}
		}
	}

	p.byPath = make(map[string]int, len(p.paths))
	p.keptItem = make([]bool, len(p.paths))
	p.keptOp = make([][]bool, len(p.paths))
	for i := range p.paths {
		e := &p.paths[i]
		if e.ext {
			continue
		}
		p.byPath[e.key] = i
		p.keptOp[i] = make([]bool, len(e.fields))
		if e.whole {
			p.keepItem(i)
			continue
		}
		for j := range e.fields {
			f := &e.fields[j]
			if !f.op {
				continue
			}
			if keep(strings.ToUpper(f.key), e.key, f.id, f.tags) {
				p.keepOp(i, j)
			}
		}
	}
	for len(p.queue) > 0 && !p.giveUp {
		s := p.queue[len(p.queue)-1]
		p.queue = p.queue[:len(p.queue)-1]
		p.scan(s)
	}
	if p.giveUp {
		return nil
	}
	return p.plan()
}

// keepItem keeps path item i with its fields other than operations, and
// queues what it keeps for scanning.
func (p *pruner) keepItem(i int) {
	if p.keptItem[i] {
		return
	}
	p.keptItem[i] = true
	e := &p.paths[i]
	if e.whole {
		p.queue = append(p.queue, e.val)
		return
	}
	for _, f := range e.fields {
		if !f.op {
			p.queue = append(p.queue, f.val)
		}
	}
}

// keepOp keeps operation j of path item i.
func (p *pruner) keepOp(i, j int) {
	p.keepItem(i)
	if p.keptOp[i][j] {
		return
	}
	p.keptOp[i][j] = true
	p.queue = append(p.queue, p.paths[i].fields[j].val)
}

// keepEntry keeps entry i of a section.
func (p *pruner) keepEntry(sec *section, i int) {
	if sec.kept[i] {
		return
	}
	sec.kept[i] = true
	p.queue = append(p.queue, sec.entries[i].val)
}

// follow keeps what a $ref (or a discriminator mapping that is a
// reference) points to. A $ref is followed as kin-openapi resolves it: the
// fragment of the URI, percent-decoded, split at '/', each token then
// unescaped (~1 is '/', ~0 is '~').
func (p *pruner) follow(ref string) {
	if ref == "" {
		return // no reference: kin-openapi reads the sibling value
	}
	if ref[0] != '#' {
		p.giveUp = true // another document, which may refer back into this one
		return
	}
	u, err := url.Parse(ref)
	if err != nil {
		return // kin-openapi refuses it too, pruned or not
	}
	frag := u.Fragment
	if frag == "" || frag[0] != '/' {
		p.giveUp = true // the whole document, or an anchor
		return
	}
	toks := strings.Split(frag[1:], "/")
	switch unescapeToken(toks[0]) {
	case "components":
		if len(toks) < 2 {
			p.giveUp = true
			return
		}
		sec := p.sections[unescapeToken(toks[1])]
		switch {
		case sec == nil:
			// decoded whole
		case len(toks) < 3:
			for i := range sec.entries {
				p.keepEntry(sec, i)
			}
		default:
			if i, ok := sec.byName[unescapeToken(toks[2])]; ok {
				p.keepEntry(sec, i)
			}
		}
	case "paths":
		if len(toks) < 2 {
			p.giveUp = true
			return
		}
		i, ok := p.byPath[unescapeToken(toks[1])]
		if !ok {
			return
		}
		if len(toks) < 3 {
			p.keepItem(i)
			for j, f := range p.paths[i].fields {
				if f.op {
					p.keepOp(i, j)
				}
			}
			return
		}
		sub := unescapeToken(toks[2])
		for j, f := range p.paths[i].fields {
			if f.op && f.key == sub {
				p.keepOp(i, j)
				return
			}
		}
		p.keepItem(i)
	}
	// Anything else is outside paths and components, and kept whole.
}

// followMapping keeps the target of a discriminator mapping value: a
// schema name, or a reference when it holds a '/', as kin-openapi tells
// them apart.
func (p *pruner) followMapping(v string) {
	if strings.Contains(v, "/") {
		p.follow(v)
		return
	}
	if sec := p.sections["schemas"]; sec != nil {
		if i, ok := sec.byName[v]; ok {
			p.keepEntry(sec, i)
		}
	}
}

// unescapeToken decodes a JSON pointer token as kin-openapi does.
func unescapeToken(t string) string {
	if !strings.Contains(t, "~") {
		return t
	}
	return strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
}

// plan turns what was kept into a prunePlan.
func (p *pruner) plan() *prunePlan {
	pl := &prunePlan{drop: make(map[string]map[string]bool)}
	for i, e := range p.paths {
		if !e.ext && !p.keptItem[i] {
			continue
		}
		pl.paths = append(pl.paths, e.member)
		for j, f := range e.fields {
			if !f.op || p.keptOp[i][j] {
				continue
			}
			if pl.drop[e.key] == nil {
				pl.drop[e.key] = make(map[string]bool)
			}
			pl.drop[e.key][f.key] = true
		}
	}
	pl.sections = make(map[string][]member, len(p.sections))
	for name, sec := range p.sections {
		kept := make([]member, 0)
		for i, e := range sec.entries {
			if sec.kept[i] {
				kept = append(kept, e)
			}
		}
		pl.sections[name] = kept
	}
	return pl
}
