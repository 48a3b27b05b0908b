package transport

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// ssePath and messagesPath are the routes of the legacy HTTP+SSE transport.
const (
	ssePath      = "/sse"
	messagesPath = "/messages"
)

// sseHandler serves the 2024-11-05 HTTP+SSE transport on go-sdk's
// mcp.SSEServerTransport: GET /sse opens a session whose "endpoint" event
// names "/messages?sessionId=ID", and POST /messages?sessionId=ID delivers a
// client message to it (202); results arrive as "message" events on the GET
// stream. mcp.SSEHandler is not used because it announces its own path with
// a lower-case parameter ("/sse?sessionid=ID") rather than the /messages
// route that clients of other servers expect.
//
// Because results travel on the GET stream, shutdown cannot simply end the
// stream: drain marks every session and ends each stream once the calls
// posted to it have been answered.
//
// Each stream holds a slot of lim (MaxSSEStreams, MaxSSEStreamsPerIdentity)
// while it is open. go-sdk's SSE transport gives handlers no
// mcp.RequestExtra, so serveMessage records, for each message posted, the
// caller's auth.TokenInfo and headers, and sseConn attaches them as the
// message is read: tool handlers see req.Extra.TokenInfo as on /mcp.
type sseHandler struct {
	server  *mcp.Server
	maxBody int64
	lim     *limiter
	log     *zap.Logger

	mu       sync.Mutex
	draining bool
	sessions map[string]*sseSession
}

func newSSEHandler(s *mcp.Server, maxBody int64, lim *limiter, log *zap.Logger) *sseHandler {
	return &sseHandler{server: s, maxBody: maxBody, lim: lim, log: log, sessions: make(map[string]*sseSession)}
}

// sseSession is one GET /sse stream and its in-flight calls.
type sseSession struct {
	transport *mcp.SSEServerTransport
	user      string             // principal that opened it; "" without auth
	end       context.CancelFunc // ends the GET stream

	mu      sync.Mutex
	pending map[jsonrpc.ID]struct{} // calls posted and not yet answered
	// cancelled holds the pending calls the client cancelled
	// (notifications/cancelled): their answers are not sent.
	cancelled map[jsonrpc.ID]struct{}
	draining  bool
	extras    map[jsonrpc.ID]*mcp.RequestExtra // per call posted, until go-sdk reads it
	latest    *mcp.RequestExtra                // of the last message posted (first, the GET), see takeExtra
}

// serveStream handles GET /sse.
func (h *sseHandler) serveStream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	who := identity(r)
	release, lerr := h.lim.acquire(who)
	if lerr != nil {
		h.log.Debug("SSE stream refused", zap.String("identity", who), zap.Int("status", lerr.status))
		lerr.write(w)
		return
	}
	defer func() {
		release()
		h.log.Debug("SSE stream ended", zap.String("identity", who))
	}()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	id := rand.Text()
	sess := &sseSession{end: cancel, pending: make(map[jsonrpc.ID]struct{}), cancelled: make(map[jsonrpc.ID]struct{}), extras: make(map[jsonrpc.ID]*mcp.RequestExtra)}
	if p, ok := principalFrom(r.Context()); ok {
		sess.user = p.id
	}
	// Until a POST records its own: what a message read then carries.
	sess.latest = &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header}
	sess.transport = &mcp.SSEServerTransport{
		Endpoint:            messagesPath + "?" + url.Values{"sessionId": {id}}.Encode(),
		Response:            &sseCallWriter{ResponseWriter: w, sess: sess},
		MaxRequestBodyBytes: h.maxBody,
	}
	h.mu.Lock()
	if h.draining {
		h.mu.Unlock()
		http.Error(w, "server is shutting down", http.StatusServiceUnavailable)
		return
	}
	h.sessions[id] = sess
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sessions, id)
		h.mu.Unlock()
	}()

	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache, no-transform")
	hdr.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream

	tr := &sseTransport{SSEServerTransport: sess.transport, sess: sess}
	ss, err := h.server.Connect(ctx, tr, nil) // writes the endpoint event
	if err != nil {
		h.log.Warn("opening SSE session failed", zap.Error(err))
		http.Error(w, "connection failed", http.StatusInternalServerError)
		return
	}
	closed := make(chan struct{})
	go func() {
		_ = ss.Wait() // how a session ends is go-sdk's to log
		close(closed)
	}()
	select {
	case <-ctx.Done(): // client left, or drained
	case <-closed: // the server closed the session
	}
	// Closing the connection first ends its reader, on which go-sdk cancels
	// the calls in flight: their replies could only travel on this stream.
	// ss.Close alone would wait for them to finish.
	_ = tr.conn.Close()
	_ = ss.Close()
	<-closed // no write to w after this handler returns
}

