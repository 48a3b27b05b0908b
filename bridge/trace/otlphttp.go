package trace

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

// The exporter's bounds. The export timeout (OTEL_EXPORTER_OTLP_TIMEOUT)
// bounds a whole export, retries included.
const (
	defaultEndpoint    = "http://localhost:4318/v1/traces"
	defaultTimeout     = 10 * time.Second
	maxAttempts        = 5
	retryWaitMin       = 500 * time.Millisecond
	retryWaitMax       = 5 * time.Second
	maxResponseBody    = 64 << 10 // read of any answer; the rest is dropped
	maxErrorText       = 256      // of a failure's body, quoted in the error
	contentTypeProto   = "application/x-protobuf"
	exporterUserAgent  = "mcpbridge-otlp-exporter"
	envPrefix          = "OTEL_EXPORTER_OTLP_"
	envTracesPrefix    = "OTEL_EXPORTER_OTLP_TRACES_"
	redactedHeaderText = "[REDACTED]"
)

// otlpConfig is the exporter's configuration, from the OTEL_EXPORTER_OTLP_*
// variables.
type otlpConfig struct {
	endpoint *url.URL
	headers  http.Header
	timeout  time.Duration
	gzip     bool
	tls      *tls.Config // nil: the defaults
}

// plainCredentialsHost is the endpoint's host when the exporter would
// send credentials (header values, a query, a userinfo) over plain http
// to a host that is not this machine; "" otherwise.
func (c *otlpConfig) plainCredentialsHost() string {
	u := c.endpoint
	if u == nil || u.Scheme != "http" || loopback(u.Hostname()) {
		return ""
	}
	if len(c.headers) == 0 && u.User == nil && u.RawQuery == "" {
		return ""
	}
	return u.Host
}

// loopback reports whether host names this machine.
func loopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// otlpConfigFromEnv reads the standard variables, each signal-specific one
// (OTEL_EXPORTER_OTLP_TRACES_X) replacing the general one
// (OTEL_EXPORTER_OTLP_X). Every problem is reported at once, naming the
// variable but never quoting a header value, which may be an API key.
func otlpConfigFromEnv(getenv func(string) string) (*otlpConfig, error) {
	lookup := func(suffix string) (name, value string) {
		if v := strings.TrimSpace(getenv(envTracesPrefix + suffix)); v != "" {
			return envTracesPrefix + suffix, v
		}
		return envPrefix + suffix, strings.TrimSpace(getenv(envPrefix + suffix))
	}
	cfg := &otlpConfig{timeout: defaultTimeout, headers: http.Header{}}
	var errs []error

	raw, base := defaultEndpoint, false
	if v := strings.TrimSpace(getenv(envTracesPrefix + "ENDPOINT")); v != "" {
		raw = v // used as is
	} else if v := strings.TrimSpace(getenv(envPrefix + "ENDPOINT")); v != "" {
		raw, base = v, true // the base: /v1/traces is appended
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		name := envTracesPrefix + "ENDPOINT"
		if base {
			name = envPrefix + "ENDPOINT"
		}
		errs = append(errs, fmt.Errorf("%s: want an http:// or https:// URL", name))
	} else {
		if base {
			u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
			u.RawPath = ""
		}
		cfg.endpoint = u
	}

	if name, v := lookup("HEADERS"); v != "" {
		h, err := parseHeaders(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		cfg.headers = h
	}
	if name, v := lookup("TIMEOUT"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 || ms > int64(time.Hour/time.Millisecond) {
			errs = append(errs, fmt.Errorf("%s: want milliseconds, a whole number from 1 to 3600000, not %q", name, v))
		} else {
			cfg.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	if name, v := lookup("COMPRESSION"); v != "" {
		switch strings.ToLower(v) {
		case "gzip":
			cfg.gzip = true
		case "none":
		default:
			errs = append(errs, fmt.Errorf("%s: want gzip or none, not %q", name, v))
		}
	}
	var ca, cert, key setting
	ca.name, ca.value = lookup("CERTIFICATE")
	cert.name, cert.value = lookup("CLIENT_CERTIFICATE")
	key.name, key.value = lookup("CLIENT_KEY")
	if ca.value != "" || cert.value != "" || key.value != "" {
		t, err := tlsConfig(ca, cert, key)
		if err != nil {
			errs = append(errs, err)
		}
		cfg.tls = t
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cfg, nil
}

// parseHeaders reads OTEL_EXPORTER_OTLP_HEADERS: comma-separated key=value
// pairs, the values percent-encoded ("+" stays "+": API keys in base64
// carry it). An error names the entry by position, never by content.
func parseHeaders(s string) (http.Header, error) {
	h := http.Header{}
	var errs []error
	for i, entry := range strings.Split(s, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, v, ok := strings.Cut(entry, "=")
		var err error
		if ok {
			k = strings.TrimSpace(k)
			if k, err = url.PathUnescape(k); err == nil {
				v, err = url.PathUnescape(strings.TrimSpace(v))
			}
		}
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("entry %d is not key=value", i+1))
		case err != nil:
			errs = append(errs, fmt.Errorf("entry %d: bad percent-encoding", i+1))
		case !validHeaderName(k):
			errs = append(errs, fmt.Errorf("entry %d: %q is not a header name", i+1, k))
		case strings.ContainsAny(v, "\r\n\x00"):
			errs = append(errs, fmt.Errorf("header %s: the value holds a line break or NUL", k))
		default:
			h.Add(k, v)
		}
	}
	return h, errors.Join(errs...)
}

// validHeaderName reports whether k is an RFC 9110 token.
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// setting is a variable's name and value.
type setting struct{ name, value string }

// tlsConfig loads the CA bundle and the client certificate the
// ..._CERTIFICATE, ..._CLIENT_CERTIFICATE and ..._CLIENT_KEY files name.
func tlsConfig(ca, cert, key setting) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca.value != "" {
		pem, err := os.ReadFile(ca.value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ca.name, err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", ca.name, ca.value)
		}
	}
	if (cert.value == "") != (key.value == "") {
		return nil, fmt.Errorf("%s and %s go together", cert.name, key.name)
	}
	if cert.value != "" {
		pair, err := tls.LoadX509KeyPair(cert.value, key.value)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", cert.name, key.name, err)
		}
		t.Certificates = []tls.Certificate{pair}
	}
	return t, nil
}

