package main

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/cmd/mcpbridge/demo"
)

// demo starts the embedded example API on a free loopback port and serves
// it through the bridge, over stdio or (with --transport http) HTTP.
func (a *app) demo(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base, done, err := demo.Serve(ctx)
	if err != nil {
		return err
	}
	defer func() { cancel(); <-done }()
	a.log.Info("demo API listening", zap.String("url", base))
	a.specData = demo.Spec
	if a.cfg.Whitelist == "" && !a.cfg.AllOperations {
		a.whitelistData = demo.Whitelist
	}
	a.cfg.Spec = "embedded:demo"
	a.cfg.Upstream = base
	bt, err := a.build(ctx, false, false)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return a.serveBuilt(ctx, bt, base)
}
