// Package upstream is the HTTP client toward the upstream API: keep-alive
// connections, redirects only within the upstream's origin (followed by one
// client, at most 5), and go-retryablehttp retries for idempotent calls only.
// It also reads answers within a size limit and names transport failures
// without echoing URLs (which may carry a query credential).
package upstream

import (
	"context"
	"crypto/tls"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"go.uber.org/zap"
)

// Doer sends one HTTP request. *http.Client satisfies it; production uses
// the retrying client from [New], tests a plain client pointed
// at an httptest server.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

var _ Doer = (*http.Client)(nil)

// Options configures [New]. The zero value is usable.
type Options struct {
	// Retries is the number of retries after the first attempt for
	// retryable calls; 0 means 2, a negative value disables retries.
	Retries int
	// RetryWaitMin and RetryWaitMax bound the exponential backoff between
	// attempts; zeros mean 100ms and 5s. A Retry-After header on 429/503
	// takes precedence, but a wait longer than the call's remaining deadline
	// is not attempted: the upstream's answer is returned instead.
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxIdleConnsPerHost sizes the keep-alive pool; 0 means 64.
	MaxIdleConnsPerHost int
	// Logger receives one debug line per retry; nil means no logging.
	Logger *zap.Logger
	// Transport, when set, wraps the transport that sends every attempt:
	// each retry and each redirect hop passes through the wrapper once, and
	// it may add headers (tracing injects traceparent here). nil (the
	// default) leaves the transport as is, at no cost.
	Transport func(http.RoundTripper) http.RoundTripper
	// TLS configures connections to the upstream (a private CA bundle, a
	// client certificate for mTLS); nil means the system roots.
	TLS *tls.Config
}

// retryKey marks a request context as safe to retry.
type retryKey struct{}

// WithRetry returns ctx marked so that the upstream client may retry the
// request it carries. Only idempotent calls are marked.
func WithRetry(ctx context.Context) context.Context {
	return context.WithValue(ctx, retryKey{}, true)
}

// attemptsKey carries the *atomic.Int32 that counts the attempts of a call.
type attemptsKey struct{}

// WithAttempts returns ctx carrying a counter that the client sets to the
// number of attempts made for the request (retries included). A request
// sent without retries leaves it at zero: one attempt.
func WithAttempts(ctx context.Context, n *atomic.Int32) context.Context {
	return context.WithValue(ctx, attemptsKey{}, n)
}

func retryAllowed(ctx context.Context) bool {
	v, _ := ctx.Value(retryKey{}).(bool)
	return v
}

// New returns the HTTP client the bridge uses toward the
// upstream: keep-alive connections, no redirects followed across hosts
// silently changed (the standard policy), and go-retryablehttp retries on
// connection errors, 429, 502, 503 and 504 for requests whose context was
// marked retryable (idempotent methods or operations whitelisted as
// idempotent). POST and PATCH are never retried by default.
func New(opts Options) Doer {
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if opts.TLS != nil {
		tr.TLSClientConfig = opts.TLS.Clone()
	}
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = opts.MaxIdleConnsPerHost
	if tr.MaxIdleConnsPerHost == 0 {
		tr.MaxIdleConnsPerHost = 64
	}
	tr.ResponseHeaderTimeout = 0 // the per-call context deadline bounds it
	var rt http.RoundTripper = tr
	if opts.Transport != nil {
		rt = opts.Transport(tr)
	}
	rc := retryablehttp.NewClient()
	rc.HTTPClient = &http.Client{Transport: rt}
	rc.Logger = nil // never the library's default stderr logger
	rc.RetryMax = opts.Retries
	switch {
	case rc.RetryMax == 0:
		rc.RetryMax = 2
	case rc.RetryMax < 0:
		rc.RetryMax = 0
	}
	rc.RetryWaitMin = opts.RetryWaitMin
	if rc.RetryWaitMin == 0 {
		rc.RetryWaitMin = 100 * time.Millisecond
	}
	rc.RetryWaitMax = opts.RetryWaitMax
	if rc.RetryWaitMax == 0 {
		rc.RetryWaitMax = 5 * time.Second
	}
	rc.CheckRetry = checkRetry
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	rc.RequestLogHook = func(_ retryablehttp.Logger, req *http.Request, attempt int) {
		if n, ok := req.Context().Value(attemptsKey{}).(*atomic.Int32); ok {
			n.Store(int32(attempt + 1))
		}
		if attempt > 0 {
			log.Debug("retrying upstream request", zap.String("method", req.Method), zap.String("path", req.URL.Path), zap.Int("attempt", attempt))
		}
	}
	rc.HTTPClient.CheckRedirect = SameOriginRedirects
	return &upstreamClient{direct: rc.HTTPClient, retrying: rc}
}

// SameOriginRedirects follows at most 5 redirects, and only within the
// upstream's scheme and host: a redirect elsewhere would carry the
// configured API key headers to a host nobody configured. Such a response
// is returned as is (a 3xx the agent sees as an error). It is an
// http.Client's CheckRedirect.
func SameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return http.ErrUseLastResponse
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return http.ErrUseLastResponse
	}
	// net/http sets Referer to the previous URL, whose query may hold a
	// credential (api_key=...): the upstream need not see it again in a
	// header it may log or echo.
	req.Header.Del("Referer")
	return nil
}

// upstreamClient sends requests that may not be retried straight through
// the transport, and the others through go-retryablehttp, whose wrapper
// (buffering, hooks, policy calls) costs ~15 µs a call for nothing when no
// retry is allowed. The retrying ones go to its Client.Do directly, not
// through StandardClient: that would put a second http.Client (and ~2 KB
// of stack, which every call's fresh goroutine then copies while growing)
// under each call, and make two clients follow redirects.
type upstreamClient struct {
	direct   *http.Client
	retrying *retryablehttp.Client
}

func (c *upstreamClient) Do(req *http.Request) (*http.Response, error) {
	if !retryAllowed(req.Context()) {
		return c.direct.Do(req)
	}
	rreq, err := retryablehttp.FromRequest(req)
	if err != nil {
		return nil, err
	}
	return c.retrying.Do(rreq)
}

// checkRetry is the idempotent-only retry policy.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil || !retryAllowed(ctx) {
		return false, nil
	}
	if err != nil {
		// A transport failure (refused, reset, EOF mid-response): the
		// request is idempotent, so trying again is safe; an answer that
		// is not HTTP will not be on the next try either.
		return !malformed(err), nil
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
	default:
		return false, nil
	}
	if wait, ok := retryAfter(resp); ok {
		if dl, has := ctx.Deadline(); has && time.Until(dl) < wait {
			return false, nil
		}
	}
	return true, nil
}

func retryAfter(resp *http.Response) (time.Duration, bool) {
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t), true
	}
	return 0, false
}
