package whitelist

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"
)

// SpecURI is the resource under which the bridge serves the whitelisted part
// of the spec; no entry may claim it.
const SpecURI = "openapi://spec"

// Resource exposes an entry's GET operation as an MCP resource (a URI
// without variables) or resource template (a URI with {var} variables,
// RFC 6570 level 1, each naming a path or query parameter of the
// operation).
type Resource struct {
	// URI is the resource URI or URI template, e.g. api://pets/{petId}.
	URI string
	// Name is the resource's name; "" means the tool's name.
	Name string
	// MIMEType is the declared media type; "" means the answer's.
	MIMEType string
	// Description describes the resource; "" means the tool's description.
	Description string
	// Complete says where completion/complete finds values for a
	// variable besides the parameter's enum: a list operation, by tool name.
	Complete map[string]Completion
	// Line is the line of the resource key (0 for entries built in code).
	Line int
}

// Completion names a tool whose answer lists values for a template
// variable: Field of each item of the answer's top-level array (or of the
// first array member of a top-level object); "" takes the items themselves.
type Completion struct {
	Tool, Field string
}

// clone returns a deep copy of r (nil for nil).
func (r *Resource) clone() *Resource {
	if r == nil {
		return nil
	}
	cp := *r
	if r.Complete != nil {
		cp.Complete = make(map[string]Completion, len(r.Complete))
		for k, v := range r.Complete {
			cp.Complete[k] = v
		}
	}
	return &cp
}

// URITemplate is a parsed resource URI: literal text and {var} expressions
// (RFC 6570 level 1, simple string expansion).
type URITemplate struct {
	raw   string
	parts []templatePart
}

type templatePart struct {
	lit string // literal text; "" for a variable
	v   string // variable name; "" for a literal
}

// varName is an RFC 6570 varname without pct-encoded characters.
var varName = regexp.MustCompile(`^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$`)

// badLiteral lists what RFC 6570 forbids in the literal parts of a
// template (besides controls and space).
const badLiteral = `"'<>\^` + "`" + `|}`

