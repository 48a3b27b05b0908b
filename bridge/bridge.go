package bridge

import (
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/sanitizer"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// Credentials are the upstream credentials attached to every request. They
// come from configuration only, are never accepted as tool arguments, and
// are fed to the redactor so they never reach a client or a log.
type Credentials struct {
	// BearerToken is sent as "Authorization: Bearer <token>".
	BearerToken string
	// BasicUser and BasicPassword are sent as HTTP basic auth.
	BasicUser, BasicPassword string
	// Headers are static headers (API keys in a header).
	Headers map[string]string
	// Query are static query parameters (API keys in the query string).
	Query map[string]string
	// Cookies are static cookies (API keys in a cookie).
	Cookies map[string]string
}

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
	// Client sends upstream requests; nil means NewUpstreamClient(UpstreamOptions{}).
	Client Doer
	// Redactor sanitizes every response; nil means the default rules. The
	// credentials are added to it as known secrets either way.
	Redactor *sanitizer.Redactor
	// Rules are used when Redactor is nil.
	Rules sanitizer.Rules
	// Credentials are attached to every upstream request.
	Credentials Credentials
	// Timeout bounds one call (all retries included); 0 means 30s. A
	// whitelist entry's timeout overrides it for its tool.
	Timeout time.Duration
	// MaxResponseBytes bounds an upstream body; 0 means 10 MiB.
	MaxResponseBytes int64
	// MaxOutputSchemaBytes leaves out output schemas larger than this when
	// marshaled (the text result still carries the full JSON); 0 means
	// 16 KiB, a negative value means no limit. Big APIs describe whole object
	// graphs per response: GitHub's output schemas alone weigh 4 MB.
	MaxOutputSchemaBytes int
	// VerifySchemas resolves every input and output schema while building,
	// skipping operations whose input schema does not resolve (tests and
	// "tools --stats" use it). Otherwise validators are resolved on a
	// tool's first call.
	VerifySchemas bool
	// Version is the bridge version, sent in User-Agent and by ping.
	Version string
	// SpecTitle and SpecVersion describe the loaded spec, for ping.
	SpecTitle, SpecVersion string
	// Logger receives structured logs; nil means no logging.
	Logger *zap.Logger
}

// Skipped is an operation that could not become a tool, with the reason.
type Skipped struct {
	Operation string `json:"operation"`
	Reason    string `json:"reason"`
}

// Bridge is an immutable set of prepared tools.
type Bridge struct {
	opts      Options
	log       *zap.Logger
	client    Doer
	redactor  *sanitizer.Redactor
	creds     preparedCredentials
	userAgent string
	base      *url.URL
	tools     []*tool
	skipped   []Skipped
}

// New prepares a tool for every operation. Operations that cannot be
// expressed are reported by Skipped (and logged), never exposed as tools
// that always fail. It returns an error for configuration problems and for
// two operations that end up with the same tool name.
func New(ops []whitelist.Operation, opts Options) (*Bridge, error) {
	b, err := newBridge(opts)
	if err != nil {
		return nil, err
	}
	var errs []error
	built := b.buildAll(ops)
	names := map[string]string{} // tool name → operation
	for i, op := range ops {
		if op.Op == nil {
			continue
		}
		t, err := built[i].tool, built[i].err
		if err != nil {
			var be *buildError
			if errors.As(err, &be) {
				b.skipped = append(b.skipped, Skipped{Operation: be.op, Reason: be.reason})
				b.log.Warn("operation skipped", zap.String("op", be.op), zap.String("reason", be.reason))
				continue
			}
			return nil, err
		}
		if prev, dup := names[t.def.Name]; dup {
			errs = append(errs, fmt.Errorf("tool name %q is used by both %s and %s: set a distinct name for one of them in the whitelist", t.def.Name, prev, t.label))
			continue
		}
		names[t.def.Name] = t.label
		b.tools = append(b.tools, t)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return b, nil
}

// buildResult is one operation's outcome in buildAll.
type buildResult struct {
	tool *tool
	err  error
}

// buildAll prepares every operation, on all cores: building reads the spec
// and writes only each tool's own state, and the order of the results is
// the order of ops, so the outcome does not depend on scheduling.
func (b *Bridge) buildAll(ops []whitelist.Operation) []buildResult {
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
				if i >= len(ops) {
					return
				}
				if ops[i].Op != nil {
					out[i].tool, out[i].err = b.buildTool(ops[i])
				}
			}
		}()
	}
	wg.Wait()
	return out
}

