package transport

import (
	"bytes"
	"net/http"

	"github.com/mcpbridge/mcpbridge/transport/handoff"
	"github.com/mcpbridge/mcpbridge/transport/reqctx"
)

// handOffHTTP gives each request of a stateless streamable HTTP session a
// handoff taker (transport/handoff) and its own context (transport/reqctx),
// and writes handed-off results in place
// of their stand-ins, so that a large result skips go-sdk's two encodings
// of it (jsonrpc2's, then EncodeMessage's for the event).
//
// Stateless only: there a session lives for one request, so its results
// are written to that request's response and nothing is kept past it. A
// stateful session outlives the request that opened it, and its event
// store replays events (Last-Event-ID) after their results were taken.
func handOffHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := handoff.NewTaker()
		// The request's own context rides along (transport/reqctx): go-sdk
		// hands the call's handler one without its cancellation before the
		// 2026-07-28 revision.
		next.ServeHTTP(&handoffWriter{ResponseWriter: w, taker: t}, r.WithContext(handoff.WithTaker(reqctx.With(r.Context()), t)))
		t.Drop()
	})
}

// handoffWriter exchanges stand-ins for the results they stand for. go-sdk
// writes each message (an SSE event, or a JSON body) in one Write, and a
// message that carries a stand-in is short, so only short writes are
// searched.
type handoffWriter struct {
	http.ResponseWriter
	taker *handoff.Taker
}

// maxStandInWrite bounds the writes searched for a stand-in: a response
// whose result is one (~120 bytes) in its SSE framing. go-sdk writes one
// event per message; only its JSON-response mode (StreamableHTTPOptions.
// JSONResponse, which the bridge does not set) joins a batch's messages
// into one write, and would need every write searched.
const maxStandInWrite = 4 << 10

func (w *handoffWriter) Write(p []byte) (int, error) {
	if len(p) > maxStandInWrite {
		return w.ResponseWriter.Write(p)
	}
	prefix := w.taker.Prefix()
	i := bytes.Index(p, prefix)
	if i < 0 {
		return w.ResponseWriter.Write(p)
	}
	end := bytes.IndexByte(p[i+len(prefix):], '"')
	if end < 0 {
		return w.ResponseWriter.Write(p)
	}
	end += i + len(prefix) + 1
	parts, ok := w.taker.Take(p[i:end])
	if !ok {
		return w.ResponseWriter.Write(p)
	}
	for _, part := range append(append([][]byte{p[:i]}, parts...), p[end:]) {
		if _, err := w.ResponseWriter.Write(part); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (w *handoffWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
