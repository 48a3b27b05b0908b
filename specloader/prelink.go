package specloader

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// prelink points every plain local $ref of an OpenAPI 3.0 model at its
// component ("#/components/schemas/Pet" gets components.schemas.Pet's
// value), as kin-openapi's ResolveRefsIn would, before it runs.
//
// Why: ResolveRefsIn stops at a $ref whose value is already set, but it
// resolves every other one again from the document (parsing the
// reference, walking the pointer) and then walks the target's inline
// subtree again, sorting the property names of each schema on the way: on
// GitHub's spec, with 8,000 references to a few hundred components, that
// is a quarter of a second of one core at every start, most of it for
// targets it has already walked. Linked here, each component is walked once
// (from the components section) and each reference costs a map lookup.
//
// What is left to ResolveRefsIn, unchanged: references into other
// documents, to anything but the five sections below, to a component that
// is missing or a chain of aliases that ends at one or loops (its error
// stays kin-openapi's), names that
// need unescaping (~0, ~1, %xx), and every OpenAPI 3.1 document, where a
// $ref's siblings apply on top of its target (kin-openapi merges them
// while it resolves). The one difference in the result is unexported: kin
// records each reference's resolved location (RefPath), which only its
// InternalizeRefs reads; the bridge does not call it.
func prelink(doc *openapi3.T) {
	if doc == nil || doc.Components == nil || doc.IsOpenAPI31OrLater() {
		return
	}
	l := linker{c: doc.Components}
	c := doc.Components
	// The components are walked; one that is itself a plain local $ref (an
	// alias) is linked to the end of its chain.
	for _, s := range c.Schemas {
		l.schema(s)
	}
	for _, p := range c.Parameters {
		l.parameter(p)
	}
	for _, h := range c.Headers {
		l.header(h)
	}
	for _, b := range c.RequestBodies {
		l.requestBody(b)
	}
	for _, r := range c.Responses {
		l.response(r)
	}
	for _, cb := range c.Callbacks {
		if cb != nil && cb.Ref == "" {
			l.callback(cb.Value)
		}
	}
	if doc.Paths != nil {
		for _, item := range doc.Paths.Map() {
			l.pathItem(item)
		}
	}
	for _, item := range doc.Webhooks {
		l.pathItem(item)
	}
}

type linker struct {
	c *openapi3.Components
}

// localName is the component name of a plain local reference into
// section ("#/components/<section>/<name>"), or "".
func localName(ref, section string) string {
	const prefix = "#/components/"
	if len(ref) <= len(prefix)+len(section)+1 || ref[:len(prefix)] != prefix ||
		ref[len(prefix):len(prefix)+len(section)] != section || ref[len(prefix)+len(section)] != '/' {
		return ""
	}
	name := ref[len(prefix)+len(section)+1:]
	for i := 0; i < len(name); i++ {
		switch b := name[i]; {
		case b >= 'a' && b <= 'z', b >= 'A' && b <= 'Z', b >= '0' && b <= '9', b == '_', b == '-', b == '.':
		default:
			return "" // ~ and % need unescaping, / is a deeper pointer: kin's
		}
	}
	return name
}

// target is the value of the component of section that the plain local
// reference ref names, or nil when there is none. A component that is
// itself a plain local $ref (an alias) is followed to the end of its chain,
// and every alias on the way gets the final value, so that each link is
// followed once: kin-openapi follows a chain again from each of its
// members, which costs the square of its length (10,000 links would take
// hours). A chain that ends at a missing component or at a reference this
// does not follow, or that loops, is left to kin, with its own error.
// open reads a component's $ref and the address of its value.
func target[R, V any](comps map[string]*R, section, ref string, open func(*R) (string, **V)) *V {
	var chain []**V
	var seen map[**V]bool
	for {
		t := comps[localName(ref, section)]
		if t == nil {
			return nil
		}
		tref, v := open(t)
		if tref == "" || *v != nil {
			for _, a := range chain {
				*a = *v
			}
			return *v
		}
		if seen == nil {
			seen = make(map[**V]bool)
		}
		if seen[v] {
			return nil // a loop
		}
		seen[v] = true
		chain = append(chain, v)
		ref = tref
	}
}

