package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/limit"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/bridge/observe"
	"github.com/mcpbridge/mcpbridge/bridge/quota"
	"github.com/mcpbridge/mcpbridge/bridge/rest"
	"github.com/mcpbridge/mcpbridge/bridge/trace"
	"github.com/mcpbridge/mcpbridge/cmd/mcpbridge/internal/earlysig"
	"github.com/mcpbridge/mcpbridge/cmd/mcpbridge/internal/hugepages"
	"github.com/mcpbridge/mcpbridge/sanitizer"
	"github.com/mcpbridge/mcpbridge/sanitizer/zapredact"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/transport"
)

// version is the bridge version, set at link time with
// -ldflags "-X main.version=v1.2.3"; "dev" otherwise.
var version = "dev"

// run is the whole program; main only adds signals and the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (err error) {
	// The error main prints passes through the sanitizer: a startup error
	// may quote a URL or a header that holds a credential.
	var red *sanitizer.Redactor
	defer func() {
		if err != nil {
			if red == nil {
				red, _ = sanitizer.New(sanitizer.Rules{})
			}
			err = &redactedError{msg: red.RedactString(err.Error()), err: err}
		}
	}()
	if handled, err := dispatch(ctx, args, stdout, stderr); handled { // cli.go
		return err
	}
	cmd := args[0]
	fs, positional, err := parseCommand(cmd, args[1:], stdout)
	if errors.Is(err, errHelpShown) {
		return nil
	}
	if err != nil {
		return err
	}
	cfg, err := loadConfig(fs, os.Environ())
	if err != nil {
		return err
	}
	if err := cfg.Validate(cmd); err != nil {
		return err
	}
	red = cfg.logRedactor()
	log, usageLog, notes, flushLog, err := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return err
	}
	// Every log line passes through the sanitizer, whatever the call site.
	redacted := zap.WrapCore(func(c zapcore.Core) zapcore.Core { return zapredact.Wrap(c, red) })
	log, usageLog = log.WithOptions(redacted), usageLog.WithOptions(redacted)
	// The standard library's logger too: net/http writes through it what
	// an upstream sent unasked on an idle connection ("Unsolicited
	// response ... starting with <its bytes>"), and libraries may; those
	// lines now pass the sanitizer like every other.
	if undo, err := zap.RedirectStdLogAt(log.Named("go"), zapcore.WarnLevel); err == nil {
		defer undo()
	}
	defer flushLog() //nolint:errcheck // stderr errors are not actionable; writes the waiting usage records
	for _, u := range unknownEnv(fs, os.Environ()) {
		// Named, never its value (it may be a credential).
		log.Warn("environment variable ignored: it names no setting", zap.String("variable", u[0]), zap.String("did_you_mean", u[1]))
	}
	if (cmd == "serve" || cmd == "demo") && cfg.Transport == "stdio" && len(cfg.httpOnly) > 0 {
		log.Warn("settings ignored: they apply to --transport http only", zap.Strings("settings", cfg.httpOnly))
	}
	a := &app{cfg: cfg, log: log, usageLog: usageLog, stdin: stdin, stdout: stdout, stderr: notes}
	if _, set := os.LookupEnv("GOGC"); !set {
		// Provisioning allocates several times the spec's size in
		// short-lived trees: twice the default headroom saves collections
		// there (GitHub's first start: 0.2-0.3 s of CPU). Serve builds the
		// tools at GOGC 100 (build.go) and serving goes back to Go's
		// default (serveBuilt): with 1 MiB answers at 32 in flight
		// the doubled headroom is a third of the peak RSS (749 → 482 MiB
		// over stdio at GOGC 100), and at small calls the difference
		// measured as noise.
		debug.SetGCPercent(200)
		a.restoreGC = true
	}
	defer func() {
		for _, c := range a.closers {
			_ = c() // closing a client at exit: nothing left to report to
		}
	}()
	if cmd == "serve" || cmd == "demo" {
		// SIGHUP means "reload" from the first moment: a SIGHUP while the
		// process initialises or the spec is still being fetched must not
		// kill it (its default action); it is acted on once serving
		// starts. earlysig has caught it since package initialisation;
		// Notify again for a second run in one process (tests).
		a.hup = earlysig.Hup()
		signal.Notify(a.hup, syscall.SIGHUP)
		defer signal.Stop(a.hup)
		// A host that closes its end of stderr loses the logs, not the
		// server: with SIGPIPE handled, a write to a broken stderr (or
		// stdout) fails with EPIPE instead of killing the process.
		pipe := make(chan os.Signal, 1)
		signal.Notify(pipe, syscall.SIGPIPE)
		defer signal.Stop(pipe)
	} else {
		earlysig.Release() // SIGHUP ends a one-shot command, as by default
	}
	if cfg.OTel && (cmd == "serve" || cmd == "demo" || cmd == "call") {
		stop, err := a.startTracing(ctx)
		if err != nil {
			return err
		}
		defer stop()
	}
	switch cmd {
	case "tools":
		return a.tools(ctx)
	case "demo":
		return a.demo(ctx)
	case "call":
		return a.call(ctx, positional[0])
	case "validate":
		return a.validate(ctx)
	case "init":
		return a.initWhitelist(ctx)
	default:
		return a.serve(ctx)
	}
}

