package bridge

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge/request"
	"github.com/mcpbridge/mcpbridge/bridge/result"
	"github.com/mcpbridge/mcpbridge/bridge/schema"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
	"github.com/mcpbridge/mcpbridge/sanitizer"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// Credentials are the upstream credentials attached to every request; see
// [request.Credentials].
type Credentials = request.Credentials

// Options configures [New]. Zero values are documented per field.
type Options struct {
	// BaseURL is the upstream base URL every request goes to (scheme, host
	// and base path). Required unless every operation declares its own
	// servers and UseOperationServers is true.
	BaseURL string
	// UseOperationServers lets path-level and operation-level `servers`
	// override BaseURL for their operations. Set it false when the user
	// forced an upstream.
	UseOperationServers bool
	// ServerVariables fill {variables} of operation-level servers (defaults
	// otherwise).
	ServerVariables map[string]string
	// SpecLocation resolves relative operation-level server URLs.
	SpecLocation *url.URL
	// Client sends upstream requests; nil means upstream.New(upstream.Options{}).
	Client Doer
	// Rules build the redactor every answer, error message and log field
	// passes through; the credentials are added to Rules.Secrets.
	Rules sanitizer.Rules
	// Credentials are attached to every upstream request.
	Credentials Credentials
	// Schemes are secrets of the spec's security schemes, by scheme name
	// (components.securitySchemes; Swagger 2.0 securityDefinitions). An
	// operation's requests carry those of the first of its security
	// requirements (the document's when it declares none) whose schemes
	// are all here, in addition to Credentials; they win where both name
	// one header, query parameter or cookie. New fails on a name the spec
	// does not define and on a secret that does not fit its scheme.
	Schemes map[string]SchemeSecret
	// Timeout bounds one call (all retries included); 0 means 30s. A
	// whitelist entry's timeout overrides it for its tool.
	Timeout time.Duration
	// MaxResponseBytes bounds an upstream body; 0 means 10 MiB.
	MaxResponseBytes int64
	// Truncate turns a successful answer over MaxResponseBytes into a valid,
	// truncated result (a JSON array keeps the items that fit, other bodies
	// are cut with a marker) instead of a too_large error.
	Truncate bool
	// MaxArgumentBytes bounds a call's arguments (JSON); 0 means 8 MiB.
	MaxArgumentBytes int64
	// MaxURLBytes bounds the request target (path and query) and each
	// header line a call's arguments make; 0 means
	// request.DefaultMaxURLBytes (8 KiB), a negative value no limit.
	MaxURLBytes int
	// MaxArgumentDepth bounds the nesting of arrays and objects in the
	// arguments; 0 means 64.
	MaxArgumentDepth int
	// NestedStyle is how values that nest (arrays and objects inside
	// arrays and objects, and deepObject arrays) are written in query
	// parameters and in form and multipart fields with a style:
	// request.NestedBrackets ("" too: a[b][0]=x), NestedBracketsEmpty,
	// NestedDots or NestedJSON. A whitelist entry's nestedStyle overrides
	// it for its tools; an unknown value makes New fail.
	NestedStyle request.NestedStyle
	// MaxOutputSchemaBytes leaves out output schemas larger than this when
	// marshaled (the text result still carries the full JSON); 0 means
	// 16 KiB, a negative value means no limit. Big APIs describe whole object
	// graphs per response: GitHub's output schemas alone weigh 4 MB.
	MaxOutputSchemaBytes int
	// OutputSchema is how tools declare output schemas: "tolerant" ("" too)
	// loosens them so that answers which drift from the spec still conform
	// (schema.Tolerant: nothing required, null admitted, no closed
	// objects, value constraints moved to descriptions); "strict" declares
	// them as the spec writes them (repaired, patterns made JavaScript-safe);
	// "off" declares none. In both declaring modes a successful answer that
	// does not conform still gets a structuredContent that does, reduced
	// to its conforming parts or {} (see result.Shaper).
	OutputSchema string
	// VerifySchemas resolves every input and output schema while building,
	// skipping operations whose input schema does not resolve (tests and
	// "tools --stats" use it). Otherwise validators are resolved on a
	// tool's first call.
	VerifySchemas bool
	// MaxDescriptionLength trims tool descriptions longer than this many
	// bytes at a word boundary; 0 means no limit.
	MaxDescriptionLength int
	// SchemaDetail is SchemaFull ("" too) or SchemaCompact (less prose,
	// no output schemas; see SchemaCompact).
	SchemaDetail string
	// Tools is the tool mode: ToolsAll ("" too) lists one tool per
	// operation; ToolsDynamic lists search_operations, describe_operation
	// and call_operation instead; ToolsHybrid lists the pinned operations
	// next to them. Every operation stays callable by name in every mode.
	Tools string
	// Version is the bridge version, sent in User-Agent and by ping.
	Version string
	// SpecTitle and SpecVersion describe the loaded spec, for ping.
	SpecTitle, SpecVersion string
	// Spec is the document the operations were selected from. When set,
	// the catalog serves its whitelisted part as the resource
	// openapi://spec (see Catalog.Spec); nil means no such resource.
	Spec *openapi3.T
	// DeferSpec leaves the reduction of Spec to the first call of
	// Catalog.Spec (or FinishSpec), which the caller can make once it
	// serves: for GitHub's spec with 20 operations it is a quarter of the
	// start. Spec is kept until then and must not change.
	DeferSpec bool
	// Logger receives structured logs; nil means no logging.
	Logger *zap.Logger
}

