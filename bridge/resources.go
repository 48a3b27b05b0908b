package bridge

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

// SpecURI is the resource holding the whitelisted part of the spec (see
// [Catalog.Spec]).
const SpecURI = whitelist.SpecURI

// Resource is a whitelisted GET operation exposed as an MCP resource (a URI
// without variables) or resource template. Reading it is a call of its tool
// through [Runtime.Call], with the template's variables as the arguments,
// so every middleware applies. A Resource is immutable once built.
type Resource struct {
	uri         string // the URI or URI template, as the whitelist writes it
	tmpl        *whitelist.URITemplate
	tool        string
	name, mime  string
	description string
	vars        []resourceVar
	line        int // whitelist line of the resource key, for messages
}

// resourceVar is one template variable: the tool argument it fills, the
// JSON type its text converts to, and where completions come from.
type resourceVar struct {
	name string
	arg  string
	kind string   // "integer", "number", "boolean"; anything else is sent as a string
	enum []string // the parameter's enum values, as text
	list *whitelist.Completion
}

// URI is the resource URI, or the URI template of a resource template.
func (r *Resource) URI() string { return r.uri }

// Template reports whether r is a resource template.
func (r *Resource) Template() bool { return r.tmpl.Template() }

// Tool is the name of the tool a read calls.
func (r *Resource) Tool() string { return r.tool }

// MIMEType is the declared media type ("" means the answer's).
func (r *Resource) MIMEType() string { return r.mime }

// Def is the resources/list entry of a resource (not a template).
func (r *Resource) Def() *mcp.Resource {
	return &mcp.Resource{URI: r.uri, Name: r.name, MIMEType: r.mime, Description: r.description}
}

// TemplateDef is the resources/templates/list entry of a template.
func (r *Resource) TemplateDef() *mcp.ResourceTemplate {
	return &mcp.ResourceTemplate{URITemplate: r.uri, Name: r.name, MIMEType: r.mime, Description: r.description}
}

// SameResource reports whether a and b present the same definition to a
// client: replacing one by the other need not tell anybody.
func SameResource(a, b *Resource) bool {
	return a.uri == b.uri && a.name == b.name && a.mime == b.mime && a.description == b.description
}

// Args turns uri, an expansion of r's template (or r's URI), into the
// arguments of r's tool: each variable's value, converted to the
// parameter's type. A value of the wrong type is an *ArgumentError.
func (r *Resource) Args(uri string) (json.RawMessage, error) {
	vals, ok := r.tmpl.Match(uri)
	if !ok {
		return nil, &ArgumentError{Reason: fmt.Sprintf("%s does not match %s", uri, r.uri)}
	}
	args := make(map[string]any, len(r.vars))
	for _, v := range r.vars {
		s := vals[v.name]
		var val any = s
		var err error
		switch v.kind {
		case "integer":
			val, err = strconv.ParseInt(s, 10, 64)
		case "number":
			var f float64
			if f, err = strconv.ParseFloat(s, 64); err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
				err = strconv.ErrSyntax // NaN, Inf: no JSON number
			}
			val = f
		case "boolean":
			val, err = strconv.ParseBool(s)
		}
		if err != nil {
			return nil, &ArgumentError{Field: v.name, Reason: fmt.Sprintf("%q is not a valid %s", s, v.kind)}
		}
		args[v.arg] = val
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("encoding the arguments of %s: %w", r.uri, err)
	}
	return raw, nil
}

// Completions says where values of the template variable name come from:
// the parameter's enum, and a tool listing them (nil when none). ok is
// false when r has no such variable.
func (r *Resource) Completions(name string) (enum []string, list *whitelist.Completion, ok bool) {
	for _, v := range r.vars {
		if v.name == name {
			return v.enum, v.list, true
		}
	}
	return nil, nil, false
}

// Resources lists the resources and resource templates, in tool order.
// The whitelisted spec (Spec) is not among them.
func (c *Catalog) Resources() []*Resource { return c.resources }

// Resource returns the resource or template whose URI (template) is uri
// exactly.
func (c *Catalog) Resource(uri string) (*Resource, bool) {
	for _, r := range c.resources {
		if r.uri == uri {
			return r, true
		}
	}
	return nil, false
}

// HasTemplates reports whether any resource is a template (the server then
// offers completion).
func (c *Catalog) HasTemplates() bool {
	return slices.ContainsFunc(c.resources, (*Resource).Template)
}

// Spec is the whitelisted part of the spec as JSON, redacted (see
// [Options.Spec]); nil when the catalog was built without the document.
// With Options.DeferSpec, the first call makes it.
func (c *Catalog) Spec() []byte {
	c.specMu.Lock()
	defer c.specMu.Unlock()
	if c.specDoc != nil {
		c.spec = c.buildSpec(c.specDoc, c.specOps)
		c.specDoc, c.specOps = nil, nil
	}
	return c.spec
}

