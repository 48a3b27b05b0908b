package transport

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults for the zero values of HTTPOptions.
const (
	DefaultListen            = "127.0.0.1:8080"
	DefaultSessionTimeout    = 30 * time.Minute
	DefaultMaxBodyBytes      = 4 << 20
	DefaultKeepAlive         = 30 * time.Second
	DefaultShutdownTimeout   = 15 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxJSONDepth      = 64

	DefaultMaxSessions              = 1000
	DefaultMaxSessionsPerIdentity   = 64
	DefaultMaxSSEStreams            = 1000
	DefaultMaxSSEStreamsPerIdentity = 64

	// jwtLeeway is the clock skew tolerated on exp, nbf and iat.
	jwtLeeway = 30 * time.Second
)

// Status is what /health reports and /ready decides on. The process fills it
// in (HTTPOptions.Status); the transport only serializes it.
type Status struct {
	Version         string `json:"version,omitempty"`
	Transport       string `json:"transport,omitempty"`
	UpstreamBaseURL string `json:"upstream_base_url,omitempty"`
	Tools           int    `json:"tools"`      // every tool a call may name, built-ins included
	Listed          int    `json:"listed"`     // the tools tools/list shows (fewer in dynamic and hybrid mode)
	Operations      int    `json:"operations"` // the tools that call an upstream operation
	Degraded        bool   `json:"degraded"`
	Ready           bool   `json:"ready"` // spec loaded and tools registered
}

