package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/request"
	"github.com/mcpbridge/mcpbridge/bridge/trace"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
	"github.com/mcpbridge/mcpbridge/sanitizer"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// built is the result of provisioning: a catalog (degraded when the spec
// could not be fetched) and what it was built from.
type built struct {
	cat    *bridge.Catalog
	spec   *specloader.Result // nil when the tools came from the cache
	ops    int
	cached bool
	inputs inputs
	key    string // of the tools' cache entry ("" when the cache is off)
	// later is what provisioning left for after the tools are served
	// (app.deferValidation): validating the spec, reducing it to
	// openapi://spec, storing the tools in the cache. serve runs it in
	// the background; nil when nothing was left.
	later func(context.Context)
	// relist, when set, rewrites the cache entry later wrote, now with
	// the encoded tools/list the catalog carries (serveBuilt).
	relist func()
}

// inputs are the documents a catalog is built from, with their digest: a
// reload whose inputs have the same digest changes nothing.
type inputs struct {
	spec, whitelist []byte
	loc             *url.URL
	specSum         [sha256.Size]byte // of spec alone (the cache key uses it)
	sum             [sha256.Size]byte
	validator       specloader.Validator // of the spec document, for a conditional re-read
	refs            []specloader.Ref     // documents the spec's $refs pulled in
}

// readInputs reads the spec (file, URL or embedded) and the whitelist.
//
// With useIndex, the tool cache's index of spec reads (knownSpec) is
// consulted and, after a read, updated. When it shows the spec
// unchanged (a file of the same size and modification time, a URL that
// answers 304), the spec is not read: in.spec stays nil and its digest is
// the remembered one. provision reads it when it needs the bytes after
// all. GitHub's spec, 13 MB: reading and hashing it were ~20% of a cached
// restart's CPU.
func (a *app) readInputs(ctx context.Context, useIndex bool) (inputs, error) {
	in := inputs{spec: a.specData}
	if in.spec == nil {
		var known specloader.Validator
		if useIndex {
			known = a.knownSpec()
		}
		var err error
		var notModified bool
		in.spec, in.loc, in.validator, notModified, err = specloader.Refetch(ctx, a.cfg.Spec, a.loaderOptions(), known)
		if err != nil {
			return in, err
		}
		if useIndex && !notModified {
			a.rememberSpec(in.validator)
		}
	}
	wl, err := a.whitelistBytes(ctx)
	if err != nil {
		return in, err
	}
	in.whitelist = wl
	in.setSums(in.validator.SHA256)
	return in, nil
}

// setSums fills specSum and sum. specSum is the spec's SHA-256 as the
// loader computed it while reading (zero for the embedded spec): GitHub's
// 13 MB document is hashed once per start, not three times.
func (in *inputs) setSums(specSum [sha256.Size]byte) {
	if specSum == ([sha256.Size]byte{}) && in.spec != nil {
		specSum = sha256.Sum256(in.spec)
	}
	in.specSum = specSum
	in.sum = inputsSum(specSum, in.whitelist)
}

// inputsSum is the digest of a spec document (by its SHA-256) and a
// whitelist (nil: all operations).
func inputsSum(specSum [sha256.Size]byte, wl []byte) [sha256.Size]byte {
	var sum [sha256.Size]byte
	h := sha256.New()
	h.Write(specSum[:])
	if wl == nil {
		h.Write([]byte("all-operations"))
	} else {
		h.Write(wl)
	}
	h.Sum(sum[:0])
	return sum
}

// build is provisioning, the one re-runnable function behind serve, tools,
// demo and every reload: read the spec and whitelist, then restore the
// tools from the cache or parse, select and build them. A spec that cannot
// be fetched gives a degraded catalog (only ping) when degradeOK; anything
// else wrong is an error.
func (a *app) build(ctx context.Context, degradeOK, useCache bool) (*built, error) {
	in, err := a.readInputs(ctx, useCache)
	if err != nil {
		if degradeOK && errors.Is(err, specloader.ErrFetch) {
			a.log.Error("spec could not be fetched; serving in degraded mode with only the ping tool", zap.String("spec", specloader.RedactURL(a.cfg.Spec)), zap.Error(err))
			cat, derr := bridge.NewDegraded(err.Error(), a.bridgeOptions())
			if derr != nil {
				return nil, derr
			}
			return &built{cat: cat}, nil
		}
		return nil, err
	}
	return a.provision(ctx, in, useCache)
}

