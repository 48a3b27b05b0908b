package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/sanitizer"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// built is the result of provisioning: a bridge, or a degraded reason.
type built struct {
	bridge   *bridge.Bridge
	spec     *specloader.Result // nil when the tools came from the cache
	ops      int
	cached   bool
	degraded string // non-empty: why only ping is served
}

// build reads the spec, then either restores the tools from the cache
// (same spec bytes, whitelist, options and binary) or parses the spec,
// applies the whitelist and prepares the tools. A spec that cannot be
// fetched gives a degraded result when degradeOK; anything else wrong is an
// error.
func (a *app) build(ctx context.Context, degradeOK, useCache bool) (*built, error) {
	cfg := a.cfg
	start := time.Now()
	lopts := a.loaderOptions()
	data := a.specData
	var loc *url.URL
	if data == nil {
		var err error
		data, loc, err = specloader.Read(ctx, cfg.Spec, lopts)
		if err != nil {
			if degradeOK && errors.Is(err, specloader.ErrFetch) {
				a.log.Error("spec could not be fetched; serving in degraded mode with only the ping tool", zap.String("spec", cfg.Spec), zap.Error(err))
				return &built{degraded: err.Error()}, nil
			}
			return nil, err
		}
	}
	wl, err := a.whitelistBytes()
	if err != nil {
		return nil, err
	}
	bopts := a.bridgeOptions()

	var key string
	if useCache {
		key = a.cacheKey(data, wl)
		if b := a.loadCached(key, bopts); b != nil {
			a.log.Debug("tools restored from cache", zap.Duration("took", time.Since(start)))
			return &built{bridge: b, ops: b.Len() + len(b.Skipped()), cached: true}, nil
		}
	}

	// With a whitelist, only the operations it can select (and the
	// components they reach) are decoded: GitHub's spec with 20 operations
	// loads in ~50 ms instead of ~700 ms.
	policy := whitelist.All()
	if wl != nil {
		policy, err = whitelist.Parse(bytes.NewReader(wl))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.whitelistName(), err)
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
		return nil, fmt.Errorf("%s: %w", a.whitelistName(), err)
	}
	for _, w := range res.Warnings {
		a.log.Warn("spec validation", zap.String("warning", w))
	}
	if bopts.BaseURL == "" {
		bopts.BaseURL, err = bridge.ServerURL(res.Doc.Servers, cfg.ServerVars, res.Location)
		if err != nil {
			return nil, fmt.Errorf("upstream base URL from the spec: %w", err)
		}
	}
	bopts.SpecLocation = res.Location
	if res.Doc.Info != nil {
		bopts.SpecTitle, bopts.SpecVersion = res.Doc.Info.Title, res.Doc.Info.Version
	}
	b, err := bridge.New(ops, bopts)
	if err != nil {
		return nil, fmt.Errorf("building tools: %w", err)
	}
	if cfg.Strict && len(b.Skipped()) > 0 {
		return nil, fmt.Errorf("--strict: %d operation(s) cannot become tools (first: %s: %s)", len(b.Skipped()), b.Skipped()[0].Operation, b.Skipped()[0].Reason)
	}
	a.log.Debug("tools built", zap.Duration("took", time.Since(start)))
	if useCache {
		a.storeCached(key, b)
	}
	return &built{bridge: b, spec: res, ops: len(ops)}, nil
}

func (a *app) loaderOptions() specloader.Options {
	cfg := a.cfg
	lopts := specloader.Options{MaxBytes: cfg.SpecMaxBytes, Timeout: cfg.SpecTimeout, Strict: cfg.Strict}
	if len(cfg.SpecHeaders) > 0 {
		lopts.Header = map[string][]string{}
		for k, v := range parseHeaders(cfg.SpecHeaders) {
			lopts.Header[k] = []string{v}
		}
	}
	return lopts
}

// whitelistBytes returns the whitelist document, or nil for
// --all-operations.
func (a *app) whitelistBytes() ([]byte, error) {
	switch {
	case a.cfg.AllOperations:
		return nil, nil
	case a.whitelistData != nil:
		return a.whitelistData, nil
	}
	data, err := os.ReadFile(a.cfg.Whitelist)
	if err != nil {
		return nil, fmt.Errorf("reading whitelist: %w", err)
	}
	return data, nil
}

func (a *app) whitelistName() string {
	if a.whitelistData != nil {
		return "embedded whitelist"
	}
	return a.cfg.Whitelist
}

// bridgeOptions turns the configuration into bridge.Options (without the
// spec-derived fields).
func (a *app) bridgeOptions() bridge.Options {
	cfg := a.cfg
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
	return bridge.Options{
		BaseURL:             cfg.Upstream,
		UseOperationServers: cfg.Upstream == "",
		ServerVariables:     cfg.ServerVars,
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
		Logger:               a.log,
	}
}

// outputSchemaLimit maps the flag (0: none, -1: unlimited) to
// bridge.Options (0 means its default there).
func outputSchemaLimit(n int) int {
	if n == 0 {
		return 1 // no marshaled schema is that small: none kept
	}
	return n
}
