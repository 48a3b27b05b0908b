package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
)

// httpHandler routes the HTTP transport and holds what shutdown drains.
type httpHandler struct {
	root    http.Handler // mux behind the body read deadline
	mux     *http.ServeMux
	streams *streamGroup
	sse     *sseHandler
	// draining is set when shutdown starts: /ready answers 503 from then.
	draining atomic.Bool
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.root.ServeHTTP(w, r) }

// NewHTTPHandler returns the HTTP transport for s as an http.Handler, for
// callers that run their own http.Server; ServeHTTP adds the listener and
// graceful shutdown (draining the long-lived streams). It returns every
// problem in opts at once. Routes:
//
//	/mcp                                       streamable HTTP (go-sdk)
//	GET /sse, POST /messages?sessionId=ID      legacy HTTP+SSE (2024-11-05)
//	GET /health, GET /ready                    liveness and readiness
//	/.well-known/oauth-protected-resource[/mcp] RFC 9728 metadata, when an
//	                                           authorization server is configured
//
// Every request with a body gets ReadTimeout to deliver it (408 after). The
// MCP routes (/mcp, /sse, /messages) then pass, in order: the DNS-rebinding
// Host check, the Origin check (403) and CORS, authentication (401, sent
// before any body is read), removal of the credential headers, the body
// check (POST: 413, 400), the session and stream caps (429, 503), and the
// keepalive writer. /health and /ready pass the same Host and Origin checks
// but need no credential; /health shows the upstream URL only to an
// authenticated caller when auth is on. The metadata is public.
//
// Listen (or Listener) is read only to decide whether a configuration
// without credentials is loopback-only (elsewhere it is refused unless
// NoAuth is set). When JWKSURL is set, the JWKS is
// fetched once here and refreshed hourly for the life of the process, since
// no context bounds a handler; ServeHTTP stops the refresh on shutdown.
func NewHTTPHandler(s *mcp.Server, opts HTTPOptions, log *zap.Logger) (http.Handler, error) {
	return newHTTPHandler(context.Background(), s, opts, log)
}

// newHTTPHandler builds the handler; ctx bounds background work (JWKS
// refresh).
func newHTTPHandler(ctx context.Context, s *mcp.Server, opts HTTPOptions, log *zap.Logger) (*httpHandler, error) {
	if log == nil {
		log = zap.NewNop()
	}
	o := opts.withDefaults()
	err := o.validate()
	if s == nil {
		err = errors.Join(errors.New("no *mcp.Server to serve"), err)
	}
	if err != nil {
		return nil, fmt.Errorf("invalid HTTP transport options:\n%w", err)
	}

	var authn *authenticator
	if o.authConfigured() {
		var jwt *jwtVerifier
		if o.JWKSURL != "" {
			if jwt, err = newJWTVerifier(ctx, o, log); err != nil {
				return nil, err
			}
		}
		authn = newAuthenticator(o, jwt)
	} else {
		logAuthOff(o, log)
	}

	h := &httpHandler{
		mux:     http.NewServeMux(),
		streams: newStreamGroup(),
		sse: newSSEHandler(s, o.MaxBodyBytes,
			newLimiter("SSE streams", o.MaxSSEStreams, o.MaxSSEStreamsPerIdentity), log),
	}
	proxies, _ := parseTrustedProxies(o.TrustedProxies) // validate checked them
	h.root = forwardedFor(proxies, bodyDeadline(o.ReadTimeout, h.mux))
	var (
		events mcp.EventStore
		caps   func(http.Handler) http.Handler = func(h http.Handler) http.Handler { return h }
		hand                                   = handOffHTTP    // large results past go-sdk's encodings
		calls                                  = newCallTable() // notifications/cancelled across POSTs
	)
	if o.Stateful {
		// Resumable streams (Last-Event-ID) and the SSE priming event need an
		// event store; the in-memory one is bounded (10 MiB, oldest purged).
		// The session cap watches it to learn when sessions end.
		sc := newSessionCaps(mcp.NewMemoryEventStore(nil),
			newLimiter("stateful sessions", o.MaxSessions, o.MaxSessionsPerIdentity), log)
		events, caps = sc, sc.wrap
		// No handoff (see handOffHTTP); an unknown session's 404 says why.
		hand = sessionHint
		calls = nil // go-sdk's session sees both messages
	}
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		Stateless:           !o.Stateful,
		EventStore:          events,
		SessionTimeout:      o.SessionTimeout,
		MaxRequestBodyBytes: o.MaxBodyBytes,
		Logger:              slog.New(zapslog.NewHandler(log.Core(), zapslog.WithName("mcp"))),
		// A 2026-07-28 call whose client went away (or that shutdown
		// force-closes) cancels its handler, and so its upstream request.
		PropagateRequestCancellation: true,
		// guard runs go-sdk's Host check on every route, with the
		// --allowed-host names go-sdk cannot be told of.
		DisableLocalhostProtection: len(o.AllowedHosts) > 0,
	})
	g := guard{origins: newOriginPolicy(o.AllowedOrigins, authn != nil), hosts: newHostPolicy(o.AllowedHosts), auth: authn, log: log}

	h.mux.Handle("/mcp", g.wrap(checkBody(o.MaxBodyBytes, o.MaxJSONDepth, o.Stateful, calls, h.streams.track(caps(keepAlive(o.KeepAlive, o.ReadTimeout, hand(streamable)))))))
	h.mux.Handle(ssePath, g.wrap(keepAlive(o.KeepAlive, o.ReadTimeout, http.HandlerFunc(h.sse.serveStream))))
	h.mux.Handle(messagesPath, g.wrap(checkBody(o.MaxBodyBytes, o.MaxJSONDepth, false, nil, http.HandlerFunc(h.sse.serveMessage))))
	h.mux.Handle("/health", g.screened(healthHandler(o.Status, g.authenticated)))
	h.mux.Handle("/ready", g.screened(readyHandler(o.Status, h.draining.Load)))
	for pattern, route := range o.Routes {
		// The same bound on each write (the REST facade's answers are as
		// large as /mcp's), and comments on an event stream (its streamed
		// call, waiting for a slow upstream behind a proxy's idle timeout).
		h.mux.Handle(pattern, g.wrap(keepAlive(o.KeepAlive, o.ReadTimeout, route)))
	}
	for pattern, route := range o.PublicRoutes {
		h.mux.Handle(pattern, g.screened(route))
	}
	if authn != nil && o.advertiseOAuth() {
		meta := authn.metadataHandler(o.AuthorizationServers)
		h.mux.Handle(wellKnownPRM, meta)
		h.mux.Handle(wellKnownPRM+"/", meta)
	}
	return h, nil
}

