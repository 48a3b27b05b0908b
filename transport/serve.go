package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// ServeHTTP serves s over HTTP (see NewHTTPHandler for the routes) until ctx
// is done, then shuts down gracefully and returns nil:
//
//  0. for ShutdownDelay, /ready answers 503 while everything is still
//     served, so that a load balancer takes the replica out first;
//  1. the listener closes; long-lived streams (stateful GET streams, legacy
//     SSE streams) end once the calls they may depend on have been answered;
//  2. in-flight calls get ShutdownTimeout to finish;
//  3. then their contexts are cancelled and every connection is closed.
//
// It returns an error if the options are invalid, the address cannot be
// bound, or serving fails.
func ServeHTTP(ctx context.Context, s *mcp.Server, opts HTTPOptions, log *zap.Logger) error {
	if log == nil {
		log = zap.NewNop()
	}
	// The handler's background work (JWKS refresh) stops with ctx.
	h, err := newHTTPHandler(ctx, s, opts, log)
	if err != nil {
		return err
	}
	o := opts.withDefaults()
	ln := o.Listener
	if ln == nil {
		var lc net.ListenConfig
		if ln, err = lc.Listen(ctx, "tcp", o.Listen); err != nil {
			return fmt.Errorf("listening on %s: %w", o.Listen, err)
		}
	}
	if o.OnListen != nil {
		o.OnListen(ln.Addr())
	}

	// Request contexts derive from base, which is cancelled only when the
	// shutdown deadline passes, so in-flight calls survive ctx.
	base, cancelBase := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelBase()
	errLog, err := zap.NewStdLogAt(log.Named("http"), zap.WarnLevel)
	if err != nil {
		return fmt.Errorf("building http error log: %w", err)
	}
	// No WriteTimeout or ReadTimeout: SSE streams and slow calls are
	// long-lived responses (request bodies get a per-request deadline, see
	// bodyDeadline).
	fresh := newFreshConns()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnState:         fresh.track,
		ErrorLog:          errLog,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Debug("serving MCP over HTTP", zap.Stringer("addr", ln.Addr()), zap.Bool("stateful", o.Stateful))

	select {
	case err := <-served:
		return fmt.Errorf("serving http on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}

	h.draining.Store(true)
	if o.ShutdownDelay > 0 {
		log.Info("draining: /ready answers 503, still serving", zap.Duration("shutdown_delay", o.ShutdownDelay))
		t := time.NewTimer(o.ShutdownDelay)
		select {
		case <-t.C:
		case err := <-served:
			t.Stop()
			return fmt.Errorf("serving http on %s: %w", ln.Addr(), err)
		}
	}
	log.Info("http shutdown started", zap.Duration("timeout", o.ShutdownTimeout))
	h.streams.drain()
	h.sse.drain()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownTimeout)
	defer cancel()
	fresh.closeAll()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("shutdown deadline passed: cancelling in-flight requests", zap.Error(err))
		cancelBase()
		_ = srv.Close() // its only error is the listener's, already closed
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving http on %s: %w", ln.Addr(), err)
	}
	log.Info("http server stopped")
	return nil
}

// freshConns tracks connections that have not carried a request yet.
// http.Server.Shutdown counts such a connection as active for its first 5
// seconds, and HTTP clients routinely dial one they end up not using (Go's
// transport races a new dial against a connection being returned to its
// pool), so one idle client could hold shutdown for 5 s. Once shutdown
// starts they are closed: no request has been read on them, and a request
// arriving now would be refused anyway.
type freshConns struct {
	mu      sync.Mutex
	closing bool
	conns   map[net.Conn]struct{}
}

func newFreshConns() *freshConns { return &freshConns{conns: make(map[net.Conn]struct{})} }

// track is the http.Server.ConnState hook.
func (f *freshConns) track(c net.Conn, st http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case st != http.StateNew:
		delete(f.conns, c)
	case f.closing:
		_ = c.Close()
	default:
		f.conns[c] = struct{}{}
	}
}

// closeAll closes the connections without a request, now and from now on.
func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closing = true
	for c := range f.conns {
		_ = c.Close()
	}
	clear(f.conns)
}