// Skipped is an operation that could not become a tool, with the reason.
type Skipped struct {
	Operation string `json:"operation"`
	Reason    string `json:"reason"`
}

// Repair is a contradiction of the spec that building resolved instead of
// losing the operation or declaring a schema no value satisfies (see
// schema.RepairSchema and schema.Pattern): Where is a place in the tool's
// input or output schema, What what was wrong and what was done.
type Repair struct {
	Operation string `json:"operation"`
	Where     string `json:"where"`
	What      string `json:"what"`
}

// Doer sends one HTTP request; see [upstream.Doer].
type Doer = upstream.Doer

// Catalog is an immutable set of prepared tools with what calling them
// needs (upstream client, credentials, redactor). A [Runtime] serves one
// catalog at a time and swaps it for another on reload; a catalog is never
// modified once built.
type Catalog struct {
	opts       Options
	log        *zap.Logger
	client     Doer
	redactor   *sanitizer.Redactor
	rules      sanitizer.Rules // redactor's, credentials included: per-tool variants start from them
	shaper     result.Shaper
	creds      *request.Prepared
	schemes    map[string]request.SchemeUse // the configured Options.Schemes, as the spec defines them (while building)
	userAgent  string
	base       *url.URL
	tools      []*Tool // operations, then the built-in tools
	listed     []*Tool // what tools/list shows: per Options.Tools
	byName     map[string]*Tool
	searchDocs []searchDoc           // dynamic modes: the operations, prepared for search
	resources  []*Resource           // whitelist resources and templates, read through their tools
	spec       []byte                // the whitelisted part of Options.Spec, JSON; nil: none
	specMu     sync.Mutex            // guards spec, specDoc and specOps
	specDoc    *openapi3.T           // with Options.DeferSpec: what spec is made of, until it is
	specOps    []whitelist.Operation // (Catalog.Spec)
	skipped    []Skipped
	repairs    []Repair
	degraded   string       // non-empty: the spec could not be loaded; only ping
	outputs    *outputCache // while building: output schemas shared between tools
	toolsList  atomic.Pointer[EncodedList]
}

// EncodedList is a catalog's tools/list "tools" array as some server
// encoded it (bridge/mcpx), kept with the catalog so that a snapshot
// carries it and a restart from that snapshot need not encode it again.
// Names are the listed tools in the array's order. The bytes are opaque
// here: the server that reads them back checks the names, and a snapshot
// is only read by the binary that wrote it.
type EncodedList struct {
	Names []string
	JSON  []byte
}

// SetEncodedList keeps l with the catalog (see [EncodedList]).
func (c *Catalog) SetEncodedList(l *EncodedList) { c.toolsList.Store(l) }

