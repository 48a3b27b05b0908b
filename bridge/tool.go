package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge/request"
	"github.com/mcpbridge/mcpbridge/bridge/schema"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// Tool is one prepared operation: its MCP definition and everything a call
// needs, computed once. A Tool is immutable once built: it may be listed
// and called concurrently, and kept by calls that started before a swap.
type Tool struct {
	def      *mcp.Tool
	plan     request.Plan
	input    schema.Lazy // validates arguments
	output   schema.Lazy // validates structured output; empty: no output schema
	timeout  time.Duration
	retry    bool
	builtin  builtin             // non-zero: answered by the bridge itself (ping, meta-tools)
	tags     []string            // the operation's tags, for search_operations
	opID     string              // the operation's operationId ("" when the spec gives none)
	path     string              // the operation's path as the spec writes it
	pinned   bool                // listed in hybrid mode
	allow    *whitelist.Allow    // nil: every caller may use the tool
	shape    *shapePlan          // whitelist fields/maxItems; nil: answers as they come
	fields   []string            // the entry's fields, kept for the tool cache
	maxItm   int                 // the entry's maxItems, kept for the tool cache
	repairs  []schema.Repair     // spec contradictions resolved while building; New collects them
	resource *whitelist.Resource // the entry's resource; nil: none
	relaxed  *relaxed            // whitelist redact.allowKeys; nil: the catalog's redaction
	creds    *request.Prepared   // the credentials of plan.Auth's schemes with the catalog's; nil: the catalog's
	auth     AuthUse             // what plan.Auth asks of the upstream client
	unmet    []string            // the unconfigured schemes its security requirements name, when none is met
}

// builtin names the tools the bridge answers itself.
type builtin uint8

const (
	notBuiltin builtin = iota
	builtinPing
	builtinSearch   // search_operations
	builtinDescribe // describe_operation
	builtinCall     // call_operation
)

// Def is the tool's MCP definition, exactly as tools/list presents it. It
// is shared: never modify it (copy it first).
func (t *Tool) Def() *mcp.Tool { return t.def }

// Name is the tool name.
func (t *Tool) Name() string { return t.def.Name }

// Label is "METHOD /path" for an operation, the tool name for a built-in.
func (t *Tool) Label() string {
	if t.builtin != notBuiltin {
		return t.def.Name
	}
	return t.plan.Label
}

// Builtin reports whether the bridge answers the tool itself, without
// calling the upstream.
func (t *Tool) Builtin() bool { return t.builtin != notBuiltin }

// ReadOnly reports the tool's readOnlyHint.
func (t *Tool) ReadOnly() bool { return t.def.Annotations != nil && t.def.Annotations.ReadOnlyHint }

// Operation says which OpenAPI operation the tool calls, for listings
// (mcpbridge tools) and selection previews; the zero Operation for a
// built-in.
type Operation struct {
	Method      string   `json:"method"`
	Path        string   `json:"path"`
	OperationID string   `json:"operationId,omitempty"`
	Tags        []string `json:"tags,omitempty"`
}

// Operation is the operation the tool calls (zero for a built-in). Its
// Tags are shared: never modify them.
func (t *Tool) Operation() Operation {
	if t.builtin != notBuiltin {
		return Operation{}
	}
	return Operation{Method: t.plan.Method, Path: t.path, OperationID: t.opID, Tags: t.tags}
}

// Plan is the request plan (the zero Plan for a built-in).
func (t *Tool) Plan() *request.Plan { return &t.plan }

// InputSchema is the validator of the tool's arguments.
func (t *Tool) InputSchema() *schema.Lazy { return &t.input }

// SameDefinition reports whether a and b present the same definition to a
// client (name, title, description, annotations, schemas): swapping one for
// the other need not tell anybody.
func SameDefinition(a, b *Tool) bool {
	da, db := a.def, b.def
	if da.Name != db.Name || da.Title != db.Title || da.Description != db.Description ||
		!bytes.Equal(a.input.Raw(), b.input.Raw()) || !bytes.Equal(a.output.Raw(), b.output.Raw()) {
		return false
	}
	ja, _ := json.Marshal(da.Annotations) // plain data: cannot fail
	jb, _ := json.Marshal(db.Annotations)
	return bytes.Equal(ja, jb)
}

