package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// methodCancelled is the MCP cancellation notification.
const methodCancelled = "notifications/cancelled"

// maxInflightCalls bounds the calls a callTable tracks. Entries live only
// while their POST is served (the concurrency limit and the connection
// count bound them already); past the bound a call is served without
// being cancellable by notification.
const maxInflightCalls = 1 << 16

// callTable lets notifications/cancelled reach a call of stateless
// streamable HTTP. There every POST is a go-sdk session of its own, so the
// notification, which arrives on another POST, is handed to a session that
// never saw the call, and go-sdk drops it. The table keeps the calls in
// flight, by caller (identity) and JSON-RPC id, each with the cancel
// function of its request's context: cancelling it ends the handler bound to
// that context (transport/reqctx) and, as when the client goes away, the
// POST. The POST ends without the response to the call, which the client
// abandoned (the MCP cancellation utility: the receiver should not answer
// it): the call's writer drops what is written after the cancellation, the
// response the ended handler makes included, which could otherwise race
// go-sdk's return from the POST.
//
// A caller cancels only its own calls. When auth is off, callers are told
// apart by address only, and clients behind one address number their
// requests alike; so an id that more than one call of the caller holds is
// ambiguous, and a notification for it cancels none of them.
type callTable struct {
	mu    sync.Mutex
	calls map[callKey]*inflightCall
	n     int
}

// callKey is a call's caller and id. jsonrpc.ID is go-sdk's canonical form
// of an id (an integer or a string), comparable, so 7 and "7" differ and a
// key is built without allocating.
type callKey struct {
	who string
	id  jsonrpc.ID
}

// inflightCall is one call under its key, and the writer of its POST's
// response; next links the others under the key (rare).
type inflightCall struct {
	http.ResponseWriter
	cancel  context.CancelFunc
	dropped atomic.Bool // cancelled by notification: writes go nowhere
	next    *inflightCall
}

// Write drops p once the call is cancelled: the client abandoned it.
func (c *inflightCall) Write(p []byte) (int, error) {
	if c.dropped.Load() {
		return len(p), nil
	}
	return c.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (c *inflightCall) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// cancelCall ends the call and its response.
func (c *inflightCall) cancelCall() {
	c.dropped.Store(true) // before the handler can make its response
	c.cancel()
}

func newCallTable() *callTable {
	return &callTable{calls: make(map[callKey]*inflightCall)}
}

// serve passes r, whose body is msg, on to next: a call with a context
// that a notifications/cancelled from the same caller cancels; the
// notification after it has cancelled its call. Other messages pass as
// they are.
func (t *callTable) serve(w http.ResponseWriter, r *http.Request, msg jsonrpc.Message, next http.Handler) {
	req, ok := msg.(*jsonrpc.Request)
	switch {
	case !ok:
	case req.ID.IsValid():
		key := callKey{identity(r), req.ID}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		if c := t.add(key, w, cancel); c != nil {
			defer t.remove(key, c)
			w, r = c, r.WithContext(ctx)
		}
	case req.Method == methodCancelled:
		if id, ok := cancelledID(req.Params); ok {
			t.cancel(callKey{identity(r), id})
		}
	}
	next.ServeHTTP(w, r)
}

// cancelBatch applies the notifications/cancelled in the batch data
// (checked by inspectBatch) from r's caller.
func (t *callTable) cancelBatch(r *http.Request, data []byte) {
	var elems []json.RawMessage
	if json.Unmarshal(data, &elems) != nil {
		return
	}
	for _, e := range elems {
		m, err := jsonrpc.DecodeMessage(e)
		if req, ok := m.(*jsonrpc.Request); err == nil && ok && !req.IsCall() && req.Method == methodCancelled {
			if id, ok := cancelledID(req.Params); ok {
				t.cancel(callKey{identity(r), id})
			}
		}
	}
}

// cancelledID is the requestId of notifications/cancelled params, decoded
// as go-sdk decodes a message's id.
func cancelledID(params json.RawMessage) (jsonrpc.ID, bool) {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	return id, err == nil && id.IsValid()
}

// add records a call; nil when the table is full.
func (t *callTable) add(key callKey, w http.ResponseWriter, cancel context.CancelFunc) *inflightCall {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n >= maxInflightCalls {
		return nil
	}
	c := &inflightCall{ResponseWriter: w, cancel: cancel, next: t.calls[key]}
	t.calls[key] = c
	t.n++
	return c
}

func (t *callTable) remove(key callKey, c *inflightCall) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for p := t.calls[key]; p != nil; p = p.next {
		if p == c {
			t.calls[key] = c.next
			break
		}
		if p.next == c {
			p.next = c.next
			break
		}
	}
	if t.calls[key] == nil {
		delete(t.calls, key)
	}
	t.n--
}

// cancel cancels the call under key, if exactly one is in flight.
func (t *callTable) cancel(key callKey) {
	t.mu.Lock()
	c := t.calls[key]
	only := c != nil && c.next == nil
	t.mu.Unlock()
	if only {
		c.cancelCall()
	}
}