// otlpExporter is a [sdktrace.SpanExporter] that POSTs each batch to an
// OTLP/HTTP collector as a protobuf ExportTraceServiceRequest. It retries
// the answers the OTLP specification calls retryable (429, 502, 503, 504)
// and failed connections, with a jittered exponential backoff or the wait
// the collector's Retry-After asks for, within the export timeout.
type otlpExporter struct {
	cfg    *otlpConfig
	client *http.Client
	target string // the endpoint for errors: no userinfo, no query
	// secrets are blanked out of a collector's text quoted in an error:
	// the header values, the endpoint's userinfo password and its query
	// values (API keys a collector or its gateway might echo), longest
	// first.
	secrets []string

	// stopped ends with Shutdown, and cancels the exports under way.
	stopped context.Context
	stop    context.CancelFunc

	// The backoff, and the wait itself, replaceable in tests.
	waitMin, waitMax time.Duration
	sleep            func(context.Context, time.Duration) error
}

func newOTLPExporter(cfg *otlpConfig) *otlpExporter {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.tls != nil {
		tr.TLSClientConfig = cfg.tls
	}
	target := *cfg.endpoint
	target.User, target.RawQuery, target.Fragment = nil, "", ""
	var secrets []string
	for _, vs := range cfg.headers {
		secrets = append(secrets, vs...)
	}
	if pw, ok := cfg.endpoint.User.Password(); ok {
		secrets = append(secrets, pw)
	}
	for _, vs := range cfg.endpoint.Query() {
		secrets = append(secrets, vs...)
	}
	// And as the request line has them, escaped: a collector echoing its
	// request URL quotes that form.
	for pair := range strings.SplitSeq(cfg.endpoint.RawQuery, "&") {
		if _, raw, ok := strings.Cut(pair, "="); ok {
			secrets = append(secrets, raw)
		}
	}
	slices.Sort(secrets)
	secrets = slices.Compact(secrets)
	secrets = slices.DeleteFunc(secrets, func(v string) bool { return len(v) < 4 })
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	stopped, stop := context.WithCancel(context.Background())
	return &otlpExporter{
		cfg: cfg,
		// No client timeout: the export's context carries it. Redirects
		// are followed only within the endpoint's origin, without a
		// Referer: net/http would carry the OTLP headers (a vendor's API
		// key) to any host a 307 names, and the endpoint's query in the
		// Referer.
		client:  &http.Client{Transport: tr, CheckRedirect: upstream.SameOriginRedirects},
		target:  target.String(),
		secrets: secrets,
		stopped: stopped,
		stop:    stop,
		waitMin: retryWaitMin,
		waitMax: retryWaitMax,
		sleep:   sleepCtx,
	}
}