// HTTPOptions configures NewHTTPHandler and ServeHTTP. Every zero value is a
// usable default, stated on its field.
type HTTPOptions struct {
	// Listen is the address to bind; "" means 127.0.0.1:8080.
	Listen string
	// Stateful switches /mcp to sessions (Mcp-Session-Id, GET stream, DELETE);
	// false serves stateless streamable HTTP, the only mode that speaks the
	// 2026-07-28 revision and that needs no session affinity.
	Stateful bool
	// SessionTimeout closes idle sessions in stateful mode; 0 means 30m.
	SessionTimeout time.Duration
	// APIKeys are static inbound credentials, accepted as
	// "Authorization: Bearer KEY" (or X-API-Key when AllowAPIKeyHeader).
	// They are kept only as SHA-256 digests and compared in constant time.
	APIKeys []string
	// APIKeyNames name the keys of APIKeys, by position (shorter or ""
	// entries: unnamed). A named key's caller is "api-key:NAME", whatever
	// its place; an unnamed one's is "api-key:N", its index in APIKeys,
	// which a key removed before it shifts, handing its access rules and
	// quota to the next.
	APIKeyNames []string
	// AllowAPIKeyHeader also accepts an API key in the X-API-Key header.
	AllowAPIKeyHeader bool
	// AllowedOrigins lists the browser origins ("https://app.example.com")
	// allowed to call /mcp, /sse and /messages; a request with any other
	// Origin header gets 403. Empty means only loopback origins
	// (http(s)://localhost:*, 127.0.0.1:*, [::1]:*) and, with inbound auth,
	// the request's own host (without auth a DNS-rebinding page names its
	// own host as both).
	// Requests without an Origin header (non-browser clients) are not affected.
	AllowedOrigins []string
	// AllowedHosts lists Host header values ("mcp.example.com", or with a
	// port, "mcp.example.com:443") a loopback listener accepts besides
	// loopback names, for a bridge on 127.0.0.1 behind a reverse proxy on
	// the same machine or pod that passes the client's Host on (Envoy,
	// Caddy, Traefik, oauth2-proxy and nginx with proxy_set_header Host
	// $host do). A name without a port matches any port. Empty: only
	// loopback names, the DNS-rebinding check go-sdk applies. A listener
	// that is not loopback checks no Host.
	AllowedHosts []string
	// TrustedProxies are the addresses (CIDR prefixes or single IPs) of
	// reverse proxies whose X-Forwarded-For is believed: a request from
	// one of them is taken as coming from the rightmost address of that
	// header that is not itself a trusted proxy, for per-IP caps and
	// quotas and the logs. Empty: the connection's address, always (a
	// forwarded header is the client's to write).
	TrustedProxies []string
	// JWKSURL turns on JWT bearer verification (RS*, PS*, ES*, EdDSA) against
	// the keys published there. It requires JWTIssuer, and an audience
	// (JWTAudience or ResourceURL).
	JWKSURL string
	// JWTIssuer is the required "iss" claim.
	JWTIssuer string
	// JWTAudience is the required "aud" claim; "" means ResourceURL (RFC 8707).
	JWTAudience string
	// ResourceURL is the bridge's public URL (RFC 9728 "resource"), for
	// example https://api.example.com/mcp. "" derives it from each request
	// (scheme + Host + "/mcp"), which is fine for metadata discovery but never
	// used as a JWT audience, since the Host header is client-controlled.
	ResourceURL string
	// AuthorizationServers are the issuer URLs listed in the protected
	// resource metadata; nil lists none.
	AuthorizationServers []string
	// NoAuth explicitly turns inbound authentication off. It conflicts with
	// APIKeys and JWKSURL. Without it, and without credentials configured,
	// auth is off only on a loopback listener: any other address is refused
	// (NewHTTPHandler and ServeHTTP return an error), so that serving every
	// tool to the network unauthenticated is always a stated choice.
	NoAuth bool
	// MaxBodyBytes caps a POST body; 0 means 4 MiB. Larger bodies get 413.
	MaxBodyBytes int64
	// KeepAlive is the interval of ": keepalive" comments on idle SSE
	// streams; 0 means 30s, negative disables them.
	KeepAlive time.Duration
	// ShutdownTimeout is how long in-flight calls may run once shutdown
	// starts before they are cancelled; 0 means 15s.
	ShutdownTimeout time.Duration
	// ShutdownDelay is how long the server keeps serving once shutdown
	// starts, with /ready answering 503 {"ready":false,"draining":true}, before
	// the listener closes: a load balancer polling /ready (a Kubernetes
	// readiness probe) stops sending new requests to this replica while the
	// calls it already sent still land. 0 (the default) closes at once.
	ShutdownDelay time.Duration
	// ReadHeaderTimeout bounds reading request headers; 0 means 10s.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a request body, counted from the end of its
	// headers, however slowly it arrives; 0 means 30s. A body not received in
	// time gets 408 and the connection is closed. It is a per-request read
	// deadline, not http.Server.ReadTimeout: it is lifted once the body has
	// been read, so long-lived SSE streams and slow tool calls are not cut.
	// It also bounds each write of a response on /mcp, /sse and Routes
	// (64 KiB at most): a client that stops reading loses its connection instead of
	// holding the handler and the answer for as long as it stays connected.
	ReadTimeout time.Duration
	// IdleTimeout closes keep-alive connections that carry no request for
	// this long; 0 means 2m.
	IdleTimeout time.Duration
	// MaxJSONDepth caps the nesting of arrays and objects in a POST body,
	// checked with a byte scan before go-sdk decodes it; 0 means 64. Deeper
	// bodies get 400 with a JSON-RPC Invalid Request error (-32600).
	MaxJSONDepth int
	// MaxSessions caps the stateful sessions open at once (Stateful only);
	// 0 means 1000. A new session over the cap gets 503 with a JSON-RPC
	// error body. A slot is freed when its session ends: DELETE, idle
	// SessionTimeout, or the server closing it.
	MaxSessions int
	// MaxSessionsPerIdentity caps the stateful sessions one caller may hold;
	// 0 means 64. The caller is the authenticated principal, or the remote IP
	// address when auth is off (forwarding headers are not trusted, so
	// behind a proxy every unauthenticated client shares the proxy's
	// address: raise this to MaxSessions there). Over the cap: 429.
	MaxSessionsPerIdentity int
	// MaxSSEStreams caps the legacy GET /sse streams (each is a session)
	// open at once; 0 means 1000. Over the cap: 503.
	MaxSSEStreams int
	// MaxSSEStreamsPerIdentity caps the legacy SSE streams one caller (as
	// for MaxSessionsPerIdentity) may hold; 0 means 64. Over the cap: 429.
	MaxSSEStreamsPerIdentity int
	// Routes are extra handlers (ServeMux patterns such as "/api/") served
	// behind the same Host and Origin checks and authentication as /mcp;
	// the caller's identity is in the request context as go-sdk's
	// auth.TokenInfo (auth.TokenInfoFromContext). The REST facade uses it.
	Routes map[string]http.Handler
	// PublicRoutes are served behind the Host and Origin checks only, with
	// no credential (/metrics).
	PublicRoutes map[string]http.Handler
	// Status feeds /health and /ready; nil reports only {"status":"ok"} and
	// ready.
	Status func() Status
	// Listener, when set, is served instead of binding Listen (tests use
	// port 0). ServeHTTP closes it on shutdown.
	Listener net.Listener
	// OnListen, when set, is called once with the bound address before
	// serving starts.
	OnListen func(addr net.Addr)
}