// credentialParam reports whether a parameter's location and name are those
// of a configured credential, as lenient servers read names (case aside,
// PHP's '_' for '.', ' ', and for headers '-': see request.SameParamName
// and request.SameHeaderName).
func credentialParam(cr request.Credentials, in, name string) bool {
	switch in {
	case "query":
		for k := range cr.Query {
			if request.SameParamName(name, k) {
				return true
			}
		}
	case "cookie":
		for k := range cr.Cookies {
			if request.SameParamName(name, k) {
				return true
			}
		}
	case "header":
		if request.SameHeaderName(name, "Cookie") && len(cr.Cookies) > 0 {
			return true // the configured cookies make the Cookie header
		}
		for k := range cr.Headers {
			if request.SameHeaderName(k, name) {
				return true
			}
		}
	}
	return false
}

// ignoredHeaders are header parameters that are not tool arguments:
// Accept, Content-Type and Authorization, which OpenAPI says to ignore (the
// bridge owns them), and the headers of the connection itself, which the
// HTTP client writes (Host, Content-Length, Transfer-Encoding) or which
// act on the hop rather than the API: a Connection header naming
// X-Api-Key would have a proxy on the way drop the credential header.
var ignoredHeaders = map[string]bool{
	"accept": true, "content-type": true, "authorization": true,
	"accept-encoding": true, // the bridge decodes what it asks for (upstream.Decoded)
	"host":            true, "content-length": true, "transfer-encoding": true,
	"connection": true, "keep-alive": true, "proxy-connection": true,
	"te": true, "trailer": true, "upgrade": true,
}

