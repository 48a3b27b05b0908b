package transport

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// drainLinger is how long a stream stays open after the last in-flight call
// it waited for has been answered, during shutdown. Some clients lose an
// event that arrives just before its stream closes (go-sdk's
// SSEClientTransport races its reader against the close), and a stateful
// client may treat the end of its standalone stream as the end of the
// session while a reply is still being read.
const drainLinger = 250 * time.Millisecond

// streamGroup drains /mcp for shutdown. http.Server.Shutdown waits for every
// active request, and the stateful standalone GET streams never finish on
// their own, so they must be ended. They carry no replies to calls (those
// travel on the POST responses), but clients may give up a session when the
// stream ends, so the group ends them only once no call (POST) is in flight.
type streamGroup struct {
	mu       sync.Mutex
	draining bool
	calls    int // requests other than GET in flight
	next     int
	streams  map[int]context.CancelFunc
}

func newStreamGroup() *streamGroup {
	return &streamGroup{streams: make(map[int]context.CancelFunc)}
}

// track counts in-flight calls and makes GET streams cancellable by drain.
func (g *streamGroup) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			g.mu.Lock()
			g.calls++
			g.mu.Unlock()
			defer func() {
				g.mu.Lock()
				defer g.mu.Unlock()
				g.calls--
				if g.draining && g.calls == 0 {
					time.AfterFunc(drainLinger, g.endStreams)
				}
			}()
			next.ServeHTTP(w, r)
			return
		}

		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		g.mu.Lock()
		if g.draining {
			g.mu.Unlock()
			http.Error(w, "server is shutting down", http.StatusServiceUnavailable)
			return
		}
		id := g.next
		g.next++
		g.streams[id] = cancel
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			delete(g.streams, id)
			g.mu.Unlock()
		}()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// drain refuses new streams and ends the open ones as soon as no call is in
// flight.
func (g *streamGroup) drain() {
	g.mu.Lock()
	g.draining = true
	idle := g.calls == 0
	g.mu.Unlock()
	if idle {
		g.endStreams()
	}
}

func (g *streamGroup) endStreams() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, cancel := range g.streams {
		cancel()
	}
}
