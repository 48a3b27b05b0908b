// Package mcpx exposes a [bridge.Runtime] as MCP tools on a go-sdk server
// and keeps the server's tool list equal to the runtime's catalog: on every
// swap it adds, replaces and removes tools by difference (go-sdk then sends
// notifications/tools/list_changed to every session), and a swap that
// changes nothing notifies nobody.
//
// Every tool handler is the same small function: it hands the call, with
// the caller's identity and a progress reporter, to [bridge.Runtime.Call].
// The handler looks nothing up itself, so a handler registered for an old
// catalog serves the new one.
//
// What a session receives is fitted to the protocol revision it negotiated:
// call results (resultshape.go) and the tools/list result (listshape.go),
// always as copies of the definitions every session shares.
package mcpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	oteltrace "go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/transport/reqctx"
)

// pageSize puts every tool on one page of tools/list: many clients never
// follow nextCursor, and a reload may grow the list past any fixed size.
const pageSize = 1 << 20

// Options configures [New]. The zero value is usable.
type Options struct {
	// Version is the bridge version in the server's implementation info.
	Version string
	// Title is the implementation title ("" means none).
	Title string
	// Logger receives go-sdk's logs (nil: none).
	Logger *slog.Logger
	// Log receives the bridge's own logs (nil: none).
	Log *zap.Logger
	// ResultText says when a result with structuredContent also carries
	// the JSON as text: [TextAlways] ("" too), [TextKnown] or [TextAuto].
	ResultText string
	// StructuredClients are the client names (clientInfo.name) that
	// [TextKnown] sends no duplicate text block; nil means
	// [DefaultStructuredClients].
	StructuredClients []string
	// ContentClients are the client names (clientInfo.name) of hosts that
	// show their model a result's content and never its structuredContent:
	// in [TextKnown] and [TextAuto] modes they are listed the tools without
	// output schemas and get every answer as text alone. nil means
	// [DefaultContentClients].
	ContentClients []string
}

// Server is a go-sdk server whose tools follow a runtime's catalog.
type Server struct {
	rt         *bridge.Runtime
	srv        *mcp.Server
	log        *zap.Logger
	resultText string
	scClients  []string // TextKnown: clients that read structuredContent only
	ccClients  []string // TextKnown, TextAuto: clients that read content only

	// swap is held by Sync while it changes go-sdk's tools one by one,
	// and for reading by every tools/list (filterList): a list shows the
	// old set or the new one, never a mix.
	swap sync.RWMutex

	mu   sync.Mutex
	reg  map[string]*bridge.Tool // what the server lists now
	defs map[string]*mcp.Tool    // the definitions registered for them with go-sdk

	lists listCache // the encoded tools/list arrays (listcache.go)

	res resourceReg // the resources it lists now (resources.go)

	specs specViews // openapi://spec as callers with access lists read it (specviews.go)
}

// New builds the MCP server for rt and registers the current catalog's
// tools; later swaps of rt are applied as they happen.
func New(rt *bridge.Runtime, opts Options) *Server {
	impl := &mcp.Implementation{Name: "mcpbridge", Version: opts.Version, Title: opts.Title}
	if impl.Version == "" {
		impl.Version = "dev"
	}
	s := &Server{rt: rt, log: opts.Log, reg: map[string]*bridge.Tool{}, defs: map[string]*mcp.Tool{}, resultText: opts.ResultText}
	if s.resultText == TextKnown {
		s.scClients = opts.StructuredClients
		if s.scClients == nil {
			s.scClients = DefaultStructuredClients
		}
	}
	if s.resultText == TextKnown || s.resultText == TextAuto {
		s.ccClients = opts.ContentClients
		if s.ccClients == nil {
			s.ccClients = DefaultContentClients
		}
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	s.srv = mcp.NewServer(impl, &mcp.ServerOptions{
		Logger:   opts.Logger,
		PageSize: pageSize,
		// Resource template variables (resources.go); the capability is
		// declared only while a template exists (filterResources).
		CompletionHandler: s.complete,
		// With access lists, lists and reads depend on the caller: no
		// intermediary may serve one caller's answer to another.
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			if s.rt.Catalog().HasAccessLists() {
				c.CacheScope = cachePrivate
			}
		},
		// Empty prompts and resources are declared because go-sdk answers
		// prompts/list and resources/list anyway, and discovery must say so.
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
			Logging:   &mcp.LoggingCapabilities{},
		},
	})
	// encodeCall is outermost, so that the others see go-sdk's result
	// types (resultjson.go); shapeList then fits to the client's revision
	// the list filterList left (listshape.go).
	s.srv.AddReceivingMiddleware(s.encodeCall, s.shapeList, s.filterList, s.filterResources, checkLogLevel, refuseReinitialize, recordNegotiated)
	s.registerInitial(rt.Catalog())
	s.syncResources(rt.Catalog())
	rt.OnSwap(func(_, cur *bridge.Catalog) { s.Sync(cur) })
	return s
}