// buildTool prepares one operation. A *buildError means the operation cannot
// be expressed as a tool; it is reported and skipped.
func (c *Catalog) buildTool(op whitelist.Operation) (*Tool, error) {
	label := op.Method + " " + op.Path
	fail := func(format string, args ...any) error {
		return &buildError{op: label, reason: fmt.Sprintf(format, args...)}
	}
	o := op.Op
	t := &Tool{
		plan:    request.Plan{Label: label, Method: op.Method},
		timeout: op.Timeout,
	}
	if t.timeout == 0 {
		t.timeout = c.opts.Timeout
	}
	t.fields, t.maxItm = op.Fields, op.MaxItems
	t.resource = op.Resource
	t.shape = newShapePlan(op.Fields, op.MaxItems)

	base, err := c.baseFor(op)
	if err != nil {
		return nil, fail("%v", err)
	}
	// The security schemes whose credentials its requests carry: their
	// names are credentials' names like the configured ones (security.go).
	t.plan.Auth, t.unmet = c.security(op)
	creds, _ := c.toolCredentials(t.plan.Auth)
	// The nested style is configuration, not the spec: a bad one fails New.
	nested := c.opts.NestedStyle
	if op.NestedStyle != "" {
		nested = request.NestedStyle(op.NestedStyle)
	}
	if _, err := request.ParseNestedStyle(string(nested)); err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}

	// Parameters: path-item level first, overridden by operation level
	// (same name and location).
	type key struct{ in, name string }
	var order []key
	byKey := map[key]*openapi3.Parameter{}
	add := func(ps openapi3.Parameters) error {
		for _, pr := range ps {
			if pr == nil || pr.Value == nil {
				return fmt.Errorf("unresolved parameter reference")
			}
			p := pr.Value
			k := key{p.In, p.Name}
			if _, seen := byKey[k]; !seen {
				order = append(order, k)
			}
			byKey[k] = p
		}
		return nil
	}
	if op.PathItem != nil {
		if err := add(op.PathItem.Parameters); err != nil {
			return nil, fail("%v", err)
		}
	}
	if err := add(o.Parameters); err != nil {
		return nil, fail("%v", err)
	}
	// Deterministic argument naming: locations in this order, the first
	// parameter to claim a name keeps it, later ones get "__<in>".
	locRank := map[string]int{"path": 0, "query": 1, "header": 2, "cookie": 3}
	sort.SliceStable(order, func(i, j int) bool { return locRank[order[i].in] < locRank[order[j].in] })

	conv := schema.NewConverter(schema.Request)
	props := map[string]*jsonschema.Schema{}
	var propOrder []string
	var required []string // required argument names
	taken := map[string]bool{}
	if o.RequestBody != nil {
		taken[request.BodyArg] = true
	}
	tmpl, fixedQuery, queryVars, err := splitPathKey(op.Path)
	if err != nil {
		return nil, fail("%v", err)
	}
	for _, qv := range queryVars {
		// The parameter a name={parameter} pair of the path key names goes
		// in the query under the pair's name, whatever location the spec
		// gave it (path, mostly: the template is in the path key).
		var found *key
		for _, in := range []string{"path", "query"} {
			if k := (key{in, qv.Param}); byKey[k] != nil {
				found = &k
				break
			}
		}
		if found == nil {
			return nil, fail("path %q has {%s} in its query, which is not a declared path or query parameter", op.Path, qv.Param)
		}
		p := byKey[*found]
		if strings.Contains(tmpl, "{"+qv.Param+"}") {
			return nil, fail("path %q has {%s} both in its path and in its query", op.Path, qv.Param)
		}
		if found.in == "query" && p.Name == qv.Name {
			continue // sent as it is
		}
		q := *p
		q.In, q.Name, q.Style, q.Explode, q.AllowReserved = "query", qv.Name, "", nil, false
		nk := key{"query", qv.Name}
		if _, clash := byKey[nk]; clash {
			return nil, fail("path %q sends {%s} as the query parameter %q, which the operation declares too", op.Path, qv.Param, qv.Name)
		}
		i := slices.Index(order, *found)
		order[i] = nk
		delete(byKey, *found)
		byKey[nk] = &q
	}
	legalNames := map[string]bool{} // the spec's parameter names that need no renaming
	for _, k := range order {
		if legalArgName(k.name) {
			legalNames[k.name] = true
		}
	}
	pathIndex := map[string]int{}
	for _, k := range order {
		p := byKey[k]
		if p.In == "path" && !strings.Contains(tmpl, "{"+p.Name+"}") {
			// Nothing in the path would carry it: as an argument it would
			// be demanded (path parameters are required) and then dropped.
			c.log.Warn("parameter left out of the tool: the path template has no {name} for it",
				zap.String("op", label), zap.String("name", p.Name))
			continue
		}
		if p.In == "header" && ignoredHeaders[strings.ToLower(p.Name)] {
			continue
		}
		if p.In == "header" && strings.EqualFold(p.Name, "Cookie") && slices.ContainsFunc(order, func(k key) bool { return k.in == "cookie" }) {
			// The cookie parameters make the Cookie header; this one
			// would be overwritten by them.
			c.log.Warn("parameter left out of the tool: the operation's cookie parameters make the Cookie header",
				zap.String("op", label), zap.String("name", p.Name))
			continue
		}
		if credentialParam(creds, p.In, p.Name) {
			// The configured credential goes there; an argument of the same
			// name would let the agent send its own value first, next to or
			// instead of it.
			c.log.Warn("parameter left out of the tool: a configured upstream credential takes its place",
				zap.String("op", label), zap.String("in", p.In), zap.String("name", p.Name))
			continue
		}
		spec, err := request.NewParamSpec(p, request.Options{
			Nested:       nested,
			AllowSlashes: p.In == "path" && slices.Contains(op.AllowSlashes, p.Name),
		})
		if err != nil {
			return nil, fail("parameter %q in %s: %v", p.Name, p.In, err)
		}
		// Hosts refuse a whole tool list over one illegal property key
		// (Twilio's StartTime<, PHP-style ids[]): such a parameter gets a
		// legal argument name, and its description says what it is sent as.
		// A legal name in the spec keeps it: a renamed one steps aside.
		var arg string
		if legalArgName(p.Name) {
			arg = uniqueArgName(p.Name, p.In, func(a string) bool { return taken[a] })
		} else {
			arg = uniqueArgName(argName(p.Name), p.In, func(a string) bool { return taken[a] || legalNames[a] })
		}
		taken[arg] = true
		var s *jsonschema.Schema
		switch {
		case p.Schema != nil:
			s = conv.Convert(p.Schema)
		case len(p.Content) > 0:
			for _, mt := range p.Content {
				if mt != nil && mt.Schema != nil {
					s = conv.Convert(mt.Schema)
				}
				break
			}
		}
		if s == nil {
			s = &jsonschema.Schema{}
		}
		desc := p.Description
		if arg != p.Name && arg != p.Name+"__"+p.In {
			if desc == "" {
				desc = s.Description
			}
			desc = strings.TrimSpace(fmt.Sprintf("Sent as the %s parameter %q. %s", p.In, p.Name, strings.TrimSpace(desc)))
		}
		s = schema.WithDescription(s, desc, p.Deprecated)
		if p.In == "path" {
			s = request.PathParamSchema(s, spec)
		}
		props[arg] = s
		propOrder = append(propOrder, arg)
		if p.Required || p.In == "path" {
			required = append(required, arg)
		}
		t.plan.Params = append(t.plan.Params, request.Param{Arg: arg, Spec: spec})
		if p.In == "path" {
			pathIndex[p.Name] = len(t.plan.Params) - 1
		}
	}

	segs, err := parsePathTemplate(tmpl, pathIndex)
	if err != nil {
		return nil, fail("%v", err)
	}
	t.plan.Path = segs
	if fixedQuery != "" {
		// Sent before the parameters, like a query in the base URL.
		withQuery := *base
		if withQuery.RawQuery != "" {
			withQuery.RawQuery += "&"
		}
		withQuery.RawQuery += fixedQuery
		base = &withQuery
	}
	t.plan.Base = base.String()

	if o.RequestBody != nil {
		rb := o.RequestBody.Value
		if rb == nil {
			return nil, fail("unresolved request body reference")
		}
		bs, err := request.NewBody(rb, request.Options{Nested: nested})
		if err != nil {
			return nil, fail("request body: %v", err)
		}
		if bs != nil {
			t.plan.Body = bs
			s := request.BodySchema(conv, rb, bs)
			if rb.Description != "" && s.Description == "" {
				s = schema.WithDescription(s, rb.Description, false)
			}
			props[request.BodyArg] = s
			propOrder = append(propOrder, request.BodyArg)
			if rb.Required {
				required = append(required, request.BodyArg)
			}
		}
	}

	root := &jsonschema.Schema{
		Type:                 "object",
		Properties:           props,
		PropertyOrder:        propOrder,
		Required:             required,
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		Defs:                 conv.Defs(),
	}
	if len(props) == 0 {
		root.Properties = nil
	}
	t.repairs = append(slices.Clone(conv.Repairs()), schema.RepairSchema(root, "input")...)
	if c.opts.VerifySchemas {
		if _, err := root.Resolve(&jsonschema.ResolveOptions{}); err != nil {
			return nil, fail("input schema: %v", err)
		}
	}
	inRaw, err := schema.Marshal(root)
	if err != nil {
		return nil, fail("marshaling input schema: %v", err)
	}
	conv.Release() // root and everything in it are dead from here on
	if c.opts.SchemaDetail == SchemaCompact {
		inRaw = compactSchema(inRaw)
	}
	t.input = schema.NewLazy(inRaw)

	var outRaw json.RawMessage
	if c.opts.SchemaDetail != SchemaCompact { // compact lists no output schemas
		e := c.output(o) // outputcache.go
		t.repairs = append(t.repairs, e.repairs...)
		switch {
		case e.raw == nil:
			if e.why != "" {
				c.log.Debug(e.why, zap.String("op", label), e.field)
			}
		case t.shape.keeps():
			outRaw = t.shape.shapeSchema(e.raw) // the schema follows the shaping
			t.output = schema.NewLazy(outRaw)
		default:
			outRaw, t.output = e.raw, e.lazy // shared with the tools of the same output
		}
	}

	t.plan.Accept = acceptHeader(o)
	t.plan.Headers = answerHeaders(o, creds)
	ann, retry := annotations(op)
	t.retry = retry
	title := op.Title
	if title == "" {
		title = strings.TrimSpace(o.Summary)
	}
	ann.Title = title
	t.tags = o.Tags
	t.opID, t.path = o.OperationID, op.Path
	t.pinned, t.allow = op.Pinned, allowOf(op.Allow)
	t.def = &mcp.Tool{
		Name:        toolName(op.Name, o.OperationID, op.Method, op.Path),
		Title:       title,
		Description: c.toolDescription(op),
		Annotations: ann,
		InputSchema: json.RawMessage(inRaw),
	}
	if outRaw != nil {
		t.def.OutputSchema = outRaw
	}
	if err := t.plan.Prepare(); err != nil {
		return nil, fail("%v", err)
	}
	if len(op.RedactAllowKeys) > 0 {
		if err := c.relaxRedaction(t, op.RedactAllowKeys); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// splitPathKey separates what some path keys carry besides the path
// template: a fragment, which real specs use to list several operations
// on one path ("/cookies#formExploded") and which is never sent, and a
// query ("/users/{id}/expire?tempPassword=true", a Swagger 2.0 habit).
// Its literal pairs are sent as fixed query parameters rather than escaped
// into the last path segment, re-escaped like parameter values; a pair
// whose whole value is one template variable ("/alerts?lat={lat}&lon={lon}",
// Weatherbit, Medium, ClickSend, icons8) comes back in templated, the
// variable's parameter to be sent as the query parameter of the pair's
// name. Any other template in the query is an error.
func splitPathKey(key string) (template, query string, templated []queryVar, err error) {
	key, _, _ = strings.Cut(key, "#")
	template, rawQuery, _ := strings.Cut(key, "?")
	var buf []byte
	for pair := range strings.SplitSeq(rawQuery, "&") {
		if pair == "" {
			continue
		}
		rawName, rawValue, _ := strings.Cut(pair, "=")
		if strings.ContainsAny(rawName, "{}") || strings.ContainsAny(rawValue, "{}") {
			v, ok := strings.CutPrefix(rawValue, "{")
			v, ok2 := strings.CutSuffix(v, "}")
			name, err := url.QueryUnescape(rawName)
			if !ok || !ok2 || v == "" || strings.ContainsAny(v, "{}") || err != nil || name == "" || strings.ContainsAny(name, "{}") {
				return "", "", nil, fmt.Errorf("path %q has a templated query string other than name={parameter}", key)
			}
			templated = append(templated, queryVar{Name: name, Param: v})
			continue
		}
		name, err1 := url.QueryUnescape(rawName)
		value, err2 := url.QueryUnescape(rawValue)
		if err1 != nil || err2 != nil || name == "" {
			return "", "", nil, fmt.Errorf("path %q has an invalid query string", key)
		}
		buf = request.AppendQueryPair(buf, name, value)
	}
	return template, string(buf), templated, nil
}

// queryVar is a name={parameter} pair of a path key's query.
type queryVar struct{ Name, Param string }

// parsePathTemplate splits "/a/{x}/b" into escaped literals and parameter
// references. Every {name} must be a declared path parameter.
func parsePathTemplate(path string, params map[string]int) ([]request.Seg, error) {
	var segs []request.Seg
	rest := path
	for rest != "" {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			segs = append(segs, request.Seg{Lit: escapeLiteral(rest), Param: -1})
			break
		}
		if i > 0 {
			segs = append(segs, request.Seg{Lit: escapeLiteral(rest[:i]), Param: -1})
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("path template %q has an unclosed {", path)
		}
		name := rest[i+1 : i+j]
		idx, ok := params[name]
		if !ok {
			return nil, fmt.Errorf("path template %q uses {%s}, which is not a declared path parameter", path, name)
		}
		segs = append(segs, request.Seg{Param: idx})
		rest = rest[i+j+1:]
	}
	return segs, nil
}

