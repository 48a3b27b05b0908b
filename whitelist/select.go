package whitelist

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Select returns the operations of doc that p selects, with each entry's
// overrides, sorted by path and then by method in the order GET PUT POST
// DELETE OPTIONS HEAD PATCH TRACE. Only doc.Paths is considered: webhooks and
// callbacks never become tools.
//
// It fails, reporting every problem at once (an [errors.Join] in entry
// order), when an entry is invalid on its own, matches no operation (the
// message suggests up to three close candidates), matches an operation
// another entry already selected (except that an entry naming one operation
// by method+path or operationId refines a tag entry selecting it too: its
// overrides apply to that operation), repeats another entry's name override, or
// uses a name override while matching several operations. A policy that
// selects nothing, or a spec without operations, gives an empty result and
// no error: whether that is acceptable is the caller's decision.
func (p *Policy) Select(doc *openapi3.T) ([]Operation, error) {
	if p == nil {
		return nil, errors.New("selecting operations: nil policy")
	}
	if doc == nil {
		return nil, errors.New("selecting operations: nil document")
	}
	s := newSelection(doc)
	var probs []problem
	report := func(i int, err error) { probs = append(probs, problem{i, err}) }

	valid := make([]bool, len(p.Entries))
	for i := range p.Entries {
		probs := p.Entries[i].problems(i, checkOptions{})
		for _, pr := range probs {
			report(i, pr.err)
		}
		valid[i] = len(probs) == 0
	}
	duplicateNames(p.Entries, report)
	duplicateResources(p.Entries, report)

	owner := make([]int, len(s.cands)) // index of the entry selecting each candidate, or -1
	// tagOf is the tag entry that also selects a candidate a specific
	// entry owns (which refines it), or -1.
	tagOf := make([]int, len(s.cands))
	for i := range owner {
		owner[i], tagOf[i] = -1, -1
	}
	type pair struct{ first, later int }
	overlaps := make(map[pair][]string)
	for i := range p.Entries {
		if !valid[i] {
			continue
		}
		e := &p.Entries[i]
		hits, err := s.match(e, i)
		if err != nil {
			report(i, err)
			continue
		}
		if e.Name != "" && len(hits) > 1 {
			report(i, fmt.Errorf("%s: name %q would be given to %d operations (%s): a name override needs exactly one", location(e, i), e.Name, len(hits), s.labels(hits)))
		}
		for _, name := range e.AllowSlashes {
			if err := s.checkSlashParam(e, i, name, hits); err != nil {
				report(i, err)
			}
		}
		if err := s.checkResource(e, i, hits); err != nil {
			report(i, err)
		}
		for _, c := range hits {
			if j := owner[c]; j >= 0 {
				// An entry naming one operation (method+path or operationId)
				// refines a tag that also selects it: it wins, whatever the
				// order. Two tags, or two specific entries, are an overlap.
				switch specificI, specificJ := p.Entries[i].Tag == "", p.Entries[j].Tag == ""; {
				case specificI && !specificJ:
					owner[c], tagOf[c] = i, j
					continue
				case !specificI && specificJ:
					if tagOf[c] < 0 {
						tagOf[c] = i
						continue
					}
					// A second tag over a refined operation overlaps the
					// first whatever the order: keeping only the last
					// tag's settings dropped the first one's allow list.
					j = tagOf[c]
				}
				k := pair{j, i}
				overlaps[k] = append(overlaps[k], s.cands[c].label())
				continue
			}
			owner[c] = i
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(overlaps), func(a, b pair) int {
		return cmp.Or(cmp.Compare(a.later, b.later), cmp.Compare(a.first, b.first))
	}) {
		report(k.later, fmt.Errorf("%s: %s already selected by the entry at %s (each operation may be listed once)",
			location(&p.Entries[k.later], k.later), listLabels(overlaps[k]), location(&p.Entries[k.first], k.first)))
	}

	s.checkCompletions(p, owner, report)
	if len(probs) > 0 {
		slices.SortStableFunc(probs, func(a, b problem) int { return cmp.Compare(a.order, b.order) })
		errs := make([]error, len(probs))
		for i, pr := range probs {
			errs[i] = pr.err
		}
		return nil, errors.Join(errs...)
	}

	out := make([]Operation, 0, len(s.cands))
	for ci, c := range s.cands {
		if !p.All && owner[ci] < 0 {
			continue
		}
		op := Operation{Method: c.method, Path: c.path, PathItem: c.item, Op: c.op}
		if i := owner[ci]; i >= 0 {
			e := &p.Entries[i]
			if t := tagOf[ci]; t >= 0 {
				e = refined(e, &p.Entries[t])
			}
			op.Name, op.Description, op.Title = e.Name, e.Description, e.Title
			op.Annotations = e.Annotations.clone()
			op.Timeout = e.Timeout
			op.NestedStyle = e.NestedStyle
			op.Pinned = e.Pinned
			op.Fields, op.MaxItems = slices.Clone(e.Fields), e.MaxItems
			op.Resource = e.Resource.clone()
			if e.Redact != nil {
				op.RedactAllowKeys = slices.Clone(e.Redact.AllowKeys)
			}
			if e.Allow != nil {
				cp := *e.Allow
				op.Allow = &cp
			}
			for _, name := range e.AllowSlashes {
				if slashParam(pathParams(c.item, c.op)[name]) {
					op.AllowSlashes = append(op.AllowSlashes, name)
				}
			}
		}
		out = append(out, op)
	}
	return out, nil
}

// refined is e, an entry naming one operation, with what it leaves unset
// taken from tag, a tag entry that selects the operation too: its own
// overrides win, one by one. Above all, an operation under a tag's access
// list keeps it when an entry refines only its timeout or name; replacing
// the whole entry opened it to every caller.
func refined(e, tag *Entry) *Entry {
	out := *e
	if out.Allow == nil {
		out.Allow = tag.Allow
	}
	switch {
	case out.Annotations == nil:
		out.Annotations = tag.Annotations
	case tag.Annotations != nil:
		a, t := *out.Annotations, tag.Annotations
		a.ReadOnlyHint = cmp.Or(a.ReadOnlyHint, t.ReadOnlyHint)
		a.DestructiveHint = cmp.Or(a.DestructiveHint, t.DestructiveHint)
		a.IdempotentHint = cmp.Or(a.IdempotentHint, t.IdempotentHint)
		a.OpenWorldHint = cmp.Or(a.OpenWorldHint, t.OpenWorldHint)
		out.Annotations = &a
	}
	out.Timeout = cmp.Or(out.Timeout, tag.Timeout)
	out.NestedStyle = cmp.Or(out.NestedStyle, tag.NestedStyle)
	out.Pinned = out.Pinned || tag.Pinned
	if out.AllowSlashes == nil {
		out.AllowSlashes = tag.AllowSlashes
	}
	if out.Fields == nil {
		out.Fields = tag.Fields
	}
	out.MaxItems = cmp.Or(out.MaxItems, tag.MaxItems)
	if out.Redact == nil {
		out.Redact = tag.Redact
	}
	return &out
}

// candidate is one operation of the spec.
type candidate struct {
	method string // upper case
	path   string // the spec's template
	item   *openapi3.PathItem
	op     *openapi3.Operation
}

// label names the operation in messages: "GET /pets/{petId}".
func (c *candidate) label() string { return c.method + " " + c.path }

// selection indexes the operations of a spec by each kind of selector.
type selection struct {
	doc     *openapi3.T
	cands   []candidate      // sorted by path, then method order
	byRoute map[string][]int // "METHOD shape" → candidates
	byID    map[string][]int // operationId → candidates
	byTag   map[string][]int // tag → candidates
}

func newSelection(doc *openapi3.T) *selection {
	s := &selection{
		doc:     doc,
		byRoute: make(map[string][]int),
		byID:    make(map[string][]int),
		byTag:   make(map[string][]int),
	}
	if doc.Paths == nil {
		return s
	}
	items := doc.Paths.Map()
	for _, path := range slices.Sorted(maps.Keys(items)) {
		item := items[path]
		if item == nil {
			continue
		}
		for _, m := range methods() {
			op := item.GetOperation(m)
			if op == nil {
				continue
			}
			i := len(s.cands)
			s.cands = append(s.cands, candidate{method: m, path: path, item: item, op: op})
			s.byRoute[m+" "+shape(path)] = append(s.byRoute[m+" "+shape(path)], i)
			if op.OperationID != "" {
				s.byID[op.OperationID] = append(s.byID[op.OperationID], i)
			}
			for _, t := range op.Tags {
				// A tag listed twice on one operation selects it once.
				if l := s.byTag[t]; len(l) == 0 || l[len(l)-1] != i {
					s.byTag[t] = append(l, i)
				}
			}
		}
	}
	return s
}

// match returns the candidates entry e (the i-th, already valid) selects, or
// an error saying it selects none, with suggestions.
func (s *selection) match(e *Entry, i int) ([]int, error) {
	at := location(e, i)
	switch {
	case e.OperationID != "":
		if hits := s.byID[e.OperationID]; len(hits) > 0 {
			return hits, nil
		}
		ids := slices.Sorted(maps.Keys(s.byID))
		return nil, fmt.Errorf("%s: operationId %q matches no operation%s", at, e.OperationID, didYouMean(closest(e.OperationID, ids, ids)))
	case e.Tag != "":
		if hits := s.byTag[e.Tag]; len(hits) > 0 {
			return hits, nil
		}
		if s.doc.Tags.Get(e.Tag) != nil {
			return nil, fmt.Errorf("%s: tag %q is declared but no operation carries it", at, e.Tag)
		}
		tags := slices.Sorted(maps.Keys(s.byTag))
		return nil, fmt.Errorf("%s: tag %q matches no operation%s", at, e.Tag, didYouMean(closest(e.Tag, tags, tags)))
	}
	method := strings.ToUpper(e.Method)
	hits := s.byRoute[method+" "+shape(e.Path)]
	if len(hits) > 1 {
		// The spec has several templates of the same shape (/a/{x} and
		// /a/{y}); only an exact spelling can choose between them.
		tpl := bracePath(e.Path)
		exact := slices.DeleteFunc(slices.Clone(hits), func(c int) bool { return s.cands[c].path != tpl })
		if len(exact) != 1 {
			return nil, fmt.Errorf("%s: %s %s is ambiguous: it matches %s; write the path exactly as the spec does", at, method, e.Path, s.labels(hits))
		}
		hits = exact
	}
	if len(hits) == 0 {
		keys := make([]string, len(s.cands))
		labels := make([]string, len(s.cands))
		for c := range s.cands {
			keys[c] = s.cands[c].method + " " + shape(s.cands[c].path)
			labels[c] = s.cands[c].label()
		}
		return nil, fmt.Errorf("%s: %s %s matches no operation%s", at, method, e.Path, didYouMean(closest(method+" "+shape(e.Path), keys, labels)))
	}
	return hits, nil
}

// checkSlashParam reports an allowSlashes name that is not a path parameter
// of style simple of the entry's operation (for a tag, of at least one of
// its operations; the others are left as they are).
func (s *selection) checkSlashParam(e *Entry, i int, name string, hits []int) error {
	at := location(e, i)
	var wrongStyle *openapi3.Parameter
	var wrongAt string
	names := map[string]bool{}
	for _, c := range hits {
		params := pathParams(s.cands[c].item, s.cands[c].op)
		p := params[name]
		if slashParam(p) {
			return nil
		}
		if p != nil && wrongStyle == nil {
			wrongStyle, wrongAt = p, s.cands[c].label()
		}
		for n := range params {
			names[n] = true
		}
	}
	if wrongStyle != nil {
		how := "style " + wrongStyle.Style
		if len(wrongStyle.Content) > 0 {
			how = "content instead of a schema"
		}
		return fmt.Errorf("%s: allowSlashes: path parameter %q of %s has %s; allowSlashes needs style simple", at, name, wrongAt, how)
	}
	what := s.labels(hits)
	if e.Tag != "" {
		what = fmt.Sprintf("any operation tagged %q", e.Tag)
	}
	known := slices.Sorted(maps.Keys(names))
	if len(known) == 0 {
		return fmt.Errorf("%s: allowSlashes: %q is not a path parameter of %s, which has none", at, name, what)
	}
	return fmt.Errorf("%s: allowSlashes: %q is not a path parameter of %s (path parameters: %s)%s", at, name, what,
		strings.Join(known, ", "), didYouMean(closest(name, known, known)))
}

// pathParams returns the path parameters of an operation by name:
// operation-level ones override those of the path item.
func pathParams(item *openapi3.PathItem, op *openapi3.Operation) map[string]*openapi3.Parameter {
	out := map[string]*openapi3.Parameter{}
	var lists []openapi3.Parameters
	if item != nil {
		lists = append(lists, item.Parameters)
	}
	if op != nil {
		lists = append(lists, op.Parameters)
	}
	for _, ps := range lists {
		for _, ref := range ps {
			if ref != nil && ref.Value != nil && ref.Value.In == openapi3.ParameterInPath {
				out[ref.Value.Name] = ref.Value
			}
		}
	}
	return out
}

// slashParam reports whether p is a path parameter that may hold '/': one
// of style simple (the default) described by a schema.
func slashParam(p *openapi3.Parameter) bool {
	return p != nil && len(p.Content) == 0 && (p.Style == "" || p.Style == openapi3.SerializationSimple)
}

// labels lists candidates for a message.
func (s *selection) labels(cands []int) string {
	l := make([]string, len(cands))
	for i, c := range cands {
		l[i] = s.cands[c].label()
	}
	return listLabels(l)
}

// listLabels joins operation labels, eliding all but the first five.
func listLabels(l []string) string {
	const show = 5
	if len(l) > show {
		return fmt.Sprintf("%s and %d more", strings.Join(l[:show], ", "), len(l)-show)
	}
	return strings.Join(l, ", ")
}

// shape reduces a path template to the form paths are compared in: each
// {param} (anywhere in a segment) and each segment starting with ':' become
// {}, so /pets/{petId}, /pets/{id} and /pets/:id all read /pets/{}.
func shape(path string) string {
	return string(appendShape(nil, path))
}

// appendShape appends the shape of path to dst.
func appendShape(dst []byte, path string) []byte {
	for i := 0; ; i++ {
		seg, rest, more := strings.Cut(path, "/")
		if i > 0 {
			dst = append(dst, '/')
		}
		if len(seg) > 1 && seg[0] == ':' {
			dst = append(dst, "{}"...)
		} else {
			for {
				open := strings.IndexByte(seg, '{')
				if open < 0 {
					break
				}
				n := strings.IndexByte(seg[open:], '}')
				if n < 0 {
					break
				}
				dst = append(dst, seg[:open]...)
				dst = append(dst, "{}"...)
				seg = seg[open+n+1:]
			}
			dst = append(dst, seg...)
		}
		if !more {
			return dst
		}
		path = rest
	}
}

// bracePath rewrites :name segments as {name}, the spec's spelling.
func bracePath(path string) string {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		if len(seg) > 1 && seg[0] == ':' {
			segs[i] = "{" + seg[1:] + "}"
		}
	}
	return strings.Join(segs, "/")
}

// checkPath reports a path a whitelist entry cannot mean: it must start with
// '/', carry no query or fragment, and have balanced, unnested braces.
func checkPath(path string) error {
	if !strings.HasPrefix(path, "/") {
		return errors.New(`must start with "/" (write it as under the spec's paths)`)
	}
	if strings.ContainsAny(path, "?#") {
		return errors.New("must not contain a query or fragment")
	}
	if strings.ContainsAny(path, " \t\r\n") {
		return errors.New("must not contain whitespace")
	}
	open := false
	for _, r := range path {
		switch {
		case r == '{' && open, r == '}' && !open:
			return errors.New("has unbalanced braces")
		case r == '{' || r == '}':
			open = !open
		case r == '/' && open:
			return errors.New("has unbalanced braces")
		}
	}
	if open {
		return errors.New("has unbalanced braces")
	}
	return nil
}