func (b *Bridge) maxOutputSchema() int {
	if b.opts.MaxOutputSchemaBytes == 0 {
		return 16 << 10
	}
	return b.opts.MaxOutputSchemaBytes
}

// newBridge applies defaults and prepares the runtime dependencies shared
// by every tool.
func newBridge(opts Options) (*Bridge, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = 10 << 20
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	b := &Bridge{opts: opts, log: opts.Logger, client: opts.Client}
	if b.log == nil {
		b.log = zap.NewNop()
	}
	if b.client == nil {
		b.client = NewUpstreamClient(UpstreamOptions{Logger: b.log})
	}
	b.userAgent = "mcpbridge/" + opts.Version
	var errs []error
	if opts.BaseURL != "" {
		u, err := ParseBaseURL(opts.BaseURL)
		if err != nil {
			errs = append(errs, err)
		}
		b.base = u
	}
	creds, err := prepareCredentials(opts.Credentials)
	if err != nil {
		errs = append(errs, err)
	}
	b.creds = creds
	b.redactor = opts.Redactor
	rules := opts.Rules
	rules.Secrets = append(append([]string(nil), rules.Secrets...), opts.Credentials.secrets()...)
	if b.redactor == nil || len(opts.Credentials.secrets()) > 0 {
		if b.redactor, err = sanitizer.New(rules); err != nil {
			errs = append(errs, fmt.Errorf("sanitizer rules: %w", err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return b, nil
}

// baseFor picks the base URL of an operation: operation-level servers, then
// path-level servers (when allowed), then Options.BaseURL.
func (b *Bridge) baseFor(op whitelist.Operation) (*url.URL, error) {
	if b.opts.UseOperationServers {
		var servers openapi3.Servers
		if op.Op.Servers != nil && len(*op.Op.Servers) > 0 {
			servers = *op.Op.Servers
		} else if op.PathItem != nil && len(op.PathItem.Servers) > 0 {
			servers = op.PathItem.Servers
		}
		if len(servers) > 0 {
			raw, err := ServerURL(servers, b.opts.ServerVariables, b.opts.SpecLocation)
			if err != nil {
				return nil, fmt.Errorf("operation servers: %w", err)
			}
			return url.Parse(raw)
		}
	}
	if b.base == nil {
		return nil, fmt.Errorf("no upstream base URL: the spec declares no usable server; set --upstream")
	}
	return b.base, nil
}

// Tools returns the tool definitions in registration order, exactly as
// tools/list presents them.
func (b *Bridge) Tools() []*mcp.Tool {
	out := make([]*mcp.Tool, len(b.tools))
	for i, t := range b.tools {
		out[i] = t.def
	}
	return out
}

// Skipped lists the operations that could not become tools.
func (b *Bridge) Skipped() []Skipped { return b.skipped }

// Len is the number of tools.
func (b *Bridge) Len() int { return len(b.tools) }

// Register adds every tool, and the built-in ping tool, to s. Call it
// before s serves any session.
//
// Server.AddTool unmarshals a json.RawMessage schema up to three times to
// check it (GitHub's 1,224 tools: ~100 ms, most of a cached restart). The
// schemas were built as objects and marshaled by the bridge itself, so each
// tool is added with a typed object stub, which AddTool checks by its Type
// alone, and the stored definition then gets its real bytes back. go-sdk
// keeps the *Tool it is given; TestGoldenToolsList fails if that changes.
func (b *Bridge) Register(s *mcp.Server) {
	taken := map[string]bool{}
	stub := &jsonschema.Schema{Type: "object"}
	for _, t := range b.tools {
		in, out := t.def.InputSchema, t.def.OutputSchema
		t.def.InputSchema = stub
		if out != nil {
			t.def.OutputSchema = stub
		}
		s.AddTool(t.def, b.handler(t))
		t.def.InputSchema, t.def.OutputSchema = in, out
		taken[t.def.Name] = true
	}
	AddPing(s, b.PingInfo(), taken)
}

// PingInfo describes this bridge for the ping tool.
func (b *Bridge) PingInfo() PingInfo {
	base := ""
	if b.base != nil {
		base = b.base.String()
	}
	return PingInfo{
		Bridge:      "mcpbridge",
		Version:     b.opts.Version,
		Upstream:    base,
		SpecTitle:   b.opts.SpecTitle,
		SpecVersion: b.opts.SpecVersion,
		Tools:       len(b.tools),
	}
}

// OperationLabel formats "METHOD /path" for messages.
func OperationLabel(method, path string) string {
	return strings.ToUpper(method) + " " + path
}
