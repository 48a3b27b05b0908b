package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/transport"
)

// serveMetrics serves /metrics on --metrics-listen until ctx is done; the
// returned channel closes once the server has stopped.
func (a *app) serveMetrics(ctx context.Context) (<-chan struct{}, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", a.cfg.MetricsListen)
	if err != nil {
		return nil, fmt.Errorf("listening on --metrics-listen %s: %w", a.cfg.MetricsListen, err)
	}
	mux := http.NewServeMux()
	// The Host and Origin policy of the HTTP listener's /metrics: a page
	// reached by DNS rebinding does not read the tool names and counts.
	mux.Handle("GET /metrics", transport.Screened(a.metrics.Handler(), a.cfg.AllowedOrigins, a.log))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second, IdleTimeout: time.Minute}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("metrics server stopped", zap.Error(err))
		}
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // a scrape cut short is harmless
	}()
	a.log.Info("metrics listening", zap.String("url", "http://"+ln.Addr().String()+"/metrics"))
	return done, nil
}