// withDefaults returns o with its zero values replaced by the defaults.
func (o HTTPOptions) withDefaults() HTTPOptions {
	if o.Listen == "" {
		o.Listen = DefaultListen
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.ReadHeaderTimeout == 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = DefaultReadTimeout
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxJSONDepth == 0 {
		o.MaxJSONDepth = DefaultMaxJSONDepth
	}
	if o.MaxSessions == 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxSessionsPerIdentity == 0 {
		o.MaxSessionsPerIdentity = DefaultMaxSessionsPerIdentity
	}
	if o.MaxSSEStreams == 0 {
		o.MaxSSEStreams = DefaultMaxSSEStreams
	}
	if o.MaxSSEStreamsPerIdentity == 0 {
		o.MaxSSEStreamsPerIdentity = DefaultMaxSSEStreamsPerIdentity
	}
	return o
}

// authConfigured reports whether any inbound credential is configured.
func (o HTTPOptions) authConfigured() bool {
	return len(o.APIKeys) > 0 || o.JWKSURL != ""
}

// advertiseOAuth reports whether an authorization server stands behind the
// bridge, so that a 401 may send clients to the RFC 9728 metadata and an
// OAuth flow. Static API keys alone have no such server.
func (o HTTPOptions) advertiseOAuth() bool {
	return len(o.AuthorizationServers) > 0 || o.JWKSURL != ""
}

// listenAddr is the address served: the Listener's, or Listen.
func (o HTTPOptions) listenAddr() string {
	if o.Listener != nil {
		return o.Listener.Addr().String()
	}
	return o.Listen
}

// validate reports every problem in o at once. o has its defaults applied.
func (o HTTPOptions) validate() error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	listenOK := true
	if o.Listener == nil {
		if _, _, err := net.SplitHostPort(o.Listen); err != nil {
			add("Listen (--listen) %q: %w", o.Listen, err)
			listenOK = false
		}
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{
		{"SessionTimeout (--session-timeout)", o.SessionTimeout},
		{"ShutdownTimeout (--shutdown-timeout)", o.ShutdownTimeout},
		{"ShutdownDelay (--shutdown-delay)", o.ShutdownDelay},
		{"ReadHeaderTimeout", o.ReadHeaderTimeout},
		{"ReadTimeout (--read-timeout)", o.ReadTimeout},
		{"IdleTimeout (--idle-timeout)", o.IdleTimeout},
	} {
		if d.d < 0 {
			add("%s is negative (%s)", d.name, d.d)
		}
	}
	if o.MaxBodyBytes < 0 {
		add("MaxBodyBytes (--max-body-bytes) is negative (%d)", o.MaxBodyBytes)
	}
	for _, n := range []struct {
		name string
		n    int
	}{
		{"MaxJSONDepth (--max-json-depth)", o.MaxJSONDepth},
		{"MaxSessions (--max-sessions)", o.MaxSessions},
		{"MaxSessionsPerIdentity (--max-sessions-per-identity)", o.MaxSessionsPerIdentity},
		{"MaxSSEStreams (--max-sse-streams)", o.MaxSSEStreams},
		{"MaxSSEStreamsPerIdentity (--max-sse-streams-per-identity)", o.MaxSSEStreamsPerIdentity},
	} {
		if n.n < 0 {
			add("%s is negative (%d): limits cannot be turned off, only raised", n.name, n.n)
		}
	}
	for i, k := range o.APIKeys {
		switch {
		case k == "":
			add("APIKeys[%d] is empty", i)
		case strings.TrimSpace(k) != k:
			add("APIKeys[%d] has leading or trailing white space", i)
		}
	}
	seen := map[string]bool{}
	for i, name := range o.APIKeyNames {
		switch {
		case name == "":
		case !validKeyName(name):
			add("APIKeyNames[%d] %q is not a key name: 1 to 64 letters, digits, '_', '-' or '.', not all digits (api-key:N names the unnamed N-th key)", i, name)
		case seen[name]:
			add("APIKeyNames[%d]: two keys are named %q", i, name)
		}
		seen[name] = true
	}
	if _, err := parseTrustedProxies(o.TrustedProxies); err != nil {
		add("TrustedProxies (--trusted-proxy): %w", err)
	}
	for _, host := range o.AllowedHosts {
		if _, err := normalizeHost(host); err != nil {
			add("AllowedHosts (--allowed-host): %w", err)
		}
	}
	for _, origin := range o.AllowedOrigins {
		if _, err := normalizeOrigin(origin); err != nil {
			add("AllowedOrigins (--allowed-origin): %w", err)
		}
	}
	if o.NoAuth && o.authConfigured() {
		add("NoAuth conflicts with APIKeys/JWKSURL: drop one or the other")
	}
	if addr := o.listenAddr(); listenOK && !o.NoAuth && !o.authConfigured() && !isLoopbackHost(addr) {
		add("refusing to serve without inbound auth on non-loopback address %q: anyone who can reach it could call every tool; "+
			"configure credentials (APIKeys or JWKSURL: --api-key, --api-key-file or --jwks-url), "+
			"or set NoAuth (--no-auth) to serve unauthenticated on purpose", addr)
	}
	if o.ResourceURL != "" {
		if err := checkHTTPURL(o.ResourceURL, false); err != nil {
			add("ResourceURL (--resource-url): %w", err)
		}
	}
	for i, as := range o.AuthorizationServers {
		if err := checkHTTPURL(as, true); err != nil {
			add("AuthorizationServers[%d] (--authorization-server): %w", i, err)
		}
	}
	if o.JWKSURL != "" {
		if err := checkHTTPURL(o.JWKSURL, true); err != nil {
			add("JWKSURL (--jwks-url): %w", err)
		}
		if o.JWTIssuer == "" {
			add("JWKSURL (--jwks-url) needs JWTIssuer (--jwt-issuer): without an issuer check any token signed by those keys is accepted")
		}
		if o.JWTAudience == "" && o.ResourceURL == "" {
			add("JWKSURL (--jwks-url) needs JWTAudience (--jwt-audience) or ResourceURL (--resource-url): an audience derived from the client-controlled Host header would not bind tokens to this server")
		}
	} else if o.JWTIssuer != "" || o.JWTAudience != "" {
		add("JWTIssuer/JWTAudience (--jwt-issuer/--jwt-audience) are set but JWKSURL (--jwks-url) is empty")
	}
	return errors.Join(errs...)
}

// checkHTTPURL checks that raw is an absolute http(s) URL without fragment.
// When httpsUnlessLoopback, plain http is accepted only for a loopback host.
func checkHTTPURL(raw string, httpsUnlessLoopback bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	if u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q must not carry a fragment or user info", raw)
	}
	if httpsUnlessLoopback && u.Scheme == "http" && !isLoopbackHost(u.Host) {
		return fmt.Errorf("%q must use https (plain http only on loopback)", raw)
	}
	return nil
}

// validKeyName reports whether name may name an inbound key (api-key:NAME):
// 1 to 64 of [A-Za-z0-9_.-], not all digits, which would read as the
// position of an unnamed key.
func validKeyName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	digits := true
	for _, c := range name {
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '-', c == '.':
			digits = false
		default:
			return false
		}
	}
	return !digits
}