// EncodedList is what SetEncodedList kept, or what the snapshot the
// catalog was restored from carried; nil for none.
func (c *Catalog) EncodedList() *EncodedList { return c.toolsList.Load() }

// New prepares a tool for every operation. Operations that cannot be
// expressed are reported by Skipped (and logged), never exposed as tools
// that always fail. It returns an error for configuration problems and for
// two operations that end up with the same tool name.
func New(ops []whitelist.Operation, opts Options) (*Catalog, error) {
	return NewContext(context.Background(), ops, opts)
}

// NewContext is [New], abandoned when ctx ends (tens of thousands of
// operations take seconds to build): it then returns ctx's cause.
func NewContext(ctx context.Context, ops []whitelist.Operation, opts Options) (*Catalog, error) {
	c, err := newCatalog(opts)
	if err != nil {
		return nil, err
	}
	if err := c.resolveSchemes(opts.Spec); err != nil {
		return nil, err
	}
	built := c.buildAll(ctx, ops)
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	seenRepairs := map[[2]string]bool{}
	for i, op := range ops {
		if op.Op == nil {
			continue
		}
		if err := built[i].err; err != nil {
			var be *buildError
			if errors.As(err, &be) {
				c.skipped = append(c.skipped, Skipped{Operation: be.op, Reason: be.reason})
				c.log.Warn("operation skipped", zap.String("op", be.op), zap.String("reason", be.reason))
				built[i].tool = nil
				continue
			}
			return nil, err
		}
	}
	if err := c.uniqueNames(ops, built); err != nil {
		return nil, err
	}
	for i := range ops {
		if t := built[i].tool; t != nil {
			c.tools = append(c.tools, t)
			c.addRepairs(t, seenRepairs)
		}
	}
	c.warnUnmet(c.tools)
	if err := c.prepareAuth(); err != nil {
		return nil, err
	}
	c.schemes = nil
	c.index()
	switch {
	case opts.DeferSpec && opts.Spec != nil && c.Len() <= maxSpecOperations:
		c.specDoc, c.specOps = opts.Spec, ops
	default:
		c.spec = c.buildSpec(opts.Spec, ops)
	}
	// The parsed document is not needed past this point: a catalog that
	// kept it would keep all of it alive (GitHub's: ~100 MiB of idle RSS).
	c.opts.Spec = nil
	return c, nil
}

// NewDegraded is the catalog of a bridge whose spec could not be loaded:
// only the ping tool, which reports reason.
func NewDegraded(reason string, opts Options) (*Catalog, error) {
	c, err := newCatalog(opts)
	if err != nil {
		return nil, err
	}
	c.degraded = reason
	c.index()
	return c, nil
}

// index adds the built-in tools and the name index, and decides what
// tools/list shows.
func (c *Catalog) index() {
	c.byName = make(map[string]*Tool, len(c.tools)+4)
	ops := c.tools
	for _, t := range ops {
		c.byName[t.def.Name] = t
	}
	var builtins []*Tool
	dynamic := c.opts.Tools == ToolsDynamic || c.opts.Tools == ToolsHybrid
	if dynamic && c.degraded == "" {
		builtins = metaTools(c.byName, ops)
		c.searchDocs = newSearchIndex(ops)
	}
	for _, t := range builtins {
		c.byName[t.def.Name] = t
	}
	p := pingTool(c.byName)
	builtins = append(builtins, p)
	c.byName[p.def.Name] = p
	c.tools = append(c.tools, builtins...)
	switch {
	case !dynamic:
		c.listed = c.tools
	default:
		for _, t := range ops {
			if c.opts.Tools == ToolsHybrid && t.pinned {
				c.listed = append(c.listed, t)
			}
		}
		c.listed = append(c.listed, builtins...)
	}
	c.indexResources()
}

// buildResult is one operation's outcome in buildAll.
type buildResult struct {
	tool *Tool
	err  error
}

