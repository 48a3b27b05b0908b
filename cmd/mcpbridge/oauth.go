package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
	"github.com/mcpbridge/mcpbridge/sanitizer"
	"github.com/mcpbridge/mcpbridge/specloader"
)

// oauthFetchLimit bounds one token fetch whoever waits for it: both
// requests of the client-authentication probe (golang.org/x/oauth2 tries
// the secret in a Basic header, then in the form) and reading the answer.
// A call's own deadline (--timeout) usually ends its wait sooner.
const oauthFetchLimit = 30 * time.Second

// oauthRefusedEvery is how often at most an upstream's 401 makes the grant
// drop its token and fetch another before it expires: the first refusal
// of a revoked token (or one the authorization server no longer honours
// after rotating its keys) is acted on at once, but an upstream that
// refuses every token (a wrong scope or audience, or one operation that
// wants another credential) costs the token endpoint one request per
// interval, not one per call.
const oauthRefusedEvery = 10 * time.Second

// tokenSecrets is the set every redactor of the process masks the OAuth2
// access tokens with (nil when no grant is configured): logRedactor and
// bridgeOptions give it to their rules, the grant adds each token it
// obtains before using it. It keeps the last sanitizer.DefaultKeep tokens,
// so that a rotated-out token an upstream or a log line still echoes stays
// masked. run creates it (through logRedactor) before anything runs
// concurrently.
func (cfg *Config) tokenSecrets() *sanitizer.Secrets {
	grants := cfg.UpstreamAuth.OAuth2.on()
	for _, s := range cfg.UpstreamAuth.Schemes {
		grants = grants || s.OAuth2.on()
	}
	if !grants {
		return nil
	}
	if cfg.learned == nil {
		cfg.learned = sanitizer.NewSecrets(0)
	}
	return cfg.learned
}

// oauthGrant is the upstream's OAuth 2.0 client credentials grant. It
// caches the access token until shortly before it expires (oauth2.Token's
// Valid: 10 s), and fetches a new one when a call needs it: one fetch at a
// time, which every call needing a token meanwhile waits for, each only as
// long as its own context lasts. The fetch stops when the last call
// waiting for it has gone, and after oauthFetchLimit in any case. Every
// token is added to the redactors' secrets before any request carries it.
type oauthGrant struct {
	conf     clientcredentials.Config
	client   *http.Client       // token requests, with the upstream's TLS settings
	endpoint string             // the token URL, fit for messages (query masked)
	learn    *sanitizer.Secrets // every token obtained is added; nil: none
	limit    time.Duration
	every    time.Duration // oauthRefusedEvery
	log      *zap.Logger

	mu      sync.Mutex
	tok     *oauth2.Token // the last token obtained; nil: none yet, or dropped
	flight  *tokenFetch   // the fetch in progress; nil: none
	dropped time.Time     // when a refused token was last dropped
}

// tokenFetch is one fetch of a token and the calls waiting for it.
type tokenFetch struct {
	done    chan struct{} // closed when tok or err is set
	tok     *oauth2.Token
	err     error
	waiting int // calls waiting; at zero the fetch is abandoned
	cancel  context.CancelFunc
}

// newOAuthGrant prepares the grant o, configured at key (nil when o is
// not configured).
func (a *app) newOAuthGrant(o OAuth2, key string, tlsConf *tls.Config) *oauthGrant {
	if !o.on() {
		return nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConf != nil {
		tr.TLSClientConfig = tlsConf.Clone()
	}
	log := a.log
	if log == nil {
		log = zap.NewNop()
	}
	if u, err := url.Parse(o.TokenURL); err == nil && u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		fields := []zap.Field{zap.String("host", u.Host)}
		if key != "upstream-auth.oauth2" {
			fields = append(fields, zap.String("grant", key)) // a scheme's
		}
		log.Warn("the OAuth2 client secret will travel unencrypted: the token URL is plain http on a non-loopback host; use https", fields...)
	}
	return &oauthGrant{
		conf: clientcredentials.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, TokenURL: o.TokenURL, Scopes: o.Scopes, EndpointParams: o.endpointParams()},
		// The fetch's context bounds every request; the client adds no
		// limit of its own. A redirect to another origin is not followed:
		// Go's client would post the form again there, the client secret
		// in it when the endpoint refused it in a Basic header.
		client:   &http.Client{Transport: tr, CheckRedirect: upstream.SameOriginRedirects},
		endpoint: specloader.RedactURL(o.TokenURL),
		learn:    a.cfg.tokenSecrets(),
		limit:    oauthFetchLimit,
		every:    oauthRefusedEvery,
		log:      log,
	}
}