// MCP is the go-sdk server, for the transports.
func (s *Server) MCP() *mcp.Server { return s.srv }

// registerInitial adds every tool before the server has any session.
//
// Server.AddTool unmarshals a json.RawMessage schema up to three times to
// check it (GitHub's 1,224 tools: ~100 ms, most of a cached restart). The
// schemas were built as objects and marshaled by the bridge itself, so each
// tool is added as a copy holding a typed object stub, which AddTool checks
// by its Type alone, and the copy then gets its real bytes back. That is
// safe only because no session exists yet to read the copy; later changes go
// through Sync, which hands go-sdk finished copies and never touches them
// again.
//
// go-sdk 1.8 then still marshals the stub and decodes it again, looking for
// x-mcp-header annotations (validateParamHeaderAnnotations), and each
// decode allocates and clears a 32 KB buffer: GitHub's 1,224 tools, 39 MB
// and ~14% of a cached restart's CPU. A stub that cannot be marshaled (it
// sets both $defs and definitions, which jsonschema-go refuses) ends that
// walk at its first step: go-sdk reads a schema it cannot marshal as one
// without annotations. The bridge never writes x-mcp-header, so nothing is
// skipped that could be found. Should a go-sdk refuse such a stub
// (AddTool panics), the plain stub is used from then on.
func (s *Server) registerInitial(cat *bridge.Catalog) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stub := &jsonschema.Schema{Type: "object"}
	quick := &jsonschema.Schema{Type: "object", Defs: map[string]*jsonschema.Schema{}, Definitions: map[string]*jsonschema.Schema{}}
	for _, t := range cat.Listed() {
		def := *t.Def()
		in, out := def.InputSchema, def.OutputSchema
		if quick != nil && !s.addStubbed(&def, quick) {
			quick = nil
		}
		if quick == nil {
			def.InputSchema = stub
			if out != nil {
				def.OutputSchema = stub
			}
			s.srv.AddTool(&def, s.handler(def.Name))
		}
		def.InputSchema, def.OutputSchema = in, out
		s.reg[def.Name] = t
		s.defs[def.Name] = &def
	}
	s.seedList(cat)
}

// addStubbed adds def with stub for its schemas, and reports false,
// having added nothing, when AddTool refuses it.
func (s *Server) addStubbed(def *mcp.Tool, stub *jsonschema.Schema) (ok bool) {
	out := def.OutputSchema
	def.InputSchema = stub
	if out != nil {
		def.OutputSchema = stub
	}
	defer func() {
		if r := recover(); r != nil {
			s.log.Debug("go-sdk refused the quick schema stub; using the plain one", zap.Any("panic", r))
			ok = false
		}
	}()
	s.srv.AddTool(def, s.handler(def.Name))
	return true
}

// Sync makes the server list exactly cat's listed tools: new and changed ones
// (in their definition or in who may see them) are
// added (a copy of their definition), vanished ones removed; unchanged ones
// are left alone. It reports the counts. go-sdk debounces the resulting
// list_changed notifications into one per burst.
func (s *Server) Sync(cat *bridge.Catalog) (added, changed, removed int) {
	s.syncResources(cat) // resources and templates follow the same way
	s.swap.Lock()
	defer s.swap.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]*bridge.Tool, len(cat.Listed()))
	for _, t := range cat.Listed() {
		next[t.Name()] = t
		prev, ok := s.reg[t.Name()]
		switch {
		case !ok:
			added++
		case bridge.SameDefinition(prev, t) && bridge.SameAccess(prev, t):
			continue
		default:
			changed++
		}
		def := *t.Def()
		s.srv.AddTool(&def, s.handler(def.Name))
		s.defs[def.Name] = &def
	}
	var gone []string
	for name := range s.reg {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveTools(gone...)
		for _, name := range gone {
			delete(s.defs, name)
		}
	}
	removed = len(gone)
	s.reg = next
	if added+changed+removed > 0 {
		s.log.Info("tool list changed", zap.Int("added", added), zap.Int("changed", changed), zap.Int("removed", removed), zap.Int("tools", len(next)))
	}
	return added, changed, removed
}

// cachePrivate is the cache scope of an answer only its caller may be
// served.
const cachePrivate = "private"