// provision builds the catalog for in. Its warnings that the last build
// which served logged too are left out (buildlog.go).
func (a *app) provision(ctx context.Context, in inputs, useCache bool) (*built, error) {
	run := a.builds.start()
	bt, err := a.provisionLogged(ctx, in, useCache, run)
	switch {
	case err != nil || bt.cached:
		run.finish(false)
	case bt.later != nil:
		// The deferred validation's warnings belong to this build too.
		later := bt.later
		bt.later = func(ctx context.Context) {
			later(ctx)
			a.noteRepeated(run.finish(ctx.Err() == nil))
		}
	default:
		a.noteRepeated(run.finish(true))
	}
	return bt, err
}

// noteRepeated says how many of a build's warnings were left out.
func (a *app) noteRepeated(n int) {
	if n > 0 {
		a.log.Info("warnings the last build logged too are not repeated; `mcpbridge validate` lists them all", zap.Int("warnings", n))
	}
}

func (a *app) provisionLogged(ctx context.Context, in inputs, useCache bool, run *buildRun) (*built, error) {
	cfg := a.cfg
	start := time.Now()
	lopts := a.loaderOptions()
	bopts := a.bridgeOptions()
	log := run.logger(a.log)
	bopts.Logger = log
	lopts.DeferValidation = a.deferValidation

	var key string
	if useCache {
		key = a.cacheKey(in.specSum, in.whitelist)
		if c, refs := a.loadCached(ctx, key, bopts, in.loc); c != nil {
			a.log.Debug("tools restored from cache", zap.Duration("took", time.Since(start)))
			in.refs = refs
			return &built{cat: c, ops: c.Len() + len(c.Skipped()), cached: true, inputs: in, key: key}, nil
		}
	}
	if in.spec == nil && a.specData == nil {
		// readInputs trusted the index's digest and the cache had no
		// entry for it after all: read the spec now.
		fresh, err := a.readInputs(ctx, false)
		if err != nil {
			return nil, err
		}
		in = fresh
		if useCache {
			a.rememberSpec(in.validator)
			key = a.cacheKey(in.specSum, in.whitelist)
		}
	}

	data, loc, wl := in.spec, in.loc, in.whitelist
	lopts.SHA256 = in.specSum

	// With a whitelist, only the operations it can select (and the
	// components they reach) are decoded: GitHub's spec with 20 operations
	// loads in ~50 ms instead of ~700 ms.
	policy := whitelist.All()
	var err error
	if wl != nil {
		policy, err = whitelist.Parse(bytes.NewReader(wl))
		if err != nil {
			return nil, placeLines(a.whitelistName(), err)
		}
		lopts.Keep = policy.Wants
	}
	res, err := specloader.LoadData(ctx, data, loc, lopts)
	if err != nil {
		return nil, err
	}
	ops, err := policy.Select(res.Doc)
	if err != nil && res.Pruned {
		// Suggestions for unmatched entries need the whole spec.
		lopts.Keep = nil
		if res, err = specloader.LoadData(ctx, data, loc, lopts); err != nil {
			return nil, err
		}
		ops, err = policy.Select(res.Doc)
	}
	if err != nil {
		return nil, placeLines(a.whitelistName(), err)
	}
	for _, w := range res.Warnings {
		log.Warn("spec validation", zap.String("warning", w))
	}
	if cfg.Upstream == "" {
		if err := checkServerVars(cfg.ServerVars, res.Doc.Servers, ops); err != nil {
			return nil, err
		}
	}
	if bopts.BaseURL == "" {
		bopts.BaseURL, err = request.ServerURL(res.Doc.Servers, cfg.ServerVars, res.Location)
		if err != nil {
			return nil, fmt.Errorf("upstream base URL from the spec: %w", err)
		}
	}
	bopts.SpecLocation = res.Location
	bopts.Spec = res.Doc // served, reduced to the whitelist, as openapi://spec
	bopts.DeferSpec = a.deferValidation
	if res.Doc.Info != nil {
		bopts.SpecTitle, bopts.SpecVersion = res.Doc.Info.Title, res.Doc.Info.Version
	}
	if a.restoreGC && a.deferValidation {
		// Serve's first provisioning (deferValidation marks it) decodes at
		// GOGC 200 and builds the tools at 100: the build's garbage then
		// stops stacking on the parsed spec's headroom, the peak of the
		// whole start. GitHub's spec, all operations, pipe A/B of 8 runs
		// each: peak RSS 165-168 → 159-160 MiB, list time unchanged
		// (735 vs 713 and 746 vs 742 ms median). The serving tuner
		// (gcfloor.go) takes over once serving starts.
		debug.SetGCPercent(100)
		// And the decode's garbage goes back to the OS while the build
		// runs: the spans it freed are mostly of other size classes than
		// the build allocates, so without this the build grows the RSS
		// past them. Pipe A/B, 8 runs: peak 159.3 → 146.8 MiB, list
		// 775 → 819 ms (blocking here instead: 150.8 MiB, 843 ms);
		// mcpbench's cold phase, 2×7 runs with the peer in each: peak
		// 147.0 and 146.5 MiB (the peer's 158.6 and 153.7), first start
		// 0.88x and 0.91x the peer's (without: 0.86x and 0.97x).
		go returnMemory()
	}
	if err := cfg.checkSchemes(res.Doc); err != nil {
		return nil, err
	}
	c, err := bridge.NewContext(ctx, ops, bopts)
	if err != nil {
		return nil, fmt.Errorf("building tools: %w", err)
	}
	if bopts.BaseURL == "" && c.Len() == 0 && len(ops) > 0 {
		// Every operation was skipped for want of a base URL: one clear
		// error instead of a bridge that serves nothing.
		return nil, errors.New("the spec declares no servers (and no operation declares its own): set the upstream base URL with --upstream")
	}
	if cfg.Strict && len(c.Skipped()) > 0 {
		return nil, fmt.Errorf("--strict: %d operation(s) cannot become tools (first: %s: %s)", len(c.Skipped()), c.Skipped()[0].Operation, c.Skipped()[0].Reason)
	}
	a.log.Debug("tools built", zap.Duration("took", time.Since(start)))
	in.refs = res.ExternalRefs
	bt := &built{cat: c, spec: res, ops: len(ops), inputs: in, key: key}
	switch {
	case a.deferValidation:
		validate, refs := res.Validate, res.ExternalRefs
		bt.later = func(ctx context.Context) {
			// The cache first: a restart soon after finds it.
			c.FinishSpec()
			if useCache {
				a.storeCached(key, c, refs)
			}
			if validate != nil && ctx.Err() == nil { // not on the way out
				for _, w := range validate(ctx) {
					log.Warn("spec validation", zap.String("warning", w))
				}
			}
		}
		if useCache {
			bt.relist = func() { a.storeCached(key, c, refs) }
		}
	case useCache:
		a.storeCached(key, c, res.ExternalRefs)
	}
	return bt, nil
}

