package transport

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/mcpbridge/mcpbridge/transport/clientaddr"
)

// codeLimitExceeded is the JSON-RPC error code (in the range JSON-RPC 2.0
// leaves to servers) of a request refused because a cap is reached.
const codeLimitExceeded = -32000

// limiter caps long-lived things (stateful sessions, legacy SSE streams) in
// total and per identity, so that one caller, however well authenticated,
// cannot exhaust the server's memory or goroutines.
type limiter struct {
	what       string // "stateful sessions", for messages
	max, perID int

	mu    sync.Mutex
	total int
	by    map[string]int
}

func newLimiter(what string, max, perID int) *limiter {
	return &limiter{what: what, max: max, perID: perID, by: make(map[string]int)}
}

// limitError is a refusal: the HTTP status and a message for the client.
type limitError struct {
	status int
	msg    string
}

// acquire takes a slot for id. release gives it back; it may be called more
// than once, and from any goroutine.
func (l *limiter) acquire(id string) (release func(), _ *limitError) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.by[id] >= l.perID:
		return nil, &limitError{http.StatusTooManyRequests,
			fmt.Sprintf("too many %s open for this client (limit %d): close one, then retry", l.what, l.perID)}
	case l.total >= l.max:
		return nil, &limitError{http.StatusServiceUnavailable,
			fmt.Sprintf("server at capacity: %d %s open (the limit); retry later", l.total, l.what)}
	}
	l.total++
	l.by[id]++
	return sync.OnceFunc(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.total--
		if l.by[id]--; l.by[id] <= 0 {
			delete(l.by, id)
		}
	}), nil
}

// write answers the refusal with a JSON-RPC error body (id null), which
// go-sdk's clients surface as the error of the call that was refused.
func (e *limitError) write(w http.ResponseWriter) {
	writeRPCError(w, e.status, codeLimitExceeded, e.msg)
}

// identity is who a cap counts against: the authenticated principal, or the
// remote IP address when auth is off. Forwarding headers (X-Forwarded-For)
// are not trusted: any client could set them to dodge its cap.
func identity(r *http.Request) string {
	if p, ok := principalFrom(r.Context()); ok {
		return p.id
	}
	return "addr:" + clientaddr.Bucket(r.RemoteAddr) // an IPv6 caller by its /64
}