// sseTransport keeps the connection that mcp.SSEServerTransport returns, so
// that serveStream can close it directly, and wraps it to attach each
// message's mcp.RequestExtra.
type sseTransport struct {
	*mcp.SSEServerTransport
	sess *sseSession
	conn mcp.Connection
}

func (t *sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.SSEServerTransport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &sseConn{Connection: conn, sess: t.sess}
	return t.conn, nil
}

// sseConn attaches to each request it reads what serveMessage recorded of
// the POST that carried it, and leaves unsent the answers to calls the
// client cancelled.
type sseConn struct {
	mcp.Connection
	sess *sseSession
}

func (c *sseConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if req, ok := msg.(*jsonrpc.Request); ok && req.Extra == nil {
		if extra := c.sess.takeExtra(req); extra != nil {
			req.Extra = extra
		}
	}
	return msg, err
}

// Write sends msg on the GET stream, unless it answers a call the client
// cancelled: MCP's cancellation utility says the receiver should not
// answer it, and a client that has forgotten the id reports an answer to
// it as an error (the TypeScript SDK: "unknown message ID").
func (c *sseConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok && c.sess.dropAnswer(resp.ID) {
		return nil
	}
	return c.Connection.Write(ctx, msg)
}

// serveMessage handles POST /messages?sessionId=ID.
func (h *sseHandler) serveMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return
	}
	q := r.URL.Query()
	id := q.Get("sessionId")
	if id == "" {
		id = q.Get("sessionid") // go-sdk's spelling
	}
	if id == "" {
		http.Error(w, "Bad Request: sessionId is required", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	sess := h.sessions[id]
	h.mu.Unlock()
	if sess == nil {
		http.Error(w, msgSSESessionNotFound, http.StatusNotFound)
		return
	}
	if p, _ := principalFrom(r.Context()); sess.user != "" && p.id != sess.user {
		http.Error(w, "session user mismatch", http.StatusForbidden)
		return
	}

	// checkBody buffered and validated the body; decode it to track calls.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "reading request body failed", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var call jsonrpc.ID
	if msg, err := jsonrpc.DecodeMessage(body); err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			call = req.ID
		} else if ok && req.Method == methodCancelled {
			if id, ok := cancelledID(req.Params); ok {
				sess.cancel(id)
			}
		}
	}
	if call.IsValid() {
		switch ok, duplicate := sess.begin(call); {
		case duplicate:
			// go-sdk would take it (202) and drop it unanswered.
			writeRPCErrorID(w, http.StatusBadRequest, call.Raw(), jsonrpc.CodeInvalidRequest,
				"Invalid Request: request id already in use by a call not yet answered")
			return
		case !ok:
			http.Error(w, "server is shutting down", http.StatusServiceUnavailable)
			return
		}
	}
	sess.putExtra(call, &mcp.RequestExtra{TokenInfo: auth.TokenInfoFromContext(r.Context()), Header: r.Header})
	sw := &statusWriter{ResponseWriter: w}
	sess.transport.ServeHTTP(sw, r)
	if call.IsValid() && sw.status != http.StatusAccepted {
		sess.done(call) // not queued: no answer will come
		sess.dropExtra(call)
	}
}

