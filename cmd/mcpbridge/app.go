package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/sanitizer"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/transport"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// version is the bridge version, set at link time with
// -ldflags "-X main.version=v1.2.3"; "dev" otherwise.
var version = "dev"

const usageText = `mcpbridge serves the operations of a REST API's OpenAPI document as MCP tools.

Usage:
  mcpbridge serve --spec PATH|URL [--upstream URL] [--whitelist PATH | --all-operations] [--config PATH] [flags]
  mcpbridge tools --spec PATH|URL [--whitelist PATH | --all-operations] [--json | --stats] [flags]
  mcpbridge demo [--transport stdio|http] [flags]
  mcpbridge version

Every flag has an environment variable MCPBRIDGE_<FLAG> (dashes become
underscores; repeatable flags take a plural, comma-separated variable, e.g.
MCPBRIDGE_API_KEYS) and a key of the same name in the --config YAML file.
Run "mcpbridge serve --help" for the flags.
`

// run is the whole program; main only adds signals and the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return errors.New("no command given")
	}
	cmd := args[0]
	switch cmd {
	case "version", "--version":
		fmt.Fprintln(stdout, "mcpbridge", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usageText)
		return nil
	case "serve", "tools", "demo":
	default:
		fmt.Fprint(stderr, usageText)
		return fmt.Errorf("unknown command %q", cmd)
	}
	fs := flagSet(cmd)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage of mcpbridge %s:\n%s", cmd, fs.FlagUsages())
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	cfg, err := loadConfig(fs, os.Environ())
	if err != nil {
		return err
	}
	if err := cfg.Validate(cmd); err != nil {
		return err
	}
	log, err := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck // stderr sync errors are not actionable
	a := &app{cfg: cfg, log: log, stdin: stdin, stdout: stdout}
	switch cmd {
	case "tools":
		return a.tools(ctx)
	case "demo":
		return a.demo(ctx)
	default:
		return a.serve(ctx)
	}
}

// app wires configuration into the packages.
type app struct {
	cfg    *Config
	log    *zap.Logger
	stdin  io.Reader
	stdout io.Writer

	// specData and whitelistData, when set, are used instead of cfg.Spec
	// and cfg.Whitelist (the embedded demo).
	specData, whitelistData []byte
}

// built is the result of provisioning: a bridge, or a degraded reason.
type built struct {
	bridge   *bridge.Bridge
	spec     *specloader.Result
	ops      int
	degraded string // non-empty: why only ping is served
}