func escapeLiteral(s string) string {
	return (&url.URL{Path: s}).EscapedPath()
}

// description is the whitelist override, else summary and description,
// else "METHOD /path".
func description(op whitelist.Operation) string {
	if d := strings.TrimSpace(op.Description); d != "" {
		return d
	}
	sum := strings.TrimSpace(op.Op.Summary)
	desc := strings.TrimSpace(op.Op.Description)
	var d string
	switch {
	case sum != "" && desc != "" && !strings.HasPrefix(desc, sum):
		d = sum + "\n\n" + desc
	case desc != "":
		d = desc
	default:
		d = sum
	}
	if d == "" {
		d = op.Method + " " + op.Path
	}
	if op.Op.Deprecated {
		d = "Deprecated. " + d
	}
	return d
}

// annotations derives hints from the method, then applies whitelist
// overrides. retry reports whether the call may be retried: idempotent
// methods, or an operation whitelisted with idempotentHint: true.
func annotations(op whitelist.Operation) (*mcp.ToolAnnotations, bool) {
	ann := &mcp.ToolAnnotations{}
	f := false
	switch op.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		ann.ReadOnlyHint = true
		ann.IdempotentHint = true
	case http.MethodPut:
		ann.IdempotentHint = true
		ann.DestructiveHint = &f
	case http.MethodDelete:
		ann.IdempotentHint = true
		tr := true
		ann.DestructiveHint = &tr
	default:
		ann.DestructiveHint = &f
	}
	retry := ann.IdempotentHint
	if o := op.Annotations; o != nil {
		if o.ReadOnlyHint != nil {
			ann.ReadOnlyHint = *o.ReadOnlyHint
		}
		if o.DestructiveHint != nil {
			v := *o.DestructiveHint
			ann.DestructiveHint = &v
		}
		if o.IdempotentHint != nil {
			ann.IdempotentHint = *o.IdempotentHint
			retry = *o.IdempotentHint
		}
		if o.OpenWorldHint != nil {
			v := *o.OpenWorldHint
			ann.OpenWorldHint = &v
		}
	}
	if ann.ReadOnlyHint {
		ann.DestructiveHint = nil
	}
	return ann, retry
}