// FinishSpec makes a deferred openapi://spec now (see Options.DeferSpec).
func (c *Catalog) FinishSpec() { c.Spec() }

// HasSpec reports, without making it, whether the catalog serves
// openapi://spec; a deferred one that then fails to build reads as empty.
func (c *Catalog) HasSpec() bool {
	c.specMu.Lock()
	defer c.specMu.Unlock()
	return c.spec != nil || c.specDoc != nil
}

// indexResources prepares the resources of the tools that carry one. A
// resource whose variables no longer map to arguments (a parameter taken
// over by a configured credential) is skipped and reported; a completion
// source that is not a read-only tool is dropped with a warning.
func (c *Catalog) indexResources() {
	c.resources = nil
	for _, t := range c.tools {
		wr := t.resource
		if wr == nil || t.builtin != notBuiltin {
			continue
		}
		r, err := c.newResource(t, wr)
		if err != nil {
			c.skipped = append(c.skipped, Skipped{Operation: t.plan.Label, Reason: "resource " + wr.URI + ": " + err.Error()})
			c.log.Warn("resource skipped", zap.String("op", t.plan.Label), zap.String("uri", wr.URI), zap.Error(err))
			continue
		}
		c.resources = append(c.resources, r)
	}
}

// newResource prepares t's resource wr.
func (c *Catalog) newResource(t *Tool, wr *whitelist.Resource) (*Resource, error) {
	tmpl, err := whitelist.ParseURITemplate(wr.URI)
	if err != nil {
		return nil, err
	}
	r := &Resource{
		uri: wr.URI, tmpl: tmpl, tool: t.def.Name, name: wr.Name, mime: wr.MIMEType,
		description: wr.Description, line: wr.Line,
	}
	if r.name == "" {
		r.name = t.def.Name
	}
	if r.description == "" {
		r.description = t.def.Description
	}
	props := inputProperties(t.input.Raw())
	for _, name := range tmpl.Vars() {
		v := resourceVar{name: name}
		for _, p := range t.plan.Params {
			if p.Spec.Name == name && (p.Spec.In == "path" || (p.Spec.In == "query" && v.arg == "")) {
				v.arg = p.Arg
			}
		}
		if v.arg == "" {
			return nil, fmt.Errorf("{%s} names no argument of tool %s", name, t.def.Name)
		}
		v.kind, v.enum = props.kindAndEnum(v.arg)
		if comp, ok := wr.Complete[name]; ok {
			switch lt, found := c.byName[comp.Tool]; {
			case !found:
				c.log.Warn("resource completion source is not a tool; completions use the enum only", zap.String("uri", wr.URI), zap.String("var", name), zap.String("tool", comp.Tool))
			case !lt.ReadOnly() || lt.builtin != notBuiltin:
				c.log.Warn("resource completion source is not a read-only operation; completions use the enum only", zap.String("uri", wr.URI), zap.String("var", name), zap.String("tool", comp.Tool))
			default:
				cp := comp
				v.list = &cp
			}
		}
		r.vars = append(r.vars, v)
	}
	return r, nil
}

// schemaProps is the properties object of a tool's input schema, with its
// $defs, as far as the resource variables need them.
type schemaProps struct {
	Properties map[string]propSchema `json:"properties"`
	Defs       map[string]propSchema `json:"$defs"`
}

type propSchema struct {
	Type any    `json:"type"` // a string or a list of strings
	Enum []any  `json:"enum"`
	Ref  string `json:"$ref"`
}

func inputProperties(raw []byte) *schemaProps {
	var s schemaProps
	_ = json.Unmarshal(raw, &s) // built by the bridge; a failure leaves strings without enums
	return &s
}

// kindAndEnum returns the JSON type of argument arg (its first non-null
// type) and its enum values as text.
func (s *schemaProps) kindAndEnum(arg string) (string, []string) {
	p, ok := s.Properties[arg]
	for range 4 { // follow a short $ref chain into $defs
		if !ok || p.Ref == "" {
			break
		}
		p, ok = s.Defs[strings.TrimPrefix(p.Ref, "#/$defs/")]
	}
	if !ok {
		return "string", nil
	}
	kind := "string"
	switch t := p.Type.(type) {
	case string:
		kind = t
	case []any:
		for _, x := range t {
			if s, _ := x.(string); s != "" && s != "null" {
				kind = s
				break
			}
		}
	}
	var enum []string
	for _, e := range p.Enum {
		switch x := e.(type) {
		case nil:
		case string:
			enum = append(enum, x)
		default:
			b, err := json.Marshal(x)
			if err == nil {
				enum = append(enum, string(b))
			}
		}
	}
	return kind, enum
}