// app wires configuration into the packages.
type app struct {
	cfg *Config
	log *zap.Logger
	// usageLog writes the per-call usage records (observe.Usage); a record
	// waits up to 50 ms, unencoded, and log's next line writes it first
	// (logSink in log.go).
	usageLog *zap.Logger
	stdin    io.Reader
	stdout   io.Writer
	stderr   io.Writer // the demo's note to a person, in line with the log (newLogger's notes)

	// specData and whitelistData, when set, are used instead of cfg.Spec
	// and cfg.Whitelist (the embedded demo).
	specData, whitelistData []byte

	clientOnce sync.Once
	client     bridge.Doer // see upstreamClient

	verify bool // validate: resolve every schema while building
	// restoreGC: run raised GOGC for provisioning; serving restores Go's
	// default.
	restoreGC bool
	// deferValidation has the first provisioning of serve validate the
	// spec, reduce it to openapi://spec and store the cache after the
	// tools are served, not before (built.later): the findings are only
	// warnings, and the three are most of a cold start besides parsing
	// (GitHub: 0.25 s of validation; with 20 operations, a quarter of the
	// start is openapi://spec). Reloads do all three before they swap, as
	// the commands do.
	deferValidation bool
	builds          buildWarnings                   // the last build's warnings, not repeated by the next
	hup             chan os.Signal                  // SIGHUP, registered before provisioning (serve, demo)
	closers         []func() error                  // run when run returns (the Redis client)
	metrics         *observe.Metrics                // nil until newRuntime
	metricsPtr      atomic.Pointer[observe.Metrics] // metrics, for the sanitizer's counter
	tracing         *trace.Provider                 // nil unless tracing is on (--otel)
	rt              *bridge.Runtime                 // nil until newRuntime
}

// retries maps the user's count (0 disables) to UpstreamOptions (0 means
// the default there).
func retries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// middlewares is the call chain, outermost first: metrics (so refusals are
// counted and durations include queueing), the trace span (with --otel; it
// covers quota and limit refusals and the queueing too, and puts the span in
// the context the upstream request carries), the usage record, the quota,
// per-tool access (whitelist allow lists), then the concurrency limit.
func (a *app) middlewares() ([]bridge.Middleware, error) {
	m, err := observe.NewMetrics(prometheus.NewRegistry(), version)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	a.metrics = m
	a.metricsPtr.Store(m)
	uo := observe.UsageOptions{LogArguments: a.cfg.LogArguments}
	if uo.LogArguments {
		uo.Redact = a.redactArguments
	}
	maxQueue := a.cfg.MaxQueue
	if maxQueue == 0 {
		maxQueue = -1 // limit.Options: negative is no queue
	}
	mws := []bridge.Middleware{m.Middleware(), observe.Usage(a.usageLog, uo)}
	if a.tracing != nil {
		mws = slices.Insert(mws, 1, trace.Middleware(a.tracing.TracerProvider()))
	}
	qm, err := a.quotaMiddleware()
	if err != nil {
		return nil, err
	}
	// Access before quota: a tool hidden from the caller is refused as an
	// unknown one whatever the caller's quota (quota first, an exhausted
	// caller would learn which hidden names exist by the refusal, and the
	// metrics would count them by name).
	mws = append(mws, bridge.Access())
	if qm != nil {
		mws = append(mws, qm)
	}
	mws = append(mws, limit.Concurrency(limit.Options{MaxInFlight: a.cfg.MaxConcurrency, MaxQueue: maxQueue}))
	return mws, nil
}