// putExtra records what a tool handler may see of the POST carrying call
// (an invalid ID for a notification or a response).
func (s *sseSession) putExtra(call jsonrpc.ID, extra *mcp.RequestExtra) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if call.IsValid() {
		s.extras[call] = extra
	}
	s.latest = extra
}

func (s *sseSession) dropExtra(call jsonrpc.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.extras, call)
}

// takeExtra returns the extra recorded for req: its own for a call; for a
// notification, or a call whose own is gone, the latest one posted, which
// belongs to the same principal (serveMessage refuses any other). Never nil:
// a tool handler takes a request without one for a local (stdio) call, to
// which every tool is allowed. A call's own is gone when a second POST
// reused its id before go-sdk read it (replacing it, or dropping it when
// refused).
func (s *sseSession) takeExtra(req *jsonrpc.Request) *mcp.RequestExtra {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.IsCall() {
		if extra, ok := s.extras[req.ID]; ok {
			delete(s.extras, req.ID)
			return extra
		}
	}
	return s.latest
}

// begin records an in-flight call; it refuses new calls while draining,
// and a call under the id of one not yet answered (duplicate).
func (s *sseSession) begin(id jsonrpc.ID) (ok, duplicate bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.pending[id]; dup {
		return false, true
	}
	if s.draining {
		return false, false
	}
	s.pending[id] = struct{}{}
	return true, false
}

// cancel marks a pending call as cancelled by the client; a call already
// answered (or never posted) is left alone, so that a late notification
// cannot silence a later call that reuses the id.
func (s *sseSession) cancel(id jsonrpc.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[id]; ok {
		s.cancelled[id] = struct{}{}
	}
}

// dropAnswer reports whether the answer to call id is to be left unsent
// (the client cancelled the call); if so the call is done.
func (s *sseSession) dropAnswer(id jsonrpc.ID) bool {
	s.mu.Lock()
	_, ok := s.cancelled[id]
	s.mu.Unlock()
	if ok {
		s.done(id)
	}
	return ok
}

// done forgets an answered call and ends a draining stream once idle, after
// drainLinger for the client to read the reply.
func (s *sseSession) done(id jsonrpc.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pending[id]; !ok {
		return
	}
	delete(s.pending, id)
	delete(s.cancelled, id)
	if s.draining && len(s.pending) == 0 {
		time.AfterFunc(drainLinger, s.end)
	}
}

// drain ends every SSE stream as soon as it has no call in flight, and
// refuses new streams.
func (h *sseHandler) drain() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.draining = true
	for _, s := range h.sessions {
		s.mu.Lock()
		s.draining = true
		if len(s.pending) == 0 {
			s.end()
		}
		s.mu.Unlock()
	}
}

// sseCallWriter is the GET stream's writer: it sees every event the session
// writes (one Write per event, see mcp's writeEvent) and marks the calls
// whose responses went out.
type sseCallWriter struct {
	http.ResponseWriter
	sess *sseSession
}

// Unwrap lets http.ResponseController flush the underlying writer.
func (w *sseCallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *sseCallWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if id, ok := responseID(p); ok {
		w.sess.done(id)
	}
	return n, err
}

// responseID returns the id of the JSON-RPC response carried by an SSE
// "message" event, if it carries one.
func responseID(event []byte) (jsonrpc.ID, bool) {
	const prefix = "event: message\n"
	if !bytes.HasPrefix(event, []byte(prefix)) {
		return jsonrpc.ID{}, false
	}
	for line := range bytes.Lines(event[len(prefix):]) {
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		msg, err := jsonrpc.DecodeMessage(bytes.TrimRight(data, "\n"))
		if err != nil {
			return jsonrpc.ID{}, false
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			return jsonrpc.ID{}, false
		}
		return resp.ID, true
	}
	return jsonrpc.ID{}, false
}

// statusWriter records the status code a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