// token returns a valid access token: the cached one, or the result of
// the fetch in progress or of a new one. It returns as soon as ctx ends,
// with a *tokenError wrapping ctx's error.
func (g *oauthGrant) token(ctx context.Context) (*oauth2.Token, error) {
	g.mu.Lock()
	if g.tok.Valid() {
		tok := g.tok
		g.mu.Unlock()
		return tok, nil
	}
	f := g.flight
	if f == nil {
		// The fetch serves every call that comes while it runs, so it
		// takes the values of the first one's context (not its end).
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.limit)
		f = &tokenFetch{done: make(chan struct{}), cancel: cancel}
		g.flight = f
		go g.fetch(fctx, f)
	}
	f.waiting++
	g.mu.Unlock()

	select {
	case <-f.done:
		return f.tok, f.err
	case <-ctx.Done():
	}
	g.mu.Lock()
	f.waiting--
	if f.waiting == 0 && g.flight == f {
		// Nobody waits any more: stop the fetch; the next call starts
		// another.
		g.flight = nil
		f.cancel()
	}
	g.mu.Unlock()
	reason := "the call ended"
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		reason = "the call's time limit passed"
	}
	return nil, &tokenError{endpoint: g.endpoint, reason: "no access token yet when " + reason + " (the token endpoint has not answered)", err: ctx.Err()}
}

// fetch runs f: one token request (the client-authentication probe may
// make it two) bounded by ctx.
func (g *oauthGrant) fetch(ctx context.Context, f *tokenFetch) {
	defer f.cancel()
	start := time.Now()
	tok, err := g.conf.Token(context.WithValue(ctx, oauth2.HTTPClient, g.client))
	if err == nil && tok.AccessToken == "" {
		err = errors.New("oauth2: server response missing access_token")
	}
	if err == nil && badHeaderValue(tok.AccessToken) {
		// net/http would refuse every request carrying it, each time
		// with a "transport error" retried as if the upstream had failed.
		tok, err = nil, &tokenError{endpoint: g.endpoint, reason: "the access token it issued holds a control character, which no HTTP header may carry"}
	} else if err != nil {
		tok, err = nil, g.failure(ctx, err)
		if ctx.Err() == context.Canceled {
			// Nobody gets this error: the calls that waited logged a
			// timeout or a cancellation, without the cause.
			g.log.Warn("upstream OAuth2 token request abandoned: the calls waiting for it ended first", zap.String("token_url", g.endpoint), zap.Duration("took", time.Since(start)))
		}
	} else {
		// Masked from here on, in answers, errors and logs alike, before
		// any request carries it.
		if g.learn != nil {
			g.learn.Add(tok.AccessToken)
		}
		g.log.Debug("upstream OAuth2 token obtained", zap.Time("expiry", tok.Expiry), zap.Duration("took", time.Since(start)))
	}
	g.mu.Lock()
	if err == nil {
		g.tok = tok
	}
	if g.flight == f {
		g.flight = nil
	}
	f.tok, f.err = tok, err
	g.mu.Unlock()
	close(f.done)
}

// refused is told that the upstream answered 401 to a request carrying
// tok, and reports whether the request is worth sending again with the
// grant's next token. A tok still cached is dropped, so that the next call
// fetches another, unless a refused token was dropped less than g.every
// ago: then the upstream refuses fresh tokens too, and tok stays. A tok
// no longer cached was dropped (or replaced) by another call's refusal:
// its next token is the one to try.
func (g *oauthGrant) refused(tok *oauth2.Token) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tok != tok {
		return true
	}
	now := time.Now()
	if !g.dropped.IsZero() && now.Sub(g.dropped) < g.every {
		return false
	}
	g.tok, g.dropped = nil, now
	g.log.Warn("the upstream refused the OAuth2 access token (HTTP 401) before it expired: fetching another", zap.String("token_url", g.endpoint))
	return true
}

// setBearer sets the Authorization header of req to tok as a bearer token
// (RFC 6750), whatever its token_type: x/oauth2's SetAuthHeader writes
// the token_type the endpoint answered as the scheme ("N_A tok", "JWT
// tok"), which resource servers expecting "Bearer" refuse, and which the
// endpoint could make hold anything.
func setBearer(req *http.Request, tok *oauth2.Token) {
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
}

// errorCode is the shape of an RFC 6749 error code (invalid_client).
var errorCode = regexp.MustCompile(`^[a-z_]{1,64}$`)

