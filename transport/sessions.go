package transport

import (
	"context"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/transport/reqctx"
)

// sessionCaps enforces MaxSessions and MaxSessionsPerIdentity on stateful
// /mcp. go-sdk creates a session for every POST without Mcp-Session-Id and
// offers no hook for its end, but it tells the session's EventStore both:
// Open is called while the session is being connected, with the creating
// request's context, and SessionClosed whenever the session ends (DELETE,
// idle timeout, failed initialization, or the server closing it). So the
// cap wraps the event store: a slot is taken before go-sdk sees the POST,
// bound to the session in Open, and freed in SessionClosed, or as soon as
// the POST ends if it created no session that outlives it.
//
// go-sdk hands the handlers of a session's calls the values of the POST
// that created it, but not its cancellation, and a DELETE of the session
// waits for the calls in flight to finish. So the creating POST also
// carries a context for the session's life (transport/reqctx), which the
// bridge's handlers bind to; a DELETE from the session's caller ends it
// before go-sdk closes the session, cancelling those calls and their
// upstream requests.
type sessionCaps struct {
	mcp.EventStore // the store go-sdk uses; Open and SessionClosed are watched
	lim            *limiter
	log            *zap.Logger

	mu        sync.Mutex
	bySession map[string]*sessionSlot
}

func newSessionCaps(store mcp.EventStore, lim *limiter, log *zap.Logger) *sessionCaps {
	return &sessionCaps{EventStore: store, lim: lim, log: log, bySession: make(map[string]*sessionSlot)}
}

// sessionSlot is one reserved place under the cap.
type sessionSlot struct {
	who     string
	release func()
	end     context.CancelFunc // ends the session's context
	bound   bool               // guarded by sessionCaps.mu: a session holds it
}

type sessionSlotKey struct{}

// wrap reserves a slot for each POST that may create a session.
func (c *sessionCaps) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" {
			c.endCalls(id, identity(r))
		}
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			next.ServeHTTP(w, r)
			return
		}
		who := identity(r)
		release, lerr := c.lim.acquire(who)
		if lerr != nil {
			c.log.Debug("session refused", zap.String("identity", who), zap.Int("status", lerr.status))
			lerr.write(w)
			return
		}
		life, end := context.WithCancel(context.WithoutCancel(r.Context()))
		slot := &sessionSlot{who: who, release: release, end: end}
		defer func() {
			c.mu.Lock()
			bound := slot.bound
			c.mu.Unlock()
			if !bound {
				release() // no session, or one that already ended
				end()
			}
		}()
		ctx := reqctx.WithDone(context.WithValue(r.Context(), sessionSlotKey{}, slot), life)
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Open binds the slot of the creating request to the new session.
func (c *sessionCaps) Open(ctx context.Context, sessionID, streamID string) error {
	if slot, ok := ctx.Value(sessionSlotKey{}).(*sessionSlot); ok && sessionID != "" {
		c.mu.Lock()
		if !slot.bound {
			slot.bound = true
			c.bySession[sessionID] = slot
		}
		c.mu.Unlock()
	}
	return c.EventStore.Open(ctx, sessionID, streamID)
}

// endCalls ends the context of session id, when who opened it.
func (c *sessionCaps) endCalls(id, who string) {
	c.mu.Lock()
	slot := c.bySession[id]
	c.mu.Unlock()
	if slot != nil && slot.who == who {
		slot.end()
	}
}

// SessionClosed frees the session's slot.
func (c *sessionCaps) SessionClosed(ctx context.Context, sessionID string) error {
	c.mu.Lock()
	slot := c.bySession[sessionID]
	delete(c.bySession, sessionID)
	c.mu.Unlock()
	if slot != nil {
		slot.end()
		slot.release()
		c.log.Debug("stateful session ended", zap.String("identity", slot.who))
	}
	return c.EventStore.SessionClosed(ctx, sessionID)
}

var _ mcp.EventStore = (*sessionCaps)(nil)
