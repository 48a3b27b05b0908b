package upstream

import (
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
)

// ErrTooLarge reports an answer longer than the caller's limit.
var ErrTooLarge = errors.New("upstream response too large")

// ReadLimited reads at most max bytes; more is [ErrTooLarge]. A known
// length sizes the buffer once instead of growing it by doubling.
func ReadLimited(r io.Reader, length, max int64) ([]byte, error) {
	if length > max {
		return nil, ErrTooLarge
	}
	if length < 0 {
		body, err := io.ReadAll(io.LimitReader(r, max+1))
		if err != nil {
			return nil, err
		}
		if int64(len(body)) > max {
			return nil, ErrTooLarge
		}
		return body, nil
	}
	buf := make([]byte, length)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	// The declared length was honoured; anything more is a broken upstream.
	var one [1]byte
	if n, _ := r.Read(one[:]); n > 0 {
		return nil, fmt.Errorf("upstream sent more than its Content-Length")
	}
	return buf, nil
}

// FailureKind names a transport failure without echoing the URL (which
// may carry a query credential).
func FailureKind(err error) string {
	// An error that knows what to tell (the OAuth2 token fetch's) says it.
	var k interface{ FailureKind() string }
	if errors.As(err, &k) {
		return k.FailureKind()
	}
	var corrupt flate.CorruptInputError
	if errors.Is(err, ErrCorrupt) || errors.As(err, &corrupt) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) ||
		errors.Is(err, zlib.ErrChecksum) || errors.Is(err, zlib.ErrHeader) || errors.Is(err, zlib.ErrDictionary) {
		return ErrCorrupt.Error()
	}
	if k := tlsFailure(err); k != "" {
		return k
	}
	var pe *ProxyError
	if errors.As(err, &pe) {
		if pe.StatusCode == http.StatusProxyAuthRequired {
			return pe.Error() + " (the proxy's credentials: userinfo in HTTPS_PROXY)"
		}
		return pe.Error()
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "proxyconnect" {
		// A failure to reach the proxy (HTTP_PROXY, HTTPS_PROXY), which
		// net/http words as the upstream's own.
		return "cannot reach the proxy (HTTP_PROXY/HTTPS_PROXY): " + FailureKind(op.Err)
	}
	s := err.Error()
	switch {
	case malformed(err):
		return "the upstream's answer is not valid HTTP"
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "connection reset"):
		return "connection reset by the upstream"
	case strings.Contains(s, "no such host"):
		return "host not found"
	case strings.Contains(s, "EOF"):
		return "the upstream closed the connection"
	case strings.Contains(s, "tls: ") || strings.Contains(s, "x509: "):
		return "TLS handshake failed"
	case strings.Contains(s, "timeout"):
		return "timed out"
	}
	return "transport error"
}

// tlsFailure names a TLS failure by its type ("" for another error): the
// upstream's certificate (untrusted, expired, for another host) or the
// upstream's refusal of the handshake (a TLS alert: a client certificate
// missing or refused).
func tlsFailure(err error) string {
	var (
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
		unknown x509.UnknownAuthorityError
		remote  *net.OpError
		verify  *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &host):
		return "the upstream's TLS certificate is not valid for its host name (is --upstream the name the certificate was issued for?)"
	case errors.As(err, &invalid):
		if invalid.Reason == x509.Expired {
			return "the upstream's TLS certificate has expired or is not yet valid"
		}
		return "the upstream's TLS certificate is invalid"
	case errors.As(err, &unknown):
		return "the upstream's TLS certificate is not trusted (a private CA? see --upstream-ca-file)"
	case errors.As(err, &verify):
		return "the upstream's TLS certificate is not trusted"
	case errors.As(err, &remote) && remote.Op == "remote error":
		// A TLS alert from the upstream ("tls: certificate required",
		// "tls: bad certificate", "tls: unknown certificate authority").
		msg := "the upstream refused the TLS handshake (" + remote.Err.Error() + ")"
		if a := remote.Err.Error(); strings.Contains(a, "certificate") || strings.Contains(a, "unknown ca") {
			msg += "; a client certificate? see --upstream-client-cert"
		}
		return msg
	}
	return ""
}

// permanent reports a transport failure that another attempt will meet
// again: an answer that is not HTTP, a certificate the bridge refuses or a
// handshake the upstream refuses, a proxy that refuses the tunnel with a
// 4xx (its 5xx, the upstream out of its reach, may pass).
func permanent(err error) bool {
	var pe *ProxyError
	return malformed(err) || tlsFailure(err) != "" || errors.As(err, &pe) && pe.StatusCode < 500
}

// ReadPrefix reads at most max bytes of r; truncated reports that r had
// more (which is then left unread). length is the declared size of r (a
// Content-Length; negative when unknown): the buffer is made that size
// (plus one byte, to see the end) up to max, so that a body of known size
// is read into one allocation instead of io.ReadAll's doublings, which for
// a 1 MiB answer allocate and copy about 2 MiB more. A wrong length costs
// only that: reading goes on, or stops, by what r delivers.
func ReadPrefix(r io.Reader, length, max int64) (prefix []byte, truncated bool, err error) {
	var body []byte
	if length >= 0 {
		body, err = readAll(make([]byte, 0, min(length, max)+1), io.LimitReader(r, max+1))
	} else {
		body, err = io.ReadAll(io.LimitReader(r, max+1))
	}
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > max {
		return body[:max], true, nil
	}
	return body, false, nil
}

// readAll is io.ReadAll appending to b, for a b expected to be large
// enough (it grows by append when it is not).
func readAll(b []byte, r io.Reader) ([]byte, error) {
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // let append pick the growth
		}
	}
}

// malformed reports a transport error saying the upstream's bytes are not
// an HTTP response (a status line or header Go's client cannot parse): a
// server speaking something else, which trying again will not change.
func malformed(err error) bool {
	s := err.Error()
	return strings.Contains(s, "malformed HTTP") || strings.Contains(s, "malformed MIME header")
}