// failure turns a failed fetch into a *tokenError. Its message says what
// went wrong without the token endpoint's body (which may echo the
// request, the client secret included) or its free-text description.
func (g *oauthGrant) failure(ctx context.Context, err error) *tokenError {
	te := &tokenError{endpoint: g.endpoint, err: err}
	var re *oauth2.RetrieveError
	var ue *url.Error
	var ne net.Error
	switch {
	case errors.As(err, &re) && re.Response != nil:
		te.reason = fmt.Sprintf("the token endpoint answered HTTP %d %s", re.Response.StatusCode, http.StatusText(re.Response.StatusCode))
		if errorCode.MatchString(re.ErrorCode) {
			te.reason += " (" + re.ErrorCode + ")"
		}
		te.err = nil // its text carries the body
	case ctx.Err() == context.DeadlineExceeded:
		// The fetch's own limit: the calls waiting for it still had time,
		// so this is the token endpoint failing, not a call's timeout.
		te.reason = fmt.Sprintf("timeout: the token endpoint did not answer within %s", g.limit)
		te.err = nil
	case ctx.Err() == context.Canceled:
		te.reason, te.err = "the fetch was abandoned", context.Canceled
	case errors.As(err, &ue):
		// Without the URL: its query may carry a credential.
		te.reason = "the token request failed: " + ue.Err.Error()
		te.err = ue.Err
	case errors.As(err, &ne):
		te.reason = "the token request failed: " + ne.Error()
	default:
		te.reason = "the token endpoint's answer is not a token response"
		te.err = nil
	}
	return te
}

// tokenError reports that a call could not get an access token. Its
// message names the token endpoint (query masked) and what went wrong,
// never the client secret, a token or the endpoint's answer; it unwraps to
// the cause (context.DeadlineExceeded when time ran out).
type tokenError struct {
	endpoint string
	reason   string
	err      error
}

func (e *tokenError) Error() string {
	return "no upstream OAuth2 access token from " + e.endpoint + ": " + e.reason
}

func (e *tokenError) Unwrap() error { return e.err }

// FailureKind is what a client may be told: the same message, which holds
// nothing secret. The call path names a failed send with
// upstream.FailureKind, which does not consult this method yet, so the
// client reads a generic "transport error" while the log has this text.
func (e *tokenError) FailureKind() string { return e.Error() }

// oauthClient sends every upstream request with the grant's access token
// as "Authorization: Bearer". It sits outside the retrying upstream client:
// a call gets its token once, a failed fetch is not retried as if the
// upstream had failed, and the wait for a token counts against the call's
// deadline like the rest of the call. An upstream's 401 to a token before
// its expiry (revoked, or signed with keys since rotated) drops the token
// (see oauthGrant.refused), and the request is sent once more with a new
// one when its body can be sent again: a 401 is a refusal to act on the
// request at all.
//
// A tool call whose security schemes (upstream-auth.schemes) set the
// Authorization header itself keeps it (bridge.RequestAuth); one whose
// scheme is an oauth2 grant gets that grant's token instead of grant's.
type oauthClient struct {
	next    bridge.Doer
	grant   *oauthGrant            // upstream-auth.oauth2; nil: none
	schemes map[string]*oauthGrant // upstream-auth.schemes' grants, by scheme name
}

var _ bridge.Doer = (*oauthClient)(nil)

func (c *oauthClient) Do(req *http.Request) (*http.Response, error) {
	grant := c.grant
	if use := bridge.RequestAuth(req.Context()); use.Grant != "" {
		grant = c.schemes[use.Grant]
		if grant == nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, fmt.Errorf("security scheme %s: no OAuth2 grant configured", use.Grant)
		}
	} else if use.Authorization || grant == nil {
		return c.next.Do(req)
	}
	return grant.do(c.next, req)
}

// do sends req through next with g's access token (see oauthClient).
func (g *oauthGrant) do(next bridge.Doer, req *http.Request) (*http.Response, error) {
	tok, err := g.token(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close() // as http.Client.Do does on every error
		}
		return nil, err
	}
	out := req.Clone(req.Context()) // the caller's request stays as it was
	setBearer(out, tok)
	resp, err := next.Do(out)
	if err != nil || resp.StatusCode != http.StatusUnauthorized || !g.refused(tok) {
		return resp, err
	}
	again := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		if req.GetBody == nil {
			return resp, nil // sent once, and cannot be sent again
		}
		if again.Body, err = req.GetBody(); err != nil {
			return resp, nil
		}
	}
	fresh, err := g.token(req.Context())
	if err != nil || fresh.AccessToken == tok.AccessToken {
		// No other token to try: the upstream's refusal is the answer.
		if err != nil {
			g.log.Warn("no new OAuth2 access token after the upstream refused the last one", zap.Error(err))
		}
		if again.Body != nil {
			again.Body.Close()
		}
		return resp, nil
	}
	// Read a little of the refusal, so that its connection may be reused.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	setBearer(again, fresh)
	return next.Do(again)
}

// loopbackHost reports whether host (no port) names this machine.
func loopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// endpointParams are the token request's parameters besides the grant's
// own: audience and resource, when set (nil when neither is).
func (o OAuth2) endpointParams() url.Values {
	if o.Audience == "" && o.Resource == "" {
		return nil
	}
	v := url.Values{}
	if o.Audience != "" {
		v.Set("audience", o.Audience)
	}
	if o.Resource != "" {
		v.Set("resource", o.Resource)
	}
	return v
}