// checkServerVars refuses a --server-variables name that no server in use
// declares (the spec's first, and the first of each selected operation's
// own or its path's): a typo would leave the default in place without a
// word.
func checkServerVars(vars map[string]string, root openapi3.Servers, ops []whitelist.Operation) error {
	if len(vars) == 0 {
		return nil
	}
	declared := map[string]bool{}
	add := func(servers openapi3.Servers) {
		if len(servers) > 0 && servers[0] != nil {
			for name := range servers[0].Variables {
				declared[name] = true
			}
		}
	}
	add(root)
	for _, op := range ops {
		if op.Op != nil && op.Op.Servers != nil {
			add(*op.Op.Servers)
		}
		if op.PathItem != nil {
			add(op.PathItem.Servers)
		}
	}
	var unknown []string
	for name := range vars {
		if !declared[name] {
			unknown = append(unknown, strconv.Quote(name))
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	known := slices.Sorted(maps.Keys(declared))
	if len(known) == 0 {
		known = []string{"none"}
	}
	slices.Sort(unknown)
	return fmt.Errorf("--server-variables: %s declared by no server the selected operations use (their variables: %s)", strings.Join(unknown, ", "), strings.Join(known, ", "))
}

func (a *app) loaderOptions() specloader.Options {
	cfg := a.cfg
	lopts := specloader.Options{MaxBytes: cfg.SpecMaxBytes, Timeout: cfg.SpecTimeout, Strict: cfg.Strict, AllowOrigins: cfg.SpecAllowOrigins}
	// A spec served by the upstream itself sits behind the same private
	// CA or mTLS as its calls.
	lopts.TLS, _ = cfg.upstreamTLS() // Validate already reported its errors
	if len(cfg.SpecHeaders) > 0 {
		lopts.Header = map[string][]string{}
		for k, v := range parseHeaders(cfg.SpecHeaders) {
			lopts.Header[k] = []string{v}
		}
	}
	return lopts
}

// maxWhitelistBytes bounds the whitelist file (a hand-written list).
const maxWhitelistBytes = 16 << 20

// whitelistBytes returns the whitelist document, or nil for
// --all-operations.
func (a *app) whitelistBytes(ctx context.Context) ([]byte, error) {
	switch {
	case a.cfg.AllOperations:
		return nil, nil
	case a.whitelistData != nil:
		return a.whitelistData, nil
	}
	data, err := specloader.ReadLocalFile(ctx, a.cfg.Whitelist, maxWhitelistBytes)
	if err != nil {
		return nil, fmt.Errorf("reading whitelist: %w", err)
	}
	return data, nil
}

// placeLines puts the file name before each of err's lines (one problem a
// line), not the first only: validate groups the problems by kind, and a
// log search finds each one by its file.
func placeLines(name string, err error) error {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = name + ": " + l
		}
	}
	return &placedError{msg: strings.Join(lines, "\n"), err: err}
}