// filterList hides from a caller's tools/list the tools whose whitelist
// access list does not name it (calling them is refused by bridge.Access
// too).
func (s *Server) filterList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/list" {
			return next(ctx, method, req)
		}
		res, err := func() (mcp.Result, error) {
			s.swap.RLock() // not while Sync is half-way (Server.swap)
			defer s.swap.RUnlock()
			return next(ctx, method, req)
		}()
		cat := s.rt.Catalog()
		if err != nil || !cat.HasAccessLists() {
			return res, err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return res, nil
		}
		id := bridge.Local
		if extra := req.GetExtra(); extra != nil && extra.Header != nil {
			id = identity(extra)
		}
		out := &mcp.ListToolsResult{NextCursor: lr.NextCursor, Meta: lr.Meta, Cacheable: mcp.Cacheable{TTLMs: lr.TTLMs, CacheScope: cachePrivate}}
		for _, def := range lr.Tools {
			if t, ok := cat.Lookup(def.Name); !ok || t.Allowed(id) {
				out.Tools = append(out.Tools, def)
			}
		}
		if out.Tools == nil {
			out.Tools = []*mcp.Tool{}
		}
		return out, nil
	}
}

// handler is the go-sdk handler of the tool called name.
func (s *Server) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		c := &bridge.Call{Tool: name, Caller: bridge.Local, Transport: "stdio"}
		var version, client string
		if req != nil {
			version, client = req.ProtocolVersion(), s.callerOf(req)
			if req.Params != nil {
				c.Args = req.Params.Arguments
			}
			if req.Extra != nil && req.Extra.Header != nil {
				c.Transport = "http"
				c.Caller = identity(req.Extra)
			}
			if r := newReporter(req, s.log); r != nil {
				c.Progress = r
			}
			c.Unstructured = s.takesText(version, client)
			ctx = traceContext(ctx, req)
		}
		// A stateless HTTP call ends with its POST, whatever the revision,
		// a stateful one with its session (transport/reqctx): a client that
		// went away, or deleted its session, frees its slot.
		ctx, release := reqctx.Bind(ctx)
		defer release()
		// An error here is a protocol error: a tool listed a moment ago and
		// removed by a reload since (bridge.ErrUnknownTool), or a bug.
		out, err := s.rt.Call(ctx, c)
		if err != nil {
			if errors.Is(err, bridge.ErrUnknownTool) {
				// The error go-sdk gives a name it does not know: a plain
				// error would go out with code 0.
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
			}
			return nil, err
		}
		if out.Kind == bridge.Denied && c.Tool == name {
			// A tool the caller's access list hides is as unknown to it as
			// a missing one, in go-sdk's words (the REST facade answers 404
			// alike); the denial still went through metrics and the log.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
		}
		if req != nil {
			s.adapt(version, client, out.Result)
		}
		return out.Result, nil
	}
}

// traceContext returns ctx with the client's W3C trace context, so that the
// call's span (when tracing is on) is a child of the client's: traceparent
// and tracestate from params._meta, where MCP clients put them for this
// call, else from the HTTP request's headers (an instrumented HTTP client).
// Without a well-formed traceparent in either, ctx is returned as is.
func traceContext(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	tc := propagation.TraceContext{}
	if req.Params != nil {
		if tp, ok := req.Params.Meta["traceparent"].(string); ok && tp != "" {
			carrier := propagation.MapCarrier{"traceparent": tp}
			if ts, ok := req.Params.Meta["tracestate"].(string); ok {
				carrier["tracestate"] = ts
			}
			out := tc.Extract(ctx, carrier)
			if !oteltrace.SpanContextFromContext(out).Equal(oteltrace.SpanContextFromContext(ctx)) {
				return out
			}
		}
	}
	if req.Extra != nil && req.Extra.Header.Get("traceparent") != "" {
		return tc.Extract(ctx, propagation.HeaderCarrier(req.Extra.Header))
	}
	return ctx
}

// identity is the caller transport's auth established for an HTTP request.
func identity(extra *mcp.RequestExtra) *bridge.Identity {
	// The remote header is set by the HTTP transport from the connection,
	// never forwarded from a client.
	return IdentityOf(extra.TokenInfo, extra.Header.Get("X-Mcpbridge-Remote"))
}