// quotaMiddleware is the per-caller quota, in Redis with --redis-url and in
// this process otherwise; nil when no quota is configured.
func (a *app) quotaMiddleware() (bridge.Middleware, error) {
	p, err := a.cfg.quotaPolicy()
	if err != nil {
		return nil, err
	}
	if !p.Enabled() {
		if a.cfg.RedisURL != "" {
			a.log.Warn("--redis-url is set but no quota is (--quota or quota-identities): calls are not counted")
		}
		return nil, nil
	}
	var store quota.Store = quota.NewMemoryStore()
	if a.cfg.RedisURL != "" {
		client, err := quota.NewRedisClient(a.cfg.RedisURL)
		if err != nil {
			return nil, fmt.Errorf("--redis-url: %w", err)
		}
		redis.SetLogger(quota.RedisLogger{Log: a.log})
		a.closers = append(a.closers, client.Close)
		store = quota.NewRedisStore(client, a.cfg.RedisPrefix)
		a.log.Info("quotas shared through Redis", zap.String("redis", specloader.RedactURL(a.cfg.RedisURL)), zap.String("prefix", a.cfg.RedisPrefix))
	}
	return quota.Middleware(p, store, quota.Options{FailOpen: a.cfg.QuotaFail == "open", Log: a.log,
		Unenforced: a.metrics.QuotaUnenforced}), nil
}

// tracingShutdownTimeout bounds the export of the spans still buffered at
// exit.
const tracingShutdownTimeout = 5 * time.Second

// startTracing builds the OTLP/HTTP trace exporter (--otel) and returns
// what flushes it at exit. The exporter reads the standard OTEL_* variables
// itself; the service is "mcpbridge" unless OTEL_SERVICE_NAME says
// otherwise.
func (a *app) startTracing(ctx context.Context) (func(), error) {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := os.Getenv(name); p != "" {
			if p != "http/protobuf" {
				a.log.Warn("tracing: only OTLP over HTTP (http/protobuf) is supported; exporting with it", zap.String(name, p))
			}
			break
		}
	}
	p, err := trace.NewProvider(ctx, trace.ProviderOptions{ServiceVersion: version})
	if err != nil {
		return nil, fmt.Errorf("--otel: %w", err)
	}
	a.tracing = p
	if host := p.PlainCredentialsHost(); host != "" {
		a.log.Warn("tracing: the OTLP credentials will travel unencrypted: the endpoint is plain http on a non-loopback host; use https",
			zap.String("host", host))
	}
	// The SDK reports export failures only through its process-wide
	// handler (by default the standard logger, unstructured): route them to
	// the bridge's log.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		a.log.Warn("tracing: export failed", zap.Error(err))
	}))
	a.log.Info("tracing on: spans exported over OTLP/HTTP")
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tracingShutdownTimeout)
		defer cancel()
		if err := p.Shutdown(sctx); err != nil {
			a.log.Warn("tracing: spans lost at exit", zap.Error(err))
		}
	}, nil
}

// redactArguments passes logged arguments through the served catalog's
// sanitizer (credentials included).
func (a *app) redactArguments(s string) string {
	if a.rt == nil {
		return "(redacted)"
	}
	red := a.rt.Catalog().Redactor()
	if out, err := red.RedactJSON(nil, []byte(s)); err == nil {
		return string(out)
	}
	return red.RedactString(s)
}

// newRuntime puts the catalog behind the runtime and the MCP server.
func (a *app) newRuntime(bt *built) (*bridge.Runtime, *mcpx.Server, error) {
	mws, err := a.middlewares()
	if err != nil {
		return nil, nil, err
	}
	rt := bridge.NewRuntime(bt.cat, mws...)
	rt.OnPanic(func(tool string, p any, stack []byte) {
		a.log.Error("tool call failed: panic (a bug; the server goes on)", zap.String("tool", tool), zap.String("panic", fmt.Sprint(p)), zap.ByteString("stack", stack))
	})
	a.rt = rt
	a.metrics.SetTools(bt.cat.Len())
	a.metrics.Loaded(bt.cat.Degraded() == "")
	rt.OnSwap(func(_, cur *bridge.Catalog) {
		a.metrics.SetTools(cur.Len())
		a.metrics.Retire(cur) // the series of the tools the swap removed
	})
	title := ""
	if t := bt.cat.PingInfo().SpecTitle; t != "" {
		title = "mcpbridge: " + t
	}
	srv := mcpx.New(rt, mcpx.Options{Version: version, Title: title, Logger: slogFor(a.log), Log: a.log, ResultText: a.cfg.ResultText, StructuredClients: a.cfg.StructuredClients, ContentClients: a.cfg.ContentClients})
	return rt, srv, nil
}