// ParseURITemplate parses a resource URI: an absolute URI (with a scheme)
// whose {var} expressions are RFC 6570 level 1. Operators (+, #, ., /, ;, ?,
// &), modifiers (:n, *) and lists of variables are rejected, and so are
// variables named twice.
func ParseURITemplate(s string) (*URITemplate, error) {
	t := &URITemplate{raw: s}
	seen := make(map[string]bool) // the variables so far: a set keeps a long template linear
	rest := s
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		lit := rest
		if i >= 0 {
			lit = rest[:i]
		}
		for _, r := range lit {
			if r <= ' ' || r == 0x7f || strings.ContainsRune(badLiteral, r) {
				return nil, fmt.Errorf("character %q is not allowed in a URI template (outside {var})", r)
			}
		}
		if lit != "" {
			t.parts = append(t.parts, templatePart{lit: lit})
		}
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("unclosed {")
		}
		name := rest[i+1 : i+j]
		switch {
		case name == "":
			return nil, fmt.Errorf("empty {}")
		case strings.ContainsAny(name[:1], "+#./;?&=,!@|"):
			return nil, fmt.Errorf("{%s}: only simple {var} expressions (RFC 6570 level 1) are supported", name)
		case strings.ContainsAny(name, ",:*"):
			return nil, fmt.Errorf("{%s}: one variable per expression, without modifiers (RFC 6570 level 1)", name)
		case !varName.MatchString(name):
			return nil, fmt.Errorf("{%s}: a variable name has letters, digits and _ only", name)
		case seen[name]:
			return nil, fmt.Errorf("{%s} appears twice", name)
		}
		seen[name] = true
		if len(t.parts) > 0 && t.parts[len(t.parts)-1].v != "" {
			return nil, fmt.Errorf("{%s} directly follows another variable: separate them with a literal", name)
		}
		t.parts = append(t.parts, templatePart{v: name})
		rest = rest[i+j+1:]
	}
	prefix := s
	if len(t.parts) > 0 && t.parts[0].lit != "" {
		prefix = t.parts[0].lit
	} else if len(t.parts) > 0 {
		prefix = ""
	}
	scheme, _, ok := strings.Cut(prefix, ":")
	if !ok || !regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`).MatchString(scheme) {
		return nil, fmt.Errorf("not an absolute URI: start it with a scheme such as api://")
	}
	if !t.Template() {
		if _, err := url.Parse(s); err != nil {
			return nil, fmt.Errorf("not a valid URI: %v", err)
		}
	}
	return t, nil
}

// String is the template as written.
func (t *URITemplate) String() string { return t.raw }

// Template reports whether t has variables (a resource template rather
// than a resource).
func (t *URITemplate) Template() bool { return len(t.Vars()) > 0 }

// Vars lists the variables in order.
func (t *URITemplate) Vars() []string {
	var out []string
	for _, p := range t.parts {
		if p.v != "" {
			out = append(out, p.v)
		}
	}
	return out
}

// Match reports whether uri is an expansion of t, and returns each
// variable's value, percent-decoded. A value never spans '/', '?' or '#'
// and is not empty.
func (t *URITemplate) Match(uri string) (map[string]string, bool) {
	vals := map[string]string{}
	rest := uri
	for i, p := range t.parts {
		if p.lit != "" {
			var ok bool
			if rest, ok = strings.CutPrefix(rest, p.lit); !ok {
				return nil, false
			}
			continue
		}
		// A variable runs to the next literal (variables never touch), or
		// to the end.
		end := len(rest)
		if i+1 < len(t.parts) {
			end = strings.Index(rest, t.parts[i+1].lit)
			if end < 0 {
				return nil, false
			}
		}
		raw := rest[:end]
		if raw == "" || strings.ContainsAny(raw, "/?#") {
			return nil, false
		}
		v, err := url.PathUnescape(raw)
		if err != nil {
			return nil, false
		}
		vals[p.v] = v
		rest = rest[end:]
	}
	if rest != "" {
		return nil, false
	}
	return vals, true
}

// resourceKeys and completeKeys are the keys of a resource mapping and of
// one variable's completion source.
func resourceKeys() []string { return []string{"uri", "name", "mimeType", "description", "complete"} }
func completeKeys() []string { return []string{"tool", "field"} }

// resource reads an entry's resource mapping.
func (p *parser) resource(f field) *Resource {
	if f.value.Kind != yaml.MappingNode {
		p.errorf(f.line, "resource must be a mapping with uri (and name, mimeType, description, complete)")
		return nil
	}
	r := &Resource{Line: f.line}
	var tmpl *URITemplate
	var completeField *field
	haveURI := false
	for _, rf := range p.fields(f.value, "resource", resourceKeys()) {
		haveURI = haveURI || rf.key == "uri"
		if rf.key == "complete" {
			completeField = &rf
			continue
		}
		s, ok := p.str(rf)
		if !ok {
			continue
		}
		switch rf.key {
		case "uri":
			t, err := ParseURITemplate(s)
			switch {
			case err != nil:
				p.errorf(rf.line, "resource uri %q: %v", s, err)
			case s == SpecURI:
				p.errorf(rf.line, "resource uri %s is the bridge's own (the whitelisted spec): choose another", s)
			default:
				r.URI, tmpl = s, t
			}
		case "name":
			r.Name = s
		case "mimeType":
			if !strings.Contains(s, "/") || strings.ContainsAny(s, " \t\r\n,") {
				p.errorf(rf.line, "resource mimeType %q is not a media type such as application/json", s)
				continue
			}
			r.MIMEType = s
		case "description":
			r.Description = s
		}
	}
	if !haveURI {
		p.errorf(f.line, "resource needs a uri, e.g. api://pets/{petId}")
	}
	if completeField != nil {
		r.Complete = p.completions(*completeField, tmpl)
	}
	return r
}

// completions reads a resource's complete mapping: variable → {tool,
// field}. Every key must be a variable of tmpl (nil: the uri was bad and
// is reported already).
func (p *parser) completions(f field, tmpl *URITemplate) map[string]Completion {
	if f.value.Kind != yaml.MappingNode {
		p.errorf(f.line, "complete must be a mapping of template variables to {tool, field}")
		return nil
	}
	out := map[string]Completion{}
	for i := 0; i+1 < len(f.value.Content); i += 2 {
		k, v := resolve(f.value.Content[i]), resolve(f.value.Content[i+1])
		line := f.value.Content[i].Line
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			p.errorf(line, "complete keys must be template variables")
			continue
		}
		if _, dup := out[k.Value]; dup {
			p.errorf(line, "complete lists %q twice", k.Value)
			continue
		}
		if tmpl != nil && !slices.Contains(tmpl.Vars(), k.Value) {
			vars := "the uri has no variables"
			if tmpl.Template() {
				vars = "its variables: " + strings.Join(tmpl.Vars(), ", ")
			}
			p.errorf(line, "complete %q is not a variable of the resource uri (%s)", k.Value, vars)
			continue
		}
		if v.Kind != yaml.MappingNode {
			p.errorf(line, "complete %s must be a mapping {tool: listTool, field: id}", k.Value)
			continue
		}
		var c Completion
		for _, cf := range p.fields(v, "complete "+k.Value, completeKeys()) {
			if s, ok := p.str(cf); ok {
				if cf.key == "tool" {
					c.Tool = s
				} else {
					c.Field = s
				}
			}
		}
		if c.Tool == "" {
			p.errorf(line, "complete %s needs a tool (a list operation's tool name)", k.Value)
			continue
		}
		out[k.Value] = c
	}
	return out
}

// resourceProblems is what is wrong with e's resource on its own.
func (e *Entry) resourceProblems(add func(key, format string, args ...any)) {
	r := e.Resource
	if r == nil {
		return
	}
	if e.Tag != "" {
		add("resource", "resource cannot be used with tag (a tag selects several operations): list the operation by method and path or operationId")
	}
	if e.Method != "" && strings.ToUpper(e.Method) != "GET" {
		add("resource", "resource needs a GET operation, not %s", strings.ToUpper(e.Method))
	}
	if r.URI == "" {
		return // reported by the parser; entries built in code must set it
	}
	t, err := ParseURITemplate(r.URI)
	switch {
	case err != nil:
		add("resource", "resource uri %q: %v", r.URI, err)
		return
	case r.URI == SpecURI:
		add("resource", "resource uri %s is the bridge's own (the whitelisted spec): choose another", r.URI)
	}
	for v := range r.Complete {
		if !slices.Contains(t.Vars(), v) {
			add("resource", "resource complete %q is not a variable of %s", v, r.URI)
		}
	}
}

// duplicateResources reports every entry whose resource URI repeats an
// earlier entry's.
func duplicateResources(entries []Entry, report func(i int, err error)) {
	first := map[string]int{}
	for i := range entries {
		r := entries[i].Resource
		if r == nil || r.URI == "" {
			continue
		}
		if j, ok := first[r.URI]; ok {
			report(i, fmt.Errorf("%s: resource uri %q is already used by the entry at %s", resourceLocation(&entries[i], i), r.URI, location(&entries[j], j)))
			continue
		}
		first[r.URI] = i
	}
}

// resourceLocation names an entry's resource key in messages.
func resourceLocation(e *Entry, index int) string {
	if e.Resource != nil && e.Resource.Line > 0 {
		return fmt.Sprintf("line %d", e.Resource.Line)
	}
	return location(e, index)
}

// checkResource reports what keeps entry e's resource from being read
// through the one operation it selected: a method other than GET, a
// variable that names no path or query parameter, a required path or query
// parameter the URI does not fill.
func (s *selection) checkResource(e *Entry, i int, hits []int) error {
	r := e.Resource
	if r == nil || len(hits) != 1 {
		if r != nil && len(hits) > 1 {
			return fmt.Errorf("%s: resource needs exactly one operation, the entry selects %d (%s)", resourceLocation(e, i), len(hits), s.labels(hits))
		}
		return nil
	}
	c := s.cands[hits[0]]
	at := resourceLocation(e, i)
	if c.method != "GET" {
		return fmt.Errorf("%s: resource %s: %s is not a GET operation (a resource is read, never changed)", at, r.URI, c.label())
	}
	t, err := ParseURITemplate(r.URI)
	if err != nil {
		return fmt.Errorf("%s: resource uri %q: %w", at, r.URI, err)
	}
	params := map[string]*openapi3.Parameter{} // path and query parameters by name
	var required []string
	add := func(ps openapi3.Parameters) {
		for _, pr := range ps {
			if pr == nil || pr.Value == nil || (pr.Value.In != "path" && pr.Value.In != "query") {
				continue
			}
			p := pr.Value
			if _, seen := params[p.Name]; !seen || p.In == "path" {
				params[p.Name] = p
			}
			if (p.Required || p.In == "path") && !slices.Contains(required, p.Name) {
				required = append(required, p.Name)
			}
		}
	}
	if c.item != nil {
		add(c.item.Parameters)
	}
	add(c.op.Parameters)
	var probs []string
	for _, v := range t.Vars() {
		if _, ok := params[v]; !ok {
			probs = append(probs, fmt.Sprintf("{%s} names no path or query parameter of %s", v, c.label()))
		}
	}
	for _, name := range required {
		if !slices.Contains(t.Vars(), name) {
			probs = append(probs, fmt.Sprintf("the required %s parameter %q has no {%s} in the uri", params[name].In, name, name))
		}
	}
	if len(probs) > 0 {
		return fmt.Errorf("%s: resource %s: %s", at, r.URI, strings.Join(probs, "; "))
	}
	return nil
}

// checkCompletions reports every completion source that names no selected
// GET operation (by its whitelist name, else its operationId); owner gives
// the entry selecting each candidate (-1: none).
func (s *selection) checkCompletions(p *Policy, owner []int, report func(i int, err error)) {
	tools := map[string]string{} // tool name → method
	for ci, c := range s.cands {
		if !p.All && owner[ci] < 0 {
			continue
		}
		name := c.op.OperationID
		if j := owner[ci]; j >= 0 && p.Entries[j].Name != "" {
			name = p.Entries[j].Name
		}
		if name != "" {
			tools[name] = c.method
		}
	}
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Resource == nil {
			continue
		}
		for _, v := range slices.Sorted(maps.Keys(e.Resource.Complete)) {
			tool := e.Resource.Complete[v].Tool
			switch m, ok := tools[tool]; {
			case !ok:
				report(i, fmt.Errorf("%s: resource complete %s: tool %q is not a selected operation (name it by its operationId or whitelist name)", resourceLocation(e, i), v, tool))
			case m != "GET":
				report(i, fmt.Errorf("%s: resource complete %s: tool %q is a %s operation; completion calls only GET operations", resourceLocation(e, i), v, tool, m))
			}
		}
	}
}