// build loads the spec, applies the whitelist and prepares the tools.
// A spec that cannot be fetched gives a degraded result when degradeOK;
// everything else wrong is an error.
func (a *app) build(ctx context.Context, degradeOK bool) (*built, error) {
	cfg := a.cfg
	lopts := specloader.Options{
		MaxBytes: cfg.SpecMaxBytes,
		Timeout:  cfg.SpecTimeout,
		Strict:   cfg.Strict,
	}
	if len(cfg.SpecHeaders) > 0 {
		lopts.Header = map[string][]string{}
		for k, v := range parseHeaders(cfg.SpecHeaders) {
			lopts.Header[k] = []string{v}
		}
	}
	var res *specloader.Result
	var err error
	if a.specData != nil {
		res, err = specloader.LoadData(ctx, a.specData, nil, lopts)
	} else {
		res, err = specloader.Load(ctx, cfg.Spec, lopts)
	}
	if err != nil {
		if degradeOK && isFetchError(err) {
			a.log.Error("spec could not be fetched; serving in degraded mode with only the ping tool", zap.String("spec", cfg.Spec), zap.Error(err))
			return &built{degraded: err.Error()}, nil
		}
		return nil, err
	}
	for _, w := range res.Warnings {
		a.log.Warn("spec validation", zap.String("warning", w))
	}

	var policy *whitelist.Policy
	switch {
	case cfg.AllOperations:
		policy = whitelist.All()
	case a.whitelistData != nil:
		policy, err = whitelist.Parse(bytes.NewReader(a.whitelistData))
		if err != nil {
			return nil, fmt.Errorf("embedded whitelist: %w", err)
		}
	default:
		f, err := os.Open(cfg.Whitelist)
		if err != nil {
			return nil, fmt.Errorf("opening whitelist: %w", err)
		}
		policy, err = whitelist.Parse(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.Whitelist, err)
		}
	}
	ops, err := policy.Select(res.Doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Whitelist, err)
	}

	base := cfg.Upstream
	if base == "" {
		base, err = bridge.ServerURL(res.Doc.Servers, cfg.ServerVars, res.Location)
		if err != nil {
			return nil, fmt.Errorf("upstream base URL from the spec: %w", err)
		}
	}
	creds := bridge.Credentials{
		BearerToken:   cfg.UpstreamToken,
		BasicUser:     cfg.UpstreamAuth.BasicUser,
		BasicPassword: cfg.UpstreamAuth.BasicPassword,
		Headers:       cfg.UpstreamAuth.Headers,
		Query:         cfg.UpstreamAuth.Query,
		Cookies:       cfg.UpstreamAuth.Cookies,
	}
	if len(cfg.UpstreamHeaders) > 0 {
		h := map[string]string{}
		for k, v := range creds.Headers {
			h[k] = v
		}
		for k, v := range parseHeaders(cfg.UpstreamHeaders) {
			h[k] = v
		}
		creds.Headers = h
	}
	title, specVersion := "", ""
	if res.Doc.Info != nil {
		title, specVersion = res.Doc.Info.Title, res.Doc.Info.Version
	}
	b, err := bridge.New(ops, bridge.Options{
		BaseURL:             base,
		UseOperationServers: cfg.Upstream == "",
		ServerVariables:     cfg.ServerVars,
		SpecLocation:        res.Location,
		Client:              bridge.NewUpstreamClient(bridge.UpstreamOptions{Retries: retries(cfg.Retries), Logger: a.log}),
		Rules: sanitizer.Rules{
			Keys:     cfg.RedactKeys,
			Patterns: cfg.RedactPatterns,
			Prefixes: cfg.RedactPrefixes,
		},
		Credentials:          creds,
		Timeout:              cfg.Timeout,
		MaxResponseBytes:     cfg.MaxResponseBytes,
		MaxOutputSchemaBytes: outputSchemaLimit(cfg.MaxOutputSchema),
		VerifySchemas:        cfg.Stats,
		Version:              version,
		SpecTitle:            title,
		SpecVersion:          specVersion,
		Logger:               a.log,
	})
	if err != nil {
		return nil, fmt.Errorf("building tools: %w", err)
	}
	if cfg.Strict && len(b.Skipped()) > 0 {
		return nil, fmt.Errorf("--strict: %d operation(s) cannot become tools (first: %s: %s)", len(b.Skipped()), b.Skipped()[0].Operation, b.Skipped()[0].Reason)
	}
	return &built{bridge: b, spec: res, ops: len(ops)}, nil
}

// outputSchemaLimit maps the flag (0: none, -1: unlimited) to
// bridge.Options (0 means its default there).
func outputSchemaLimit(n int) int {
	if n == 0 {
		return 1 // no marshaled schema is that small: none kept
	}
	return n
}

// retries maps the user's count (0 disables) to UpstreamOptions (0 means
// the default there).
func retries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// isFetchError reports errors about getting the spec's bytes (network,
// HTTP status, timeout, missing file) as opposed to a bad document.
func isFetchError(err error) bool {
	return errors.Is(err, specloader.ErrFetch)
}

// newServer builds the MCP server and registers the tools (or only ping).
func (a *app) newServer(bt *built) *mcp.Server {
	impl := &mcp.Implementation{Name: "mcpbridge", Version: version}
	n := 1
	if bt.bridge != nil {
		n += bt.bridge.Len()
		if bt.spec.Doc.Info != nil && bt.spec.Doc.Info.Title != "" {
			impl.Title = "mcpbridge: " + bt.spec.Doc.Info.Title
		}
	}
	pageSize := mcp.DefaultPageSize
	if n >= pageSize {
		pageSize = n + 1 // one page: many clients never follow nextCursor
	}
	s := mcp.NewServer(impl, &mcp.ServerOptions{
		Logger:   slogFor(a.log),
		PageSize: pageSize,
		Capabilities: &mcp.ServerCapabilities{
			Tools: &mcp.ToolCapabilities{ListChanged: true},
		},
	})
	if bt.bridge == nil {
		bridge.AddPing(s, bridge.PingInfo{Bridge: "mcpbridge", Version: version, Degraded: true, Reason: bt.degraded}, nil)
		return s
	}
	bt.bridge.Register(s)
	return s
}

func (a *app) serve(ctx context.Context) error {
	bt, err := a.build(ctx, true)
	if err != nil {
		return err
	}
	return a.serveBuilt(ctx, bt, "")
}