// placedError is an error with its file named on every line.
type placedError struct {
	msg string
	err error
}

func (e *placedError) Error() string { return e.msg }
func (e *placedError) Unwrap() error { return e.err }

func (a *app) whitelistName() string {
	if a.whitelistData != nil {
		return "embedded whitelist"
	}
	return a.cfg.Whitelist
}

// credentials are the configured upstream credentials.
func (cfg *Config) credentials() bridge.Credentials {
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
	return creds
}

// countRedactions feeds mcpbridge_redactions_total (the sanitizer calls it
// once per redacting pass that masked something).
func (a *app) countRedactions(n int) {
	if m := a.metricsPtr.Load(); m != nil {
		m.AddRedactions(n)
	}
}

// logRedactor is the sanitizer of log lines and error messages: the
// default rules, the configured ones, the upstream credentials (the
// OAuth2 access tokens too, as they are obtained) and the inbound API keys.
func (cfg *Config) logRedactor() *sanitizer.Redactor {
	secrets := append(cfg.upstreamSecrets(), cfg.APIKeys...)
	// The keys of --api-key-file too (a file that cannot be read is
	// reported when the listener is set up).
	if fileKeys, _, err := cfg.apiKeyFileKeys(); err == nil {
		secrets = append(secrets, fileKeys...)
	}
	red, err := sanitizer.New(sanitizer.Rules{Keys: cfg.RedactKeys, Patterns: cfg.RedactPatterns, Prefixes: cfg.RedactPrefixes,
		Secrets: secrets, Learned: cfg.tokenSecrets()})
	if err != nil {
		red, _ = sanitizer.New(sanitizer.Rules{Secrets: secrets, Learned: cfg.tokenSecrets()}) // Validate reported the bad pattern
	}
	return red
}

// apiKeyFileKeys are the inbound API keys of --api-key-file and their
// names: a line is KEY or NAME KEY (a named key is the caller api-key:NAME
// wherever it stands; names[i] is "" for an unnamed one), spaces around it
// dropped, empty lines and lines starting with '#' left out; none when no
// file is configured.
func (cfg *Config) apiKeyFileKeys() (keys, names []string, err error) {
	if cfg.APIKeyFile == "" {
		return nil, nil, nil
	}
	data, err := os.ReadFile(cfg.APIKeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("reading --api-key-file: %w", err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		switch f := strings.Fields(line); len(f) {
		case 1:
			keys, names = append(keys, f[0]), append(names, "")
		case 2:
			keys, names = append(keys, f[1]), append(names, f[0])
		default:
			// The line's content is a secret: only its place is told.
			return nil, nil, fmt.Errorf("--api-key-file %s line %d: %d words; a line is KEY or NAME KEY (# starts a comment)", cfg.APIKeyFile, i+1, len(f))
		}
	}
	return keys, names, nil
}

// upstreamSecrets are the configured upstream credentials as the
// redactors mask them: those bridge.Credentials attaches, the OAuth2
// client secret, and the values in the --upstream URL's query
// (upstreamurl.go).
func (cfg *Config) upstreamSecrets() []string {
	return append(append(append(cfg.credentials().Secrets(), nonEmpty(cfg.UpstreamAuth.OAuth2.ClientSecret)...), upstreamQueryValues(cfg.Upstream)...), cfg.schemeSecrets()...)
}

// schemes are the configured secrets of the spec's security schemes
// (upstream-auth.schemes), as bridge.Options takes them: a scheme with an
// oauth2 grant gets its tokens from the upstream client (oauthClient).
func (cfg *Config) schemes() map[string]bridge.SchemeSecret {
	if len(cfg.UpstreamAuth.Schemes) == 0 {
		return nil
	}
	out := make(map[string]bridge.SchemeSecret, len(cfg.UpstreamAuth.Schemes))
	for name, s := range cfg.UpstreamAuth.Schemes {
		out[name] = bridge.SchemeSecret{Value: s.Value, User: s.User, Password: s.Password, Grant: s.OAuth2.on()}
	}
	return out
}

// schemeSecrets are the secrets of upstream-auth.schemes the redactors
// mask: those the bridge sends, and the grants' client secrets (the
// bridge adds the former to its own rules).
func (cfg *Config) schemeSecrets() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(cfg.UpstreamAuth.Schemes)) {
		s := cfg.UpstreamAuth.Schemes[name]
		out = append(out, bridge.SchemeSecret{Value: s.Value, User: s.User, Password: s.Password}.Secrets()...)
		out = append(out, nonEmpty(s.OAuth2.ClientSecret)...)
	}
	return out
}