func (a *app) serve(ctx context.Context) error {
	a.deferValidation = true
	bt, err := a.build(ctx, true, !a.cfg.NoCache)
	a.deferValidation = false
	if err != nil {
		return err
	}
	return a.serveBuilt(ctx, bt, "")
}

func (a *app) serveBuilt(ctx context.Context, bt *built, upstream string) error {
	if !a.cfg.StartupHugePages {
		hugepages.End() // a config file said so (hugepages' init reads flags and environment only)
	}
	defer hugepages.End() // at the latest; ended below once started
	rt, srv, err := a.newRuntime(bt)
	if err != nil {
		return err
	}
	rl := newReloader(a, rt, bt) // keeps the inputs' digest, not their bytes
	// The parsed spec and its bytes are garbage from here on (tools hold
	// only their prepared plans): return their memory to the OS before
	// serving, so idle RSS reflects the tools, not the document they came
	// from.
	bt.spec = nil
	if a.restoreGC {
		defer startGCFloor(gcFloorBytes)() // gcfloor.go; GOGC 100 over it
	}
	if bt.later == nil {
		// Tools restored from the cache (a first start frees in its
		// deferred work below). The free waits until the first tools/list
		// has most likely been answered: returned pages are faulted back in
		// by the next large allocation, and encoding GitHub's 2.4 MB list
		// is one. A pipe reader, 20 interleaved cached restarts each:
		// 207 → 188 ms median to the list.
		free := time.AfterFunc(firstListGrace, func() {
			hugepages.End()
			returnMemory()
		})
		defer free.Stop()
	}
	if bt.cat.Degraded() == "" {
		n := listBytes(bt.cat)
		a.log.Info("tools ready", zap.Int("tools", bt.cat.Len()), zap.Int("listed", len(bt.cat.Listed())), zap.Int("operations", bt.ops), zap.Int("skipped", len(bt.cat.Skipped())),
			zap.Int("tools_list_bytes", n), zap.Int("tools_list_tokens_estimate", n/4), zap.String("mode", a.cfg.Tools), zap.Bool("cached", bt.cached), zap.String("transport", a.cfg.Transport))
		if n > largeListBytes {
			// DocuSign's spec, all operations: 31.6 MB, ~7.9M tokens.
			a.log.Warn("tools/list is larger than most agents' context can hold: select operations with a whitelist, or serve --tools dynamic (search, describe, call); `mcpbridge tools --stats` shows what each setting saves",
				zap.Int("tools_list_bytes", n), zap.Int("tools_list_tokens_estimate", n/4), zap.Int("tools", len(bt.cat.Listed())))
		}
		if n > mcpx.ListPageBytes() {
			a.log.Warn("tools/list goes in pages: one message would be larger than clients take (the TypeScript SDK drops a connection over 10 MiB); a client that does not follow nextCursor sees only the first page",
				zap.Int("tools_list_bytes", n), zap.Int("page_bytes", mcpx.ListPageBytes()))
		}
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	if later := bt.later; later != nil {
		// What provisioning left for after serving starts (built.later);
		// an exit waits for it, so that the cache is written.
		relist := bt.relist
		bt.later, bt.relist = nil, nil
		done := make(chan struct{})
		go func() {
			defer close(done)
			// Provisioning's garbage back to the OS first (at GOGC 200 it
			// is most of the heap): what comes next (the cache entry,
			// validation) then grows a small heap instead of stacking on
			// the provisioning peak. GitHub's first start, whole-process
			// peak RSS: 192-226 → 172-181 MiB over 5 paired runs, list
			// time unchanged.
			returnMemory()
			later(ctx)
			later = nil // the parsed spec is garbage from here on
			hugepages.End()
			debug.FreeOSMemory()
			// Then the encoded tools/list joins the cache entry, so that a
			// restart answers its first list without encoding it
			// (bridge/mcpx/listcache.go). Not sooner: encoded while the
			// parsed spec is alive, it raised GitHub's first-start peak
			// from 145-150 to 161 MiB (mcpbench's cold phase, 2x5 runs).
			// Also on the way out: the exit waits for it, as for the
			// first write, and the next start is the one it serves.
			if relist != nil {
				if l := srv.EncodedList(bt.cat); l != nil {
					bt.cat.SetEncodedList(l)
					relist()
					returnMemory()
				}
			}
		}()
		defer func() { stop(); <-done }()
	}
	watched := rl.watch(ctx)
	defer func() { stop(); <-watched }()
	if a.cfg.MetricsListen != "" {
		served, err := a.serveMetrics(ctx)
		if err != nil {
			return err
		}
		defer func() { stop(); <-served }()
	}

	if a.cfg.Transport == "http" {
		opts, err := a.httpOptions(rt, upstream)
		if err != nil {
			return err
		}
		return transport.ServeHTTP(ctx, srv.MCP(), opts, a.log)
	}
	// A host's pipes are read and written through the poller (no thread
	// blocked in read(2) between messages); a terminal stays as it is.
	in, out, restore := transport.PollableStdio(a.stdin, a.stdout)
	defer restore()
	return transport.ServeStdioWithOptions(ctx, srv.MCP(), io.NopCloser(in), nopWriteCloser{out},
		transport.StdioOptions{MaxMessageBytes: a.cfg.MaxMessageBytes, MaxJSONDepth: a.cfg.MaxJSONDepth, ShutdownTimeout: a.cfg.ShutdownTimeout}, a.log)
}

func (a *app) httpOptions(rt *bridge.Runtime, upstream string) (transport.HTTPOptions, error) {
	cfg := a.cfg
	keys := append([]string(nil), cfg.APIKeys...)
	names := make([]string, len(keys))
	if cfg.APIKeyFile != "" {
		fileKeys, fileNames, err := cfg.apiKeyFileKeys()
		if err != nil {
			return transport.HTTPOptions{}, err
		}
		keys, names = append(keys, fileKeys...), append(names, fileNames...)
		if len(fileKeys) == 0 {
			// Asked for keys and given none: on a loopback listener (behind
			// a proxy, say) the bridge would serve everyone unauthenticated.
			return transport.HTTPOptions{}, fmt.Errorf("--api-key-file %s holds no key (one per line, # starts a comment): refusing to serve without the inbound auth it asks for", cfg.APIKeyFile)
		}
	}
	if n := countEmpty(names); len(keys) > 1 && n > 0 {
		a.log.Warn("inbound API keys without a name are named by their position (api-key:0, api-key:1...): removing one renames every key after it, which then gets the access rules and quota of its new name; name them in --api-key-file, one NAME KEY per line", zap.Int("unnamed", n), zap.Int("keys", len(keys)))
	}
	if len(keys) > 0 {
		ids := make(map[string]bool, len(keys))
		for i := range keys {
			ids[transport.APIKeyID(i, names)] = true
		}
		a.warnAllowKeys(rt.Catalog(), ids)
		rt.OnSwap(func(_, cur *bridge.Catalog) { a.warnAllowKeys(cur, ids) })
	}
	// Status reads the catalog being served: /ready turns 200 when a
	// degraded start recovers, and the tool count follows reloads.
	status := func() transport.Status {
		cat := rt.Catalog()
		up := upstream
		if up == "" {
			up = cat.PingInfo().Upstream
		}
		return transport.Status{
			Version:         version,
			Transport:       "http",
			UpstreamBaseURL: bridge.PublicURL(up), // a key in its query is not shown
			Tools:           len(cat.Tools()),
			Listed:          len(cat.Listed()),
			Operations:      cat.Len(),
			Degraded:        cat.Degraded() != "",
			Ready:           cat.Degraded() == "",
		}
	}
	return transport.HTTPOptions{
		Listen:                   cfg.Listen,
		Stateful:                 cfg.Stateful,
		SessionTimeout:           cfg.SessionTimeout,
		APIKeys:                  keys,
		APIKeyNames:              names,
		AllowAPIKeyHeader:        cfg.AllowAPIKeyHeader,
		AllowedOrigins:           cfg.AllowedOrigins,
		AllowedHosts:             cfg.AllowedHosts,
		TrustedProxies:           cfg.TrustedProxies,
		JWKSURL:                  cfg.JWKSURL,
		JWTIssuer:                cfg.JWTIssuer,
		JWTAudience:              cfg.JWTAudience,
		ResourceURL:              cfg.ResourceURL,
		AuthorizationServers:     cfg.AuthorizationServers,
		NoAuth:                   cfg.NoAuth,
		MaxBodyBytes:             cfg.MaxBodyBytes,
		KeepAlive:                cfg.KeepAlive,
		ShutdownTimeout:          cfg.ShutdownTimeout,
		ShutdownDelay:            cfg.ShutdownDelay,
		Status:                   status,
		ReadTimeout:              cfg.ReadTimeout,
		IdleTimeout:              cfg.IdleTimeout,
		MaxJSONDepth:             cfg.MaxJSONDepth,
		MaxSessions:              cfg.MaxSessions,
		MaxSessionsPerIdentity:   cfg.MaxSessionsPerID,
		MaxSSEStreams:            cfg.MaxSSEStreams,
		MaxSSEStreamsPerIdentity: cfg.MaxSSEStreamsPerID,
		Routes:                   a.httpRoutes(rt),
		PublicRoutes:             a.publicRoutes(),
		OnListen: func(addr net.Addr) {
			a.log.Info("listening", zap.String("addr", addr.String()), zap.String("mcp", "http://"+addr.String()+"/mcp"), zap.String("sse", "http://"+addr.String()+"/sse"))
		},
	}, nil
}

// publicRoutes are the HTTP listener's routes served without a
// credential: /metrics, unless --metrics-listen gives it an address of its
// own. The metrics name every tool that was called, those an access list
// hides from other callers included, so an operator who moves them to an
// internal address must not find them on the public listener too.
func (a *app) publicRoutes() map[string]http.Handler {
	if a.cfg.MetricsListen != "" {
		return nil
	}
	return map[string]http.Handler{"GET /metrics": a.metrics.Handler()}
}

// listBytes is the size of the tools/list result the catalog gives a
// client on the newest revision (older ones get a few bytes more).
// largeListBytes is the tools/list size past which serve warns: ~125k
// tokens at 4 bytes a token, most of a large model context.
const largeListBytes = 500_000

func listBytes(c *bridge.Catalog) int {
	if l := c.EncodedList(); l != nil && len(l.Names) == len(c.Listed()) {
		// Restored from the tool cache with the list as a current client
		// receives it: counting it again was ~6 ms of a GitHub restart.
		return len(`{"tools":}`) + len(l.JSON)
	}
	defs := make([]*mcp.Tool, 0, len(c.Listed()))
	for _, t := range c.Listed() {
		defs = append(defs, t.Def())
	}
	return toolsBytes(defs)
}

// toolsBytes is the size of {"tools":[defs...]} (defBytes each).
func toolsBytes(defs []*mcp.Tool) int {
	n := len(`{"tools":[]}`)
	for i, def := range defs {
		if i > 0 {
			n++ // the comma
		}
		n += defBytes(def)
	}
	return n
}

// defBytes is the length of def encoded. Its schemas are pre-encoded
// (compact) bytes for every built tool: they are counted, not copied
// again, which keeps this log figure from costing a marshal of the whole
// list (GitHub: 2.5 MB, a sixth of a cached restart).
func defBytes(def *mcp.Tool) int {
	d := *def
	extra := 0
	swap := func(s any) any {
		if raw, ok := s.(json.RawMessage); ok && len(raw) > 0 {
			extra += len(raw) - 1
			return json.RawMessage("0")
		}
		return s
	}
	d.InputSchema = swap(d.InputSchema)
	if d.OutputSchema != nil {
		d.OutputSchema = swap(d.OutputSchema)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)                            // as go-sdk writes it
	if err := enc.Encode(mcpx.Listed(&d)); err != nil { // as a current client receives it
		return 0
	}
	return buf.Len() - 1 + extra // less Encode's newline
}

// httpRoutes are the authenticated routes besides /mcp: the REST facade
// when --rest is on.
func (a *app) httpRoutes(rt *bridge.Runtime) map[string]http.Handler {
	if !a.cfg.REST {
		return nil
	}
	h := rest.Handler(rt, rest.Options{MaxBodyBytes: a.cfg.MaxBodyBytes, KeepAlive: a.cfg.KeepAlive, Log: a.log, Identity: restIdentity,
		Visible: func(id *bridge.Identity, t *bridge.Tool) bool { return t.Allowed(id) }})
	if a.tracing != nil {
		h = trace.HTTPContext(h) // a REST client's traceparent parents its calls
	}
	return map[string]http.Handler{"/api/": h}
}

// restIdentity is the caller transport authenticated for a REST request.
func restIdentity(r *http.Request) *bridge.Identity {
	remote := r.Header.Get(transport.RemoteHeader)
	if remote == "" {
		remote = r.RemoteAddr
	}
	return mcpx.IdentityOf(auth.TokenInfoFromContext(r.Context()), remote)
}

func (a *app) printStats(ctx context.Context, bt *built, defs []*mcp.Tool) error {
	payload := toolsBytes(defs)
	variants, err := a.budgetVariants(ctx, bt)
	if err != nil {
		return err
	}
	st := struct {
		Spec         string           `json:"spec"`
		Version      string           `json:"openapi"`
		Operations   int              `json:"operations"`
		Tools        int              `json:"tools"`
		Skipped      []bridge.Skipped `json:"skipped"`
		Warnings     []string         `json:"warnings"`
		PayloadBytes int              `json:"toolsListBytes"`
		Tokens       int              `json:"toolsListTokensEstimate"`
		ByReason     map[string]int   `json:"skippedByReason,omitempty"`
		Variants     []budgetVariant  `json:"toolsListBySetting"`
		Repairs      []bridge.Repair  `json:"repairs"`
	}{
		Spec: a.cfg.Spec, Version: bt.spec.Version, Operations: bt.ops, Tools: bt.cat.Len(),
		Skipped: bt.cat.Skipped(), Warnings: bt.spec.Warnings,
		PayloadBytes: payload, Tokens: payload / 4, Variants: variants, Repairs: bt.cat.Repairs(),
	}
	if st.Skipped == nil {
		st.Skipped = []bridge.Skipped{}
	}
	if st.Warnings == nil {
		st.Warnings = []string{}
	}
	if st.Repairs == nil {
		st.Repairs = []bridge.Repair{}
	}
	if a.cfg.JSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	fmt.Fprintf(a.stdout, "spec:        %s (OpenAPI %s)\n", st.Spec, st.Version)
	fmt.Fprintf(a.stdout, "operations:  %d selected\n", st.Operations)
	fmt.Fprintf(a.stdout, "tools:       %d (+ ping)\n", st.Tools)
	fmt.Fprintf(a.stdout, "skipped:     %d\n", len(st.Skipped))
	for _, sk := range st.Skipped {
		fmt.Fprintf(a.stdout, "  - %s: %s\n", sk.Operation, sk.Reason)
	}
	fmt.Fprintf(a.stdout, "warnings:    %d\n", len(st.Warnings))
	for _, w := range st.Warnings {
		fmt.Fprintf(a.stdout, "  - %s\n", oneLine(w))
	}
	fmt.Fprintf(a.stdout, "repairs:     %d\n", len(st.Repairs))
	for i, r := range st.Repairs {
		if i == maxReport {
			fmt.Fprintf(a.stdout, "  ... and %d more (--json lists them all)\n", len(st.Repairs)-maxReport)
			break
		}
		fmt.Fprintf(a.stdout, "  - %s %s: %s\n", r.Operation, r.Where, oneLine(r.What))
	}
	fmt.Fprintf(a.stdout, "tools/list:  %d bytes (~%d tokens at 4 bytes/token)\n", st.PayloadBytes, st.Tokens)
	for _, v := range variants {
		fmt.Fprintf(a.stdout, "  %-44s %9d bytes (~%d tokens, %.1f%%)\n", v.Setting, v.Bytes, v.Bytes/4, 100*float64(v.Bytes)/float64(max(1, st.PayloadBytes)))
	}
	return nil
}

// budgetVariant is the tools/list size under one setting.
type budgetVariant struct {
	Setting string `json:"setting"`
	Bytes   int    `json:"bytes"`
}

// budgetVariants rebuilds the tools under the settings that shrink
// tools/list, to show what each one saves.
// Without a description limit of its own, the catalog of a setting plus
// --max-description-length 200 is that of the setting with its operations'
// descriptions trimmed (bridge.TrimDescription): counted, not rebuilt
// (each build of a 20,000-operation spec loads and converts it again).
func (a *app) budgetVariants(ctx context.Context, bt *built) ([]budgetVariant, error) {
	saved := *a.cfg
	defer func() { *a.cfg = saved }()
	var out []budgetVariant
	var compact *bridge.Catalog
	for _, v := range []struct {
		name string
		set  func(*Config)
		trim func() *bridge.Catalog // the catalog to trim, when it may be
	}{
		{"--schema-detail compact", func(c *Config) { c.SchemaDetail = "compact" }, nil},
		{"--max-description-length 200", func(c *Config) { c.MaxDescription = 200 }, func() *bridge.Catalog { return bt.cat }},
		{"--schema-detail compact --max-description-length 200", func(c *Config) { c.SchemaDetail, c.MaxDescription = "compact", 200 }, func() *bridge.Catalog { return compact }},
		{"--max-output-schema-bytes 0", func(c *Config) { c.MaxOutputSchema = 0 }, nil},
		{"--tools dynamic", func(c *Config) { c.Tools = "dynamic" }, nil},
	} {
		if v.trim != nil && saved.MaxDescription == 0 {
			if c := v.trim(); c != nil {
				out = append(out, budgetVariant{Setting: v.name, Bytes: trimmedListBytes(c, 200)})
				if c == compact {
					compact = nil // not kept through the builds that follow
				}
				continue
			}
		}
		*a.cfg = saved
		v.set(a.cfg)
		vb, err := a.provision(ctx, bt.inputs, false)
		if err != nil {
			return nil, fmt.Errorf("stats for %s: %w", v.name, err)
		}
		if v.trim == nil && a.cfg.SchemaDetail == "compact" && a.cfg.MaxDescription == 0 {
			compact = vb.cat
		}
		out = append(out, budgetVariant{Setting: v.name, Bytes: listBytes(vb.cat)})
	}
	return out, nil
}

// trimmedListBytes is the size of c's tools/list had c, built without a
// description limit, been built with --max-description-length n.
func trimmedListBytes(c *bridge.Catalog, n int) int {
	defs := make([]*mcp.Tool, 0, len(c.Listed()))
	for _, t := range c.Listed() {
		d := t.Def()
		if !t.Builtin() {
			cp := *d
			cp.Description = bridge.TrimDescription(d.Description, n)
			d = &cp
		}
		defs = append(defs, d)
	}
	return toolsBytes(defs)
}

func hints(ann *mcp.ToolAnnotations) string {
	if ann == nil {
		return ""
	}
	var hs []string
	if ann.ReadOnlyHint {
		hs = append(hs, "read-only")
	}
	if ann.DestructiveHint != nil && *ann.DestructiveHint {
		hs = append(hs, "destructive")
	}
	if ann.IdempotentHint && !ann.ReadOnlyHint {
		hs = append(hs, "idempotent")
	}
	sort.Strings(hs)
	return strings.Join(hs, ",")
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	// No control character (a terminal escape sequence; YAML refuses them
	// even in a comment) and no invalid UTF-8, cut or given.
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	if len(s) > 80 {
		cut := 77
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// redactedError is an error whose message went through the sanitizer; it
// still unwraps to the original for errors.Is.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// nopWriteCloser lets the stdio transport "close" stdout without closing
// the process's descriptor.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// warnAllowKeys warns of the api-key callers the access lists of cat name
// that no configured key is (ids): a misspelt name locks its key out, and
// a place past the last key (api-key:3 of three) is granted to whichever
// key is added next.
func (a *app) warnAllowKeys(cat *bridge.Catalog, ids map[string]bool) {
	unknown := map[string][]string{}
	for _, t := range cat.Tools() {
		for _, k := range t.AllowKeys() {
			if strings.HasPrefix(k, "api-key:") && !ids[k] {
				unknown[k] = append(unknown[k], t.Name())
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(unknown)) {
		tools := unknown[k]
		a.log.Warn("a whitelist access list names an API key caller that no configured key is: no caller gets the access it grants (a key added later at that place or with that name would)", zap.String("caller", k), zap.Strings("tools", tools[:min(len(tools), 5)]), zap.Int("tool_count", len(tools)))
	}
}

// countEmpty is the number of empty strings in s.
func countEmpty(s []string) int {
	n := 0
	for _, v := range s {
		if v == "" {
			n++
		}
	}
	return n
}