// schema links s when it is a plain local reference, or walks its inline
// value; so do parameter, header, requestBody and response for theirs.
func (l linker) schema(s *openapi3.SchemaRef) {
	switch {
	case s == nil:
	case s.Ref == "":
		l.schemaValue(s.Value)
	case s.Value == nil:
		s.Value = target(l.c.Schemas, "schemas", s.Ref, func(t *openapi3.SchemaRef) (string, **openapi3.Schema) { return t.Ref, &t.Value })
	}
}

func (l linker) parameter(p *openapi3.ParameterRef) {
	switch {
	case p == nil:
	case p.Ref == "":
		l.parameterValue(p.Value)
	case p.Value == nil:
		p.Value = target(l.c.Parameters, "parameters", p.Ref, func(t *openapi3.ParameterRef) (string, **openapi3.Parameter) { return t.Ref, &t.Value })
	}
}

func (l linker) header(h *openapi3.HeaderRef) {
	switch {
	case h == nil:
	case h.Ref == "":
		if h.Value != nil {
			l.parameterValue(&h.Value.Parameter)
		}
	case h.Value == nil:
		h.Value = target(l.c.Headers, "headers", h.Ref, func(t *openapi3.HeaderRef) (string, **openapi3.Header) { return t.Ref, &t.Value })
	}
}

func (l linker) requestBody(b *openapi3.RequestBodyRef) {
	switch {
	case b == nil:
	case b.Ref == "":
		if b.Value != nil {
			l.content(b.Value.Content)
		}
	case b.Value == nil:
		b.Value = target(l.c.RequestBodies, "requestBodies", b.Ref, func(t *openapi3.RequestBodyRef) (string, **openapi3.RequestBody) { return t.Ref, &t.Value })
	}
}

func (l linker) response(r *openapi3.ResponseRef) {
	switch {
	case r == nil:
	case r.Ref == "":
		l.responseValue(r.Value)
	case r.Value == nil:
		r.Value = target(l.c.Responses, "responses", r.Ref, func(t *openapi3.ResponseRef) (string, **openapi3.Response) { return t.Ref, &t.Value })
	}
}

func (l linker) schemaValue(v *openapi3.Schema) {
	if v == nil {
		return
	}
	l.schema(v.Items)
	for _, p := range v.Properties {
		l.schema(p)
	}
	l.schema(v.AdditionalProperties.Schema)
	l.schema(v.Not)
	for _, list := range [...]openapi3.SchemaRefs{v.AllOf, v.AnyOf, v.OneOf, v.PrefixItems} {
		for _, s := range list {
			l.schema(s)
		}
	}
	l.schema(v.Contains)
	for _, m := range [...]openapi3.Schemas{v.PatternProperties, v.DependentSchemas, v.Defs} {
		for _, s := range m {
			l.schema(s)
		}
	}
	l.schema(v.PropertyNames)
	l.schema(v.UnevaluatedItems.Schema)
	l.schema(v.UnevaluatedProperties.Schema)
	l.schema(v.If)
	l.schema(v.Then)
	l.schema(v.Else)
	l.schema(v.ContentSchema)
}

func (l linker) content(c openapi3.Content) {
	for _, mt := range c {
		if mt == nil {
			continue
		}
		l.schema(mt.Schema)
		l.schema(mt.ItemSchema)
		for _, e := range mt.Encoding {
			if e != nil {
				for _, h := range e.Headers {
					l.header(h)
				}
			}
		}
	}
}

func (l linker) parameterValue(v *openapi3.Parameter) {
	if v != nil {
		l.schema(v.Schema)
		l.content(v.Content)
	}
}

func (l linker) responseValue(v *openapi3.Response) {
	if v == nil {
		return
	}
	for _, h := range v.Headers {
		l.header(h)
	}
	l.content(v.Content)
}

func (l linker) callback(cb *openapi3.Callback) {
	if cb == nil {
		return
	}
	for _, item := range cb.Map() {
		l.pathItem(item)
	}
}