// acceptHeader lists the media types the operation's responses declare, so
// that content negotiation picks what the spec documents.
func acceptHeader(o *openapi3.Operation) string {
	if o.Responses == nil {
		return "application/json, */*;q=0.8"
	}
	seen := map[string]bool{}
	var types []string
	for _, code := range sortedKeys(o.Responses.Map()) {
		r := o.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		for _, mt := range sortedKeys(r.Value.Content) {
			if !seen[mt] && !strings.ContainsAny(mt, ",\r\n") {
				seen[mt] = true
				types = append(types, mt)
			}
		}
	}
	if len(types) == 0 {
		return "application/json, */*;q=0.8"
	}
	if !seen["*/*"] {
		types = append(types, "*/*;q=0.1")
	}
	return strings.Join(types, ", ")
}

// maxAnswerHeaders bounds the response headers a tool shows its agent.
const maxAnswerHeaders = 16

// hiddenAnswerHeaders are response headers never shown to the agent, even
// when the spec documents them: framing and transport (the bridge has
// already acted on them), cookies and authentication (they may carry
// secrets the agent has no use for).
var hiddenAnswerHeaders = map[string]bool{
	"Connection": true, "Content-Encoding": true, "Content-Length": true, "Content-Type": true,
	"Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true, "Authorization": true,
	"Set-Cookie": true, "Set-Cookie2": true, "Cookie": true, "Te": true, "Trailer": true,
	"Transfer-Encoding": true, "Upgrade": true, "Www-Authenticate": true,
}

// answerHeaders are the response headers a successful answer of o shows
// its agent (request.Plan.Headers): those documented for its 2XX and
// default responses (a pagination cursor, a total count, a rate limit's
// remainder, an ETag to send back), and Link, which APIs page with
// whether their spec says so or not (GitHub's does). Never one named like
// a credential header the operation's requests carry (creds: the
// catalog's and its security schemes').
func answerHeaders(o *openapi3.Operation, creds request.Credentials) []string {
	names := map[string]bool{"Link": true}
	if o.Responses != nil {
		for code, r := range o.Responses.Map() {
			if r == nil || r.Value == nil || !(code == "default" || len(code) == 3 && code[0] == '2') {
				continue
			}
			for name := range r.Value.Headers {
				names[http.CanonicalHeaderKey(strings.TrimSpace(name))] = true
			}
		}
	}
	out := make([]string, 0, len(names))
	for _, name := range sortedKeys(names) {
		if name == "" || hiddenAnswerHeaders[name] || strings.ContainsAny(name, " \t\r\n:") || credentialParam(creds, "header", name) {
			continue
		}
		if len(out) == maxAnswerHeaders {
			break
		}
		out = append(out, name)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