// buildAll prepares every operation, on all cores: building reads the spec
// and writes only each tool's own state, and the order of the results is
// the order of ops, so the outcome does not depend on scheduling.
func (c *Catalog) buildAll(ctx context.Context, ops []whitelist.Operation) []buildResult {
	c.outputs = &outputCache{}
	defer func() { c.outputs = nil }()
	out := make([]buildResult, len(ops))
	workers := min(runtime.GOMAXPROCS(0), len(ops))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(ops) || ctx.Err() != nil {
					return
				}
				if ops[i].Op != nil {
					out[i].tool, out[i].err = c.buildTool(ops[i])
				}
			}
		}()
	}
	wg.Wait()
	return out
}

func (c *Catalog) maxOutputSchema() int {
	if c.opts.MaxOutputSchemaBytes == 0 {
		return 16 << 10
	}
	return c.opts.MaxOutputSchemaBytes
}

// newCatalog applies defaults and prepares the dependencies shared by
// every tool.
func newCatalog(opts Options) (*Catalog, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = 10 << 20
	}
	if opts.MaxArgumentBytes <= 0 {
		opts.MaxArgumentBytes = 8 << 20
	}
	if opts.MaxArgumentDepth <= 0 {
		opts.MaxArgumentDepth = 64
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	switch opts.SchemaDetail {
	case "", SchemaFull, SchemaCompact:
	default:
		return nil, fmt.Errorf("schema detail %q: want full or compact", opts.SchemaDetail)
	}
	switch opts.Tools {
	case "", ToolsAll, ToolsDynamic, ToolsHybrid:
	default:
		return nil, fmt.Errorf("tool mode %q: want all, dynamic or hybrid", opts.Tools)
	}
	if !schema.ValidOutputMode(opts.OutputSchema) {
		return nil, fmt.Errorf("output schema mode %q: want tolerant, strict or off", opts.OutputSchema)
	}
	c := &Catalog{opts: opts, log: opts.Logger, client: opts.Client}
	if c.log == nil {
		c.log = zap.NewNop()
	}
	if c.client == nil {
		c.client = upstream.New(upstream.Options{Logger: c.log})
	}
	c.userAgent = "mcpbridge/" + opts.Version
	var errs []error
	if opts.BaseURL != "" {
		u, err := request.ParseBaseURL(opts.BaseURL)
		if err != nil {
			errs = append(errs, err)
		}
		c.base = u
	}
	creds, err := opts.Credentials.Prepare()
	if err != nil {
		errs = append(errs, err)
	}
	c.creds = creds
	rules := opts.Rules
	rules.Secrets = append(append([]string(nil), rules.Secrets...), opts.Credentials.Secrets()...)
	for _, name := range slices.Sorted(maps.Keys(opts.Schemes)) {
		rules.Secrets = append(rules.Secrets, opts.Schemes[name].Secrets()...)
	}
	c.rules = rules
	if c.redactor, err = sanitizer.New(rules); err != nil {
		errs = append(errs, fmt.Errorf("sanitizer rules: %w", err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c.shaper = result.Shaper{Redactor: c.redactor, Log: c.log}
	// The configured credentials, and the secrets given with Rules (the
	// OAuth2 client secret, whose grant's tokens every request carries,
	// and keys in the upstream URL's query), as baseFor counts them.
	if c.base != nil && c.base.Scheme == "http" && len(c.rules.Secrets) > 0 && !loopback(c.base.Hostname()) {
		c.log.Warn("upstream credentials will travel unencrypted: the upstream URL is plain http on a non-loopback host; use https",
			zap.String("host", c.base.Host))
	}
	return c, nil
}

// baseFor picks the base URL of an operation: operation-level servers, then
// path-level servers (when allowed), then Options.BaseURL.
func (c *Catalog) baseFor(op whitelist.Operation) (*url.URL, error) {
	if c.opts.UseOperationServers {
		var servers openapi3.Servers
		if op.Op.Servers != nil && len(*op.Op.Servers) > 0 {
			servers = *op.Op.Servers
		} else if op.PathItem != nil && len(op.PathItem.Servers) > 0 {
			servers = op.PathItem.Servers
		}
		if len(servers) > 0 {
			raw, err := request.ServerURL(servers, c.opts.ServerVariables, c.opts.SpecLocation)
			if err != nil {
				return nil, fmt.Errorf("operation servers: %w", err)
			}
			u, err := url.Parse(raw)
			if err != nil {
				return nil, fmt.Errorf("operation servers: %w", err)
			}
			// Credentials go to one origin only: an operation served
			// elsewhere would carry them to a host the operator never
			// named (a spec can point anywhere).
			if c.base != nil && len(c.rules.Secrets) > 0 && origin(u) != origin(c.base) { // configured credentials and the OAuth2 client secret
				return nil, fmt.Errorf("its servers are on %s, not the upstream's origin %s, and upstream credentials would travel there: set --upstream to send every operation to one origin, or bridge that origin separately", origin(u), origin(c.base))
			}
			return u, nil
		}
	}
	if c.base == nil {
		return nil, fmt.Errorf("no upstream base URL: the spec declares no usable server; set --upstream")
	}
	return c.base, nil
}

// origin is u's scheme://host:port, with the scheme's default port
// written out, for comparing where requests go.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// Tools returns every tool: the operations, then the built-in tools.
func (c *Catalog) Tools() []*Tool { return c.tools }

// Listed returns the tools tools/list shows, in order: every tool in the
// default mode; the pinned operations and the built-ins in dynamic and
// hybrid mode.
func (c *Catalog) Listed() []*Tool { return c.listed }

// Defs returns the tool definitions in tools/list order. They are shared:
// never modify them.
func (c *Catalog) Defs() []*mcp.Tool {
	out := make([]*mcp.Tool, len(c.tools))
	for i, t := range c.tools {
		out[i] = t.def
	}
	return out
}

// Lookup returns the tool named name.
func (c *Catalog) Lookup(name string) (*Tool, bool) {
	t, ok := c.byName[name]
	return t, ok
}

// Skipped lists the operations that could not become tools.
func (c *Catalog) Skipped() []Skipped { return c.skipped }

// Repairs lists the contradictions of the spec resolved while building,
// per operation, in operation order.
func (c *Catalog) Repairs() []Repair { return c.repairs }

// addRepairs records t's repairs. Each distinct one (seen holds Where and
// What) is logged once at WARN: a shared component repeats its defect in
// every operation that uses it.
func (c *Catalog) addRepairs(t *Tool, seen map[[2]string]bool) {
	for _, r := range t.repairs {
		if k := [2]string{r.Where, r.What}; !seen[k] {
			seen[k] = true
			c.log.Warn("spec repaired", zap.String("op", t.plan.Label), zap.String("where", r.Where), zap.String("what", r.What))
		}
		c.repairs = append(c.repairs, Repair{Operation: t.plan.Label, Where: r.Where, What: r.What})
	}
	t.repairs = nil
}

// Len is the number of operation tools (built-ins not counted).
func (c *Catalog) Len() int {
	n := 0
	for _, t := range c.tools {
		if t.builtin == notBuiltin {
			n++
		}
	}
	return n
}

// Degraded is why the catalog serves only ping ("" when it is not
// degraded).
func (c *Catalog) Degraded() string { return c.degraded }

// HasAccessLists reports whether any tool has an access list (whitelist
// allow), so that listing must be filtered per caller.
func (c *Catalog) HasAccessLists() bool {
	for _, t := range c.tools {
		if t.allow != nil {
			return true
		}
	}
	return false
}

// Redactor is the sanitizer every answer of this catalog passes through.
func (c *Catalog) Redactor() *sanitizer.Redactor { return c.redactor }

// MaxResponseBytes is the upstream body limit (Options.MaxResponseBytes).
func (c *Catalog) MaxResponseBytes() int64 { return c.opts.MaxResponseBytes }

// PingInfo describes this catalog for the ping tool.
func (c *Catalog) PingInfo() PingInfo {
	base := ""
	if c.base != nil {
		base = c.base.String()
	}
	return PingInfo{
		Bridge:      "mcpbridge",
		Version:     c.opts.Version,
		Upstream:    base,
		SpecTitle:   c.opts.SpecTitle,
		SpecVersion: c.opts.SpecVersion,
		Tools:       c.Len(),
		Degraded:    c.degraded != "",
		Reason:      c.degraded,
	}
}

// OperationLabel formats "METHOD /path" for messages.
func OperationLabel(method, path string) string {
	return strings.ToUpper(method) + " " + path
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