func (l linker) pathItem(item *openapi3.PathItem) {
	if item == nil || item.Ref != "" {
		return
	}
	for _, p := range item.Parameters {
		l.parameter(p)
	}
	for _, op := range item.Operations() {
		if op == nil {
			continue
		}
		for _, p := range op.Parameters {
			l.parameter(p)
		}
		l.requestBody(op.RequestBody)
		if op.Responses != nil {
			for _, r := range op.Responses.Map() {
				l.response(r)
			}
		}
		for _, cb := range op.Callbacks {
			if cb != nil && cb.Ref == "" {
				l.callback(cb.Value)
			}
		}
	}
}

// maxAliasChain bounds a chain of components that are each only a $ref to
// the next where prelink does not link them (OpenAPI 3.1, Swagger 2.0, a
// chain through a name to unescape):
// kin-openapi follows such a chain again from each of its members, which
// costs the square of its length (2,000 links took 4 s, 10,000 minutes).
// Real specs have chains of one or two.
const maxAliasChain = 64

// checkAliasChains refuses a chain of aliases longer than maxAliasChain,
// naming its start. next maps the name of each component that is a plain
// local $ref to the name it refers to.
func checkAliasChains(section string, next map[string]string) error {
	depth := make(map[string]int, len(next)) // links from a name to the end of its chain
	var chain []string
	for start := range next {
		chain = chain[:0]
		name := start
		for {
			if _, done := depth[name]; done {
				break
			}
			to, ok := next[name]
			if !ok {
				depth[name] = 0
				break
			}
			depth[name] = 0 // a loop ends here: kin-openapi reports it
			chain = append(chain, name)
			name = to
		}
		d := depth[name]
		for i := len(chain) - 1; i >= 0; i-- {
			d++
			depth[chain[i]] = d
		}
	}
	var worst string
	for name, d := range depth {
		if d > maxAliasChain && (worst == "" || d > depth[worst] || d == depth[worst] && name < worst) {
			worst = name
		}
	}
	if worst != "" {
		return fmt.Errorf("%s: %q starts a chain of %d entries that are each only a $ref to the next (at most %d)", section, worst, depth[worst], maxAliasChain)
	}
	return nil
}

// checkAliasChains3 applies checkAliasChains to each components section
// of doc after prelink: to the aliases it left to kin-openapi (every one
// in OpenAPI 3.1, those whose chain goes through a name to unescape in 3.0).
func checkAliasChains3(doc *openapi3.T) error {
	if doc == nil || doc.Components == nil {
		return nil
	}
	c := doc.Components
	for _, err := range []error{
		aliasChains(c.Schemas, "schemas", func(x *openapi3.SchemaRef) (string, bool) { return x.Ref, x.Value != nil }),
		aliasChains(c.Parameters, "parameters", func(x *openapi3.ParameterRef) (string, bool) { return x.Ref, x.Value != nil }),
		aliasChains(c.Headers, "headers", func(x *openapi3.HeaderRef) (string, bool) { return x.Ref, x.Value != nil }),
		aliasChains(c.RequestBodies, "requestBodies", func(x *openapi3.RequestBodyRef) (string, bool) { return x.Ref, x.Value != nil }),
		aliasChains(c.Responses, "responses", func(x *openapi3.ResponseRef) (string, bool) { return x.Ref, x.Value != nil }),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// aliasChains applies checkAliasChains to comps, the components of
// section, following unlinked ones; open reads a component's $ref and
// whether it is linked. A name to unescape (~0, ~1) is followed as written,
// which only shortens what is counted.
func aliasChains[R any](comps map[string]*R, section string, open func(*R) (ref string, linked bool)) error {
	prefix := "#/components/" + section + "/"
	next := make(map[string]string)
	for name, x := range comps {
		if x == nil {
			continue
		}
		if ref, linked := open(x); !linked {
			if to, ok := strings.CutPrefix(ref, prefix); ok {
				next[name] = to
			}
		}
	}
	return checkAliasChains("components."+section, next)
}
