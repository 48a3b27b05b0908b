// Package upstream is the HTTP client toward the upstream API: keep-alive
// connections, redirects only within the upstream's origin (followed by one
// client, at most 5), and go-retryablehttp retries for idempotent calls only.
// It also reads answers within a size limit and names transport failures
// without echoing URLs (which may carry a query credential).
package upstream

import (
	"context"
	"crypto/tls"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
	// attempts; zeros mean 100ms and 5s. A Retry-After header on a
	// retried status (429, 502, 503, 504) takes precedence. A wait (backoff or Retry-After) longer than the
	// call's remaining deadline is not attempted: the last answer (or
	// transport error) is returned at once instead of a timeout.
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
	switch v := ctx.Value(retryKey{}).(type) {
	case bool:
		return v
	case *retryState:
		return true
	}
	return false
}

// retryState is the retry loop's position in one call, under retryKey in
// the context of a request the retrying client sends.
type retryState struct {
	attempt int // 0 for the first
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
	tr.OnProxyConnectResponse = proxyRefused
	var rt http.RoundTripper = tr
	if opts.Transport != nil {
		rt = opts.Transport(tr)
	}
	rc := retryablehttp.NewClient()
	// go-retryablehttp calls CloseIdleConnections on its client whenever
	// a retried call ends in failure or is cancelled while waiting: on the
	// shared transport that would drop every caller's keep-alive
	// connections because one endpoint kept answering 503. Its client sees
	// a transport without that method.
	rc.HTTPClient = &http.Client{Transport: keepIdle{rt}}
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
	p := policy{min: rc.RetryWaitMin, max: rc.RetryWaitMax}
	rc.CheckRetry = p.checkRetry
	rc.Backoff = p.backoff
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	rc.RequestLogHook = func(_ retryablehttp.Logger, req *http.Request, attempt int) {
		if st, ok := req.Context().Value(retryKey{}).(*retryState); ok {
			st.attempt = attempt
		}
		if n, ok := req.Context().Value(attemptsKey{}).(*atomic.Int32); ok {
			n.Store(int32(attempt + 1))
		}
		if attempt > 0 {
			// Not the URL's path or query: they carry the call's argument
			// values, which logs hold only with --log-arguments (the usage
			// record names the tool and counts its retries).
			log.Debug("retrying upstream request", zap.String("method", req.Method), zap.String("host", req.URL.Host), zap.Int("attempt", attempt))
		}
	}
	rc.HTTPClient.CheckRedirect = SameOriginRedirects
	direct := &http.Client{Transport: rt, CheckRedirect: SameOriginRedirects}
	return &upstreamClient{direct: direct, retrying: rc}
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

// ProxyError is a proxy's refusal of the CONNECT tunnel to an https
// upstream (HTTPS_PROXY): net/http says only the status text.
type ProxyError struct{ StatusCode int }

func (e *ProxyError) Error() string {
	return "the proxy refused the tunnel to the upstream: HTTP " + strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode)
}

func proxyRefused(_ context.Context, _ *url.URL, _ *http.Request, resp *http.Response) error {
	if resp.StatusCode != http.StatusOK {
		return &ProxyError{StatusCode: resp.StatusCode}
	}
	return nil
}

// keepIdle is a RoundTripper without CloseIdleConnections.
type keepIdle struct{ http.RoundTripper }

func (c *upstreamClient) Do(req *http.Request) (*http.Response, error) {
	if !retryAllowed(req.Context()) {
		return c.direct.Do(req)
	}
	// The call's own retry state: which attempt is out, for the policy
	// to know the backoff that would follow it.
	req = req.WithContext(context.WithValue(req.Context(), retryKey{}, &retryState{}))
	rreq, err := retryablehttp.FromRequest(req)
	if err != nil {
		return nil, err
	}
	return c.retrying.Do(rreq)
}

// policy is the idempotent-only retry policy and its backoff.
type policy struct{ min, max time.Duration }

// checkRetry says whether to send the request again: only a request marked
// retryable, after a transport failure that another try may not meet again
// or a 429/502/503/504, and only when the wait before the next attempt
// ends within the call's deadline (else the answer or error in hand is
// returned now, not a timeout once the deadline has passed).
func (p policy) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil || !retryAllowed(ctx) {
		return false, nil
	}
	if err != nil {
		// A transport failure (refused, reset, EOF mid-response): the
		// request is idempotent, so trying again is safe; an answer that
		// is not HTTP, a certificate the bridge refuses or a proxy that
		// refuses it will be the same on the next try.
		if permanent(err) {
			return false, nil
		}
	} else {
		if !retriedStatus(resp.StatusCode) {
			return false, nil
		}
	}
	if dl, has := ctx.Deadline(); has {
		attempt := 0
		if st, ok := ctx.Value(retryKey{}).(*retryState); ok {
			attempt = st.attempt
		}
		if time.Until(dl) < p.backoff(p.min, p.max, attempt, resp) {
			return false, nil
		}
	}
	return true, nil
}

// backoff is the wait before the attempt after attempt (0 for the first):
// the Retry-After of an answer the policy retries (429, 502, 503, 504:
// a gateway that says when its backend will be back is heeded as a 503
// is, not tried again at once), else min doubled per attempt up to max.
func (p policy) backoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && retriedStatus(resp.StatusCode) {
		if wait, ok := retryAfter(resp); ok {
			return wait
		}
	}
	wait := lo
	for range attempt {
		if wait >= hi/2 {
			return hi
		}
		wait *= 2
	}
	return min(wait, hi)
}

// retriedStatus reports whether an answer of this status is tried again.
func retriedStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func retryAfter(resp *http.Response) (time.Duration, bool) {
	return RetryAfter(resp.Header.Get("Retry-After"), time.Now())
}

// RetryAfter reads a Retry-After value, delay-seconds or an HTTP date, as
// a wait from now (0 for a date past); false when v is neither.
func RetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseUint(v, 10, 64); err == nil {
		// Seconds past what a Duration holds (292 years) would wrap
		// negative: a retry at once of an upstream that asked for none.
		return time.Duration(min(s, uint64(math.MaxInt64/time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}
