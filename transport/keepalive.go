package transport

import (
	"io"
	"mime"
	"net/http"
	"sync"
	"time"
)

// keepAliveComment is an SSE comment line: clients ignore it, proxies and
// load balancers see traffic and keep an idle stream open.
const keepAliveComment = ": keepalive\n\n"

// stallChunk is the most of a response written under one write deadline.
const stallChunk = 64 << 10

// keepAlive writes keepAliveComment on a text/event-stream response after
// every interval without other writes, and bounds every write of the
// response by stall (see keepAliveWriter.arm). go-sdk has no such hook: its
// ServerOptions.KeepAlive sends JSON-RPC pings, which need a session that can
// receive a reply and so do nothing for stateless or legacy SSE streams.
//
// A response is only recognised as a stream once its header is written, so a
// POST whose SSE response has not written its first event yet (a slow call
// with no progress notifications) gets no comments until then: its status is
// not decided before that.
func keepAlive(interval, stall time.Duration, next http.Handler) http.Handler {
	if interval <= 0 && stall <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kw := &keepAliveWriter{w: w, interval: interval, stall: stall, rc: *http.NewResponseController(w)}
		defer kw.close()
		next.ServeHTTP(kw, r)
	})
}

// keepAliveWriter serializes the handler's writes with the keepalive
// comments: go-sdk writes each SSE event in one Write, so a comment can never
// land inside an event.
type keepAliveWriter struct {
	w        http.ResponseWriter
	interval time.Duration // 0: no comments
	stall    time.Duration // 0: writes unbounded
	rc       http.ResponseController

	deadline time.Time // the write deadline set on the connection; zero: none

	mu          sync.Mutex
	wroteHeader bool
	closed      bool        // the handler returned: w must not be touched
	timer       *time.Timer // non-nil once the response is an event stream
}

func (k *keepAliveWriter) Header() http.Header { return k.w.Header() }

// Unwrap lets http.ResponseController reach the underlying writer.
func (k *keepAliveWriter) Unwrap() http.ResponseWriter { return k.w }

func (k *keepAliveWriter) WriteHeader(code int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.writeHeaderLocked(code)
}

func (k *keepAliveWriter) writeHeaderLocked(code int) {
	if k.wroteHeader {
		return
	}
	k.w.WriteHeader(code)
	if code < 200 {
		return // informational: the real header follows
	}
	k.wroteHeader = true
	if code != http.StatusOK || k.interval <= 0 {
		return
	}
	if ct, _, _ := mime.ParseMediaType(k.w.Header().Get("Content-Type")); ct == "text/event-stream" {
		// A timer whose function runs only if it fires: most streams
		// (one small call's answer) end before the interval, and then no
		// goroutine was started or woken for them.
		k.timer = time.AfterFunc(k.interval, k.tick)
	}
}

func (k *keepAliveWriter) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return 0, io.ErrClosedPipe // a write after the handler returned
	}
	k.writeHeaderLocked(http.StatusOK)
	n, err := k.writeLocked(p)
	if k.timer != nil {
		k.timer.Reset(k.interval)
	}
	return n, err
}

// writeLocked writes p in pieces of at most stallChunk bytes, each under a
// deadline armed by arm.
func (k *keepAliveWriter) writeLocked(p []byte) (int, error) {
	if k.stall <= 0 {
		return k.w.Write(p)
	}
	written := 0
	for len(p) > 0 {
		piece := p[:min(len(p), stallChunk)]
		k.arm()
		n, err := k.w.Write(piece)
		written += n
		if err != nil {
			return written, err
		}
		p = p[len(piece):]
	}
	return written, nil
}

// arm makes sure the next write has at least stall/2 to make progress: a
// client that stops reading (a full socket buffer) would otherwise hold the
// handler, and the answer it is writing, as long as it keeps the connection
// open. The deadline is moved only when half of it has passed, so most
// writes of a small answer cost a clock read. A write that misses it fails,
// and net/http closes the connection.
func (k *keepAliveWriter) arm() {
	if k.stall <= 0 {
		return
	}
	now := time.Now()
	if !k.deadline.IsZero() && k.deadline.Sub(now) >= k.stall/2 {
		return
	}
	if k.rc.SetWriteDeadline(now.Add(k.stall)) == nil {
		k.deadline = now.Add(k.stall)
	}
}

// FlushError implements the interface http.ResponseController looks for.
func (k *keepAliveWriter) FlushError() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.writeHeaderLocked(http.StatusOK)
	k.arm()
	return k.rc.Flush()
}

// Flush implements http.Flusher.
func (k *keepAliveWriter) Flush() { _ = k.FlushError() }

// tick writes a comment when the timer fires, that is after interval
// without writes (Write resets the timer), and arms it again.
func (k *keepAliveWriter) tick() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return
	}
	// A failed write means the client left; the handler sees its request
	// context end.
	k.arm()
	if _, err := io.WriteString(k.w, keepAliveComment); err == nil {
		_ = k.rc.Flush()
	}
	k.timer.Reset(k.interval)
}

// close stops the comments; after it returns nothing writes to w.
func (k *keepAliveWriter) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	if k.timer != nil {
		k.timer.Stop() // a tick already running sees closed and writes nothing
	}
	if !k.deadline.IsZero() {
		// The connection may serve another request: net/http sets no
		// write deadline of its own (no WriteTimeout), and its own writes
		// before the next handler (100 Continue) must not meet this one.
		_ = k.rc.SetWriteDeadline(time.Time{})
	}
}