// checkSchemes refuses an upstream-auth.schemes name that the spec doc
// does not define, naming the nearest one it does.
func (cfg *Config) checkSchemes(doc *openapi3.T) error {
	if len(cfg.UpstreamAuth.Schemes) == 0 {
		return nil
	}
	defined := bridge.SchemeNames(doc)
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(cfg.UpstreamAuth.Schemes)) {
		if slices.Contains(defined, name) {
			continue
		}
		msg := fmt.Sprintf("upstream-auth.schemes: %q is not a security scheme of the spec", name)
		switch near := nearest(name, defined); {
		case near != "":
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		case len(defined) == 0:
			msg += " (it defines none)"
		default:
			msg += " (it defines " + strings.Join(defined, ", ") + ")"
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
}

// bridgeOptions turns the configuration into bridge.Options (without the
// spec-derived fields).
func (a *app) bridgeOptions() bridge.Options {
	cfg := a.cfg
	creds := cfg.credentials()
	return bridge.Options{
		BaseURL:             cfg.Upstream,
		UseOperationServers: cfg.Upstream == "",
		ServerVariables:     cfg.ServerVars,
		Client:              a.upstreamClient(),
		Rules: sanitizer.Rules{
			Keys:     cfg.RedactKeys,
			Patterns: cfg.RedactPatterns,
			Prefixes: cfg.RedactPrefixes,
			OnRedact: a.countRedactions,
			// bridge.New adds the credentials it attaches.
			Secrets: slices.Concat(nonEmpty(cfg.UpstreamAuth.OAuth2.ClientSecret), upstreamQueryValues(cfg.Upstream), cfg.schemeSecrets()),
			Learned: cfg.tokenSecrets(),
		},
		Credentials:          creds,
		Schemes:              cfg.schemes(),
		Timeout:              cfg.Timeout,
		MaxResponseBytes:     cfg.MaxResponseBytes,
		MaxArgumentBytes:     cfg.MaxArgumentBytes,
		MaxURLBytes:          cfg.MaxURLBytes,
		Truncate:             cfg.Truncate,
		Tools:                cfg.Tools,
		MaxDescriptionLength: cfg.MaxDescription,
		SchemaDetail:         cfg.SchemaDetail,
		NestedStyle:          request.NestedStyle(cfg.NestedStyle),
		OutputSchema:         cfg.OutputSchema,
		MaxOutputSchemaBytes: outputSchemaLimit(cfg.MaxOutputSchema),
		VerifySchemas:        cfg.Stats || a.verify,
		Version:              version,
		Logger:               a.log,
	}
}

// upstreamClient is the one upstream client of the process: every catalog,
// the reloaded ones included, shares its connection pool and its OAuth2
// token.
func (a *app) upstreamClient() bridge.Doer {
	a.clientOnce.Do(func() {
		tlsConf, _ := a.cfg.upstreamTLS() // Validate already reported its errors
		opts := upstream.Options{Retries: retries(a.cfg.Retries), Logger: a.log, TLS: tlsConf}
		if h := trace.Transport(a.tracing.TracerProvider()); h != nil { // nil when tracing is off
			opts.Transport = h
		}
		a.client = upstream.New(opts)
		g := a.newOAuthGrant(a.cfg.UpstreamAuth.OAuth2, "upstream-auth.oauth2", tlsConf) // oauth.go
		var schemes map[string]*oauthGrant
		for _, name := range slices.Sorted(maps.Keys(a.cfg.UpstreamAuth.Schemes)) {
			if sg := a.newOAuthGrant(a.cfg.UpstreamAuth.Schemes[name].OAuth2, "upstream-auth.schemes."+name+".oauth2", tlsConf); sg != nil {
				if schemes == nil {
					schemes = map[string]*oauthGrant{}
				}
				schemes[name] = sg
			}
		}
		if g != nil || schemes != nil {
			a.client = &oauthClient{next: a.client, grant: g, schemes: schemes}
		}
	})
	return a.client
}

// nonEmpty is s as a list, empty when s is "".
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// outputSchemaLimit maps the flag (0: none, -1: unlimited) to
// bridge.Options (0 means its default there).
func outputSchemaLimit(n int) int {
	if n == 0 {
		return 1 // no marshaled schema is that small: none kept
	}
	return n
}
