package upstream

import (
	"errors"
	"fmt"
	"io"
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
	s := err.Error()
	switch {
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "connection reset"):
		return "connection reset by the upstream"
	case strings.Contains(s, "no such host"):
		return "host not found"
	case strings.Contains(s, "EOF"):
		return "the upstream closed the connection"
	case strings.Contains(s, "certificate signed by unknown authority") || strings.Contains(s, "x509: certificate"):
		return "the upstream's TLS certificate is not trusted (a private CA? see --upstream-ca-file)"
	case strings.Contains(s, "tls") || strings.Contains(s, "x509"):
		return "TLS handshake failed (a client certificate? see --upstream-client-cert)"
	case strings.Contains(s, "timeout"):
		return "timed out"
	}
	return "transport error"
}

// ReadPrefix reads at most max bytes of r; truncated reports that r had
// more (which is then left unread).
func ReadPrefix(r io.Reader, max int64) (prefix []byte, truncated bool, err error) {
	body, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > max {
		return body[:max], true, nil
	}
	return body, false, nil
}
