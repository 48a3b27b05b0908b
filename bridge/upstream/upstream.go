// Package upstream is the HTTP client toward the upstream API: keep-alive
// connections, redirects only within the upstream's origin (at most 5), and
// retries with go-retryablehttp's backoff for idempotent calls only.
// It also reads answers within a size limit and names transport failures
// without echoing URLs (which may carry a query credential).
package upstream

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
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
// upstream: keep-alive connections, redirects followed only within the
// upstream's origin, and retries on connection errors, 429, 502, 503 and
// 504 for requests whose context was marked retryable (idempotent methods
// or operations whitelisted as idempotent), waiting go-retryablehttp's
// DefaultBackoff between attempts. POST and PATCH are never retried by
// default.
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
	c := &upstreamClient{
		http:    &http.Client{Transport: rt, CheckRedirect: sameOriginRedirects},
		retries: opts.Retries,
		waitMin: opts.RetryWaitMin,
		waitMax: opts.RetryWaitMax,
		log:     log,
	}
	switch {
	case c.retries == 0:
		c.retries = 2
	case c.retries < 0:
		c.retries = 0
	}
	if c.waitMin == 0 {
		c.waitMin = 100 * time.Millisecond
	}
	if c.waitMax == 0 {
		c.waitMax = 5 * time.Second
	}
	return c
}

// sameOriginRedirects follows at most 5 redirects, and only within the
// upstream's scheme and host: a redirect elsewhere would carry the
// configured API key headers to a host nobody configured. Such a response
// is returned as is (a 3xx the agent sees as an error).
func sameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return http.ErrUseLastResponse
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return http.ErrUseLastResponse
	}
	return nil
}

// upstreamClient sends every attempt through one http.Client (which
// follows the same-origin redirects). It runs the retry loop itself rather
// than through go-retryablehttp's Client: that one wraps each request
// (FromRequest, a copy of the body to rewind it) and sits behind a second
// http.Client (StandardClient), which cloned the headers again and added
// ~1.9 KB of stack to every call; go-sdk runs each call on a fresh
// goroutine, whose stack then grew once more (a copy of the whole stack).
// The policy is unchanged: checkRetry decides, go-retryablehttp's
// DefaultBackoff says how long to wait.
type upstreamClient struct {
	http             *http.Client
	retries          int // after the first attempt; 0 disables retries
	waitMin, waitMax time.Duration
	log              *zap.Logger
}

func (c *upstreamClient) Do(req *http.Request) (*http.Response, error) {
	if c.retries == 0 || !retryAllowed(req.Context()) || !rewindable(req) {
		return c.http.Do(req)
	}
	return c.doRetrying(req)
}

// rewindable reports whether req can be sent again: it has no body, or
// GetBody to make a fresh one (http.NewRequest sets it for the bytes and
// strings readers the request builder uses).
func rewindable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// doRetrying sends req until checkRetry says stop or the retries run
// out, and returns the last answer as is (a 503 after the last retry is a
// response, not an error). It counts the attempts in the context's counter.
func (c *upstreamClient) doRetrying(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	n, _ := ctx.Value(attemptsKey{}).(*atomic.Int32)
	for attempt := 0; ; attempt++ {
		if n != nil {
			n.Store(int32(attempt + 1))
		}
		resp, err := c.http.Do(req)
		if retry, _ := checkRetry(ctx, resp, err); !retry {
			if err != nil {
				c.http.CloseIdleConnections()
			}
			return resp, err
		}
		if attempt == c.retries {
			// Given up: the upstream may be restarting, so the next call
			// dials afresh (as go-retryablehttp does).
			c.http.CloseIdleConnections()
			return resp, err
		}
		if req, err = c.nextAttempt(req, resp, attempt); err != nil {
			c.http.CloseIdleConnections()
			return nil, err
		}
	}
}

// respReadLimit is how much of a retried answer is read to keep its
// connection (go-retryablehttp's limit).
const respReadLimit = 4096

// nextAttempt prepares the attempt after attempt: it drains and closes
// the answer being retried, waits the backoff (or until ctx is done) and
// returns a copy of req with its body rewound. The copy keeps the
// transport, which may still be closing the previous body, from racing
// with the new one.
func (c *upstreamClient) nextAttempt(req *http.Request, resp *http.Response, attempt int) (*http.Request, error) {
	if resp != nil {
		io.CopyN(io.Discard, resp.Body, respReadLimit) //nolint:errcheck // only to reuse the connection
		resp.Body.Close()
	}
	wait := retryablehttp.DefaultBackoff(c.waitMin, c.waitMax, attempt, resp)
	timer := time.NewTimer(wait)
	select {
	case <-req.Context().Done():
		timer.Stop()
		return nil, req.Context().Err()
	case <-timer.C:
	}
	next := *req
	if req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("rewinding the request body: %w", err)
		}
		next.Body = body
	}
	c.log.Debug("retrying upstream request", zap.String("method", req.Method), zap.String("path", req.URL.Path), zap.Int("attempt", attempt+1))
	return &next, nil
}

// checkRetry is the idempotent-only retry policy.
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil || !retryAllowed(ctx) {
		return false, nil
	}
	if err != nil {
		// A transport failure (refused, reset, EOF mid-response): the
		// request is idempotent, so trying again is safe.
		return true, nil
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