// IdentityOf is the caller the HTTP transport authenticated (ti; nil when
// auth is off), with remote as its address when the token does not carry
// one. The REST facade uses it too.
func IdentityOf(ti *auth.TokenInfo, remote string) *bridge.Identity {
	id := &bridge.Identity{}
	if ti != nil {
		id.ID = ti.UserID
		id.Scopes = ti.Scopes
		if sub, ok := ti.Extra["sub"].(string); ok && strings.HasPrefix(ti.UserID, "jwt:") {
			// A JWT caller's subject, whole (it may hold '|').
			id.Subject = sub
		}
		if r, ok := ti.Extra["remote"].(string); ok {
			id.Remote = r
		}
	}
	if id.Remote == "" {
		id.Remote = remote
	}
	return id
}

// ListTools asks srv for tools/list over an in-memory session, so the
// result is exactly what a client receives (the tools command, tests).
func ListTools(ctx context.Context, srv *mcp.Server, version string) ([]*mcp.Tool, error) {
	// Pipes rather than mcp.NewInMemoryTransports: those cap a message at
	// go-sdk's 16 MiB line limit, and a big API's tools/list can exceed it
	// (DocuSign's 402 operations do).
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ct := &mcp.IOTransport{Reader: cr, Writer: cw, MaxLineLength: -1}
	st := &mcp.IOTransport{Reader: sr, Writer: sw, MaxLineLength: -1}
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting in-memory session: %w", err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpbridge-tools", Version: version}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting in-memory client: %w", err)
	}
	defer cs.Close()
	out := []*mcp.Tool{}
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		out = append(out, t)
	}
	return out, nil
}

// logLevels are the levels logging/setLevel takes (RFC 5424's, as MCP
// names them).
var logLevels = map[mcp.LoggingLevel]bool{
	"debug": true, "info": true, "notice": true, "warning": true,
	"error": true, "critical": true, "alert": true, "emergency": true,
}

// refuseReinitialize refuses an initialize on a session already
// initialized as an invalid request: go-sdk refuses it with error code 0.
func refuseReinitialize(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss.InitializeParams() != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: the session is already initialized (a second initialize)"}
			}
		}
		return next(ctx, method, req)
	}
}

// firstModernVersion is the first revision without the initialize
// handshake: an initialize always negotiates a revision before it.
const firstModernVersion = "2026-07-28"

// recordNegotiated makes the version an initialize asks for the version it
// negotiates, before go-sdk stores it as the session's InitializeParams.
//
// go-sdk answers an initialize asking for a revision it cannot speak through
// the handshake (2026-07-28 and later, or any version it does not know:
// "2099-01-01", "1.0", "") with the latest legacy revision, as the spec says,
// but then keeps deciding what the session is served from the version asked
// for (go-sdk issue #1258). A client that asked for 2026-07-28 or a future
// version over stdio, stateful HTTP or legacy SSE, and agreed to 2025-11-25,
// was sent no notifications/tools/list_changed or resources/list_changed
// after a reload (go-sdk counts it as a session that must subscribe first,
// which 2025-11-25 cannot), and results carried 2026's resultType; one that
// asked for an unknown older-looking version ("2025-04-01") was served the
// 2025-03-26 shape (no outputSchema, no structuredContent) on a 2025-11-25
// session. The rule below is go-sdk's negotiatedVersion: the version asked
// for when the server supports it and it predates 2026-07-28, else the
// newest such version the server supports.
func recordNegotiated(next mcp.MethodHandler) mcp.MethodHandler {
	supported := mcp.SupportedProtocolVersions() // newest first
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			// Only the first initialize: a second one is refused, and must
			// not change what the session negotiated.
			p, ok := req.GetParams().(*mcp.InitializeParams)
			if ss, isSS := req.GetSession().(*mcp.ServerSession); ok && p != nil && isSS && ss.InitializeParams() == nil {
				p.ProtocolVersion = negotiate(p.ProtocolVersion, supported)
			}
		}
		return next(ctx, method, req)
	}
}

// negotiate is the revision an initialize asking for asked negotiates
// among supported (newest first).
func negotiate(asked string, supported []string) string {
	if asked < firstModernVersion && slices.Contains(supported, asked) {
		return asked
	}
	for _, v := range supported {
		if v < firstModernVersion {
			return v
		}
	}
	return asked
}

// checkLogLevel refuses a logging/setLevel without one of the eight levels
// (invalid params, as MCP's logging utility says): go-sdk would store any
// string, and "bogus" then let every message through.
func checkLogLevel(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "logging/setLevel" {
			var level mcp.LoggingLevel
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil {
				level = p.Level
			}
			if !logLevels[level] {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid log level %q: use one of debug, info, notice, warning, error, critical, alert, emergency", level)}
			}
		}
		return next(ctx, method, req)
	}
}