func (a *app) serveBuilt(ctx context.Context, bt *built, upstream string) error {
	s := a.newServer(bt)
	if bt.bridge != nil {
		a.log.Info("tools ready", zap.Int("tools", bt.bridge.Len()), zap.Int("operations", bt.ops), zap.Int("skipped", len(bt.bridge.Skipped())), zap.String("transport", a.cfg.Transport))
		upstream = bt.bridge.PingInfo().Upstream
	}
	if a.cfg.Transport == "http" {
		opts, err := a.httpOptions(bt, upstream)
		if err != nil {
			return err
		}
		return transport.ServeHTTP(ctx, s, opts, a.log)
	}
	return transport.ServeStdio(ctx, s, io.NopCloser(a.stdin), nopWriteCloser{a.stdout})
}

func (a *app) httpOptions(bt *built, upstream string) (transport.HTTPOptions, error) {
	cfg := a.cfg
	keys := append([]string(nil), cfg.APIKeys...)
	if cfg.APIKeyFile != "" {
		data, err := os.ReadFile(cfg.APIKeyFile)
		if err != nil {
			return transport.HTTPOptions{}, fmt.Errorf("reading --api-key-file: %w", err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				keys = append(keys, line)
			}
		}
	}
	tools := 1
	if bt.bridge != nil {
		tools += bt.bridge.Len()
	}
	status := transport.Status{
		Version:         version,
		Transport:       "http",
		UpstreamBaseURL: upstream,
		Tools:           tools,
		Degraded:        bt.bridge == nil,
		Ready:           bt.bridge != nil,
	}
	return transport.HTTPOptions{
		Listen:               cfg.Listen,
		Stateful:             cfg.Stateful,
		SessionTimeout:       cfg.SessionTimeout,
		APIKeys:              keys,
		AllowAPIKeyHeader:    cfg.AllowAPIKeyHeader,
		AllowedOrigins:       cfg.AllowedOrigins,
		JWKSURL:              cfg.JWKSURL,
		JWTIssuer:            cfg.JWTIssuer,
		JWTAudience:          cfg.JWTAudience,
		ResourceURL:          cfg.ResourceURL,
		AuthorizationServers: cfg.AuthorizationServers,
		NoAuth:               cfg.NoAuth,
		MaxBodyBytes:         cfg.MaxBodyBytes,
		KeepAlive:            cfg.KeepAlive,
		ShutdownTimeout:      cfg.ShutdownTimeout,
		Status:               func() transport.Status { return status },
		OnListen: func(addr net.Addr) {
			a.log.Info("listening", zap.String("addr", addr.String()), zap.String("mcp", "http://"+addr.String()+"/mcp"), zap.String("sse", "http://"+addr.String()+"/sse"))
		},
	}, nil
}

// tools prints the tools serve would expose.
func (a *app) tools(ctx context.Context) error {
	bt, err := a.build(ctx, false)
	if err != nil {
		return err
	}
	s := a.newServer(bt)
	defs, err := listTools(ctx, s)
	if err != nil {
		return err
	}
	if a.cfg.JSON && !a.cfg.Stats {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(defs)
	}
	if a.cfg.Stats {
		return a.printStats(bt, defs)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tHINTS\tTITLE")
	for _, t := range defs {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, hints(t.Annotations), oneLine(t.Title))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, sk := range bt.bridge.Skipped() {
		fmt.Fprintf(a.stdout, "skipped %s: %s\n", sk.Operation, sk.Reason)
	}
	return nil
}

// listTools asks the server for tools/list over an in-memory session, so
// the output is exactly what a client receives.
func listTools(ctx context.Context, s *mcp.Server) ([]*mcp.Tool, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
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

func (a *app) printStats(bt *built, defs []*mcp.Tool) error {
	payload, err := json.Marshal(map[string]any{"tools": defs})
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
	}{
		Spec: a.cfg.Spec, Version: bt.spec.Version, Operations: bt.ops, Tools: bt.bridge.Len(),
		Skipped: bt.bridge.Skipped(), Warnings: bt.spec.Warnings,
		PayloadBytes: len(payload), Tokens: len(payload) / 4,
	}
	if st.Skipped == nil {
		st.Skipped = []bridge.Skipped{}
	}
	if st.Warnings == nil {
		st.Warnings = []string{}
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
	fmt.Fprintf(a.stdout, "tools/list:  %d bytes (~%d tokens at 4 bytes/token)\n", st.PayloadBytes, st.Tokens)
	return nil
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
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// nopWriteCloser lets the stdio transport "close" stdout without closing
// the process's descriptor.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