// ExportSpans sends spans in one request, retrying as the type says. It
// returns when the collector accepted them, refused them for good, or the
// export timeout, ctx or Shutdown ended the attempts.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.stopped.Err() != nil {
		return errors.New("OTLP exporter is shut down")
	}
	if len(spans) == 0 {
		return nil
	}
	body, err := e.encode(spans)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.timeout)
	defer cancel()
	defer context.AfterFunc(e.stopped, cancel)()

	for attempt := 1; ; attempt++ {
		retry, wait, err := e.send(ctx, body)
		if err == nil || !retry {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (export stopped: %w)", err, context.Cause(ctx))
		}
		if attempt == maxAttempts {
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		if wait <= 0 {
			wait = e.backoff(attempt)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("%w (the next attempt, in %v, would be past the export timeout)", err, wait.Round(time.Millisecond))
		}
		if serr := e.sleep(ctx, wait); serr != nil {
			return fmt.Errorf("%w (export stopped: %w)", err, serr)
		}
	}
}

// encode marshals spans, compressed when configured.
func (e *otlpExporter) encode(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	raw := appendTraces(nil, spans)
	if !e.cfg.gzip {
		return raw, nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("compressing spans: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compressing spans: %w", err)
	}
	return buf.Bytes(), nil
}

// send makes one attempt. retry says whether another may succeed, and
// wait is the collector's Retry-After, if it gave one.
func (e *otlpExporter) send(ctx context.Context, body []byte) (retry bool, wait time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return false, 0, fmt.Errorf("OTLP export to %s: %w", e.target, err)
	}
	for k, vs := range e.cfg.headers {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", contentTypeProto)
	req.Header.Set("User-Agent", exporterUserAgent)
	if e.cfg.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// A connection refused or reset, a timeout: the collector may be
		// restarting. A certificate it will not accept stays refused.
		// The error names the endpoint as e.target does (the URL's query
		// may hold a token); the url.Error itself would quote it whole.
		var cert *tls.CertificateVerificationError
		retry := ctx.Err() == nil && !errors.As(err, &cert)
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return retry, 0, fmt.Errorf("OTLP export to %s: %w", e.target, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))

	if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
		if isProto(resp.Header) {
			if n, msg := decodePartialSuccess(answer); n != 0 || msg != "" {
				return false, 0, fmt.Errorf("OTLP export to %s: the collector rejected %d spans: %s", e.target, n, e.quote(msg))
			}
		}
		return false, 0, nil
	}
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 && resp.Header.Get("Location") != "" {
		// Not followed (upstream.SameOriginRedirects): the Location is
		// not quoted, it may hold the endpoint's query.
		return false, 0, fmt.Errorf("OTLP export to %s: %s, a redirect to another origin (or past 5), not followed: set the collector's final URL", e.target, resp.Status)
	}
	err = fmt.Errorf("OTLP export to %s: %s%s", e.target, resp.Status, e.explain(resp.Header, answer))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true, retryAfter(resp.Header.Get("Retry-After"), time.Now()), err
	}
	return false, 0, err
}

// explain is the collector's reason for a failure: google.rpc.Status's
// message for a protobuf answer, the start of the body otherwise.
func (e *otlpExporter) explain(h http.Header, body []byte) string {
	msg := string(body)
	if isProto(h) {
		msg = decodeRPCStatusMessage(body)
	}
	if msg = e.quote(msg); msg == "" {
		return ""
	}
	return ": " + msg
}

// quote makes a collector's text fit for a log line: one line, at most
// maxErrorText bytes, with the configured header values and the
// endpoint's credentials (API keys a collector might echo) blanked out.
func (e *otlpExporter) quote(msg string) string {
	for _, v := range e.secrets {
		msg = strings.ReplaceAll(msg, v, redactedHeaderText)
	}
	msg = strings.Join(strings.Fields(msg), " ")
	if len(msg) > maxErrorText {
		msg = strings.ToValidUTF8(msg[:maxErrorText], "") + "..."
	}
	return msg
}

func isProto(h http.Header) bool {
	ct, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.EqualFold(strings.TrimSpace(ct), contentTypeProto)
}

// backoff is the wait before attempt+1: waitMin doubled per attempt, capped
// at waitMax, less up to a quarter at random so that exporters restarted
// together do not retry together.
func (e *otlpExporter) backoff(attempt int) time.Duration {
	d := e.waitMin << (attempt - 1)
	if d <= 0 || d > e.waitMax {
		d = e.waitMax
	}
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

// retryAfter reads a Retry-After header, seconds or an HTTP date; 0 when
// absent or unreadable (then the backoff decides).
func retryAfter(v string, now time.Time) time.Duration {
	d, ok := upstream.RetryAfter(v, now)
	if !ok {
		return 0
	}
	// "now" is still not a busy loop; an hour is the most waited.
	return min(max(d, time.Millisecond), time.Hour)
}

// Shutdown stops the exporter: an export under way is cancelled, and later
// ones fail. Idempotent.
func (e *otlpExporter) Shutdown(context.Context) error {
	e.stop()
	e.client.CloseIdleConnections()
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