// logAuthOff says why inbound auth is off (validate refused the other
// cases).
func logAuthOff(o HTTPOptions, log *zap.Logger) {
	addr := o.listenAddr()
	if o.NoAuth {
		log.Info("inbound auth disabled (NoAuth)", zap.String("listen", addr))
		return
	}
	log.Info("inbound auth off: loopback listener and no API keys or JWKS configured", zap.String("listen", addr))
}

// guard is the access control in front of every MCP route.
type guard struct {
	origins originPolicy
	hosts   hostPolicy     // accepted besides loopback names on a loopback listener
	auth    *authenticator // nil: auth off
	log     *zap.Logger
}

func (g guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.screen(w, r) {
			return
		}
		r = withRemote(r)
		if g.auth == nil {
			next.ServeHTTP(w, stripCredentials(r))
			return
		}
		p, aerr := g.auth.authenticate(r)
		if aerr != nil {
			g.reject(r, aerr.desc)
			g.auth.challenge(w, r, aerr)
			return
		}
		g.auth.bindPrincipal(w, stripCredentials(r), p, next)
	})
}

// RemoteHeader carries the client's network address (as net/http saw it,
// never a forwarded header) to what serves the request, go-sdk tool
// handlers included, which see only headers. An inbound value is replaced.
const RemoteHeader = "X-Mcpbridge-Remote"

func withRemote(r *http.Request) *http.Request {
	// A shallow copy with its own headers (what Clone would deep-copy
	// besides, the URL, forms and trailers, nothing downstream modifies).
	r2 := r.WithContext(r.Context())
	r2.Header = r.Header.Clone()
	if r2.Header == nil {
		r2.Header = http.Header{}
	}
	r2.Header.Set(RemoteHeader, r.RemoteAddr)
	return r2
}

// Screened returns next behind the Host and Origin checks (and CORS) of the
// MCP routes, with allowedOrigins as --allowed-origin gives them (none: the
// loopback default), for a listener of its own such as --metrics-listen's
// /metrics: a web page that reached a loopback listener by DNS rebinding,
// or any foreign browser origin, gets 403. Refusals are logged at DEBUG on
// log (nil: not logged).
func Screened(next http.Handler, allowedOrigins []string, log *zap.Logger) http.Handler {
	if log == nil {
		log = zap.NewNop()
	}
	return guard{origins: newOriginPolicy(allowedOrigins, false), log: log}.screened(next) // no credentials on that listener
}

// screened applies the Host and Origin checks (and CORS) of the MCP routes
// to a route that needs no credential.
func (g guard) screened(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.screen(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// screen runs the DNS-rebinding Host check, the Origin check and CORS. It
// reports whether the request goes on; if not, it has been answered.
func (g guard) screen(w http.ResponseWriter, r *http.Request) bool {
	if !hostAllowed(r, g.hosts) {
		g.reject(r, "host not allowed on a loopback listener")
		closeUnreadBody(w, r)
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return false
	}
	if !g.origins.allow(r) {
		g.reject(r, "origin not allowed")
		closeUnreadBody(w, r)
		http.Error(w, "Forbidden: origin not allowed", http.StatusForbidden)
		return false
	}
	return !cors(w, r) // a preflight is answered; browsers send no credentials on it
}

// authenticated reports whether r carries a valid credential, or auth is
// off.
func (g guard) authenticated(r *http.Request) bool {
	if g.auth == nil {
		return true
	}
	_, err := g.auth.authenticate(r)
	return err == nil
}

// reject logs a refused request at debug level, without any header value.
func (g guard) reject(r *http.Request, reason string) {
	if ce := g.log.Check(zap.DebugLevel, "request rejected"); ce != nil {
		ce.Write(zap.String("reason", reason), zap.String("method", r.Method),
			zap.String("path", r.URL.Path), zap.String("remote", r.RemoteAddr))
	}
}
