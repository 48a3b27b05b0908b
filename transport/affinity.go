package transport

import (
	"bytes"
	"net/http"
)

// The answers to a request naming a session this server does not hold.
// Behind a load balancer without session affinity that is every request
// after initialize that lands on another replica, and go-sdk's bare
// "session not found" left the operator reading it to guess why; the
// client still gets the 404 the transport specifies (start a new session).
const (
	msgSessionNotFound = "session not found: it has ended (idle past the session timeout, deleted, or this server restarted) " +
		"or it was opened on another replica: stateful sessions need session affinity at a load balancer " +
		"(the default stateless mode does not)"
	msgSSESessionNotFound = "session not found: its GET /sse stream has ended, or it was opened on another replica: " +
		"the legacy SSE transport needs session affinity at a load balancer"
)

// goSDKSessionNotFound is the body go-sdk's stateful handler writes (with
// http.Error, so one Write) for an unknown Mcp-Session-Id.
var goSDKSessionNotFound = []byte("session not found\n")

// sessionHint gives go-sdk's 404 for an unknown Mcp-Session-Id the body
// msgSessionNotFound. Only that answer changes: any other status or body
// (a 404 of another kind included) passes as go-sdk wrote it.
func sessionHint(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") == "" {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&sessionHintWriter{ResponseWriter: w}, r)
	})
}

type sessionHintWriter struct {
	http.ResponseWriter
	status  int
	written bool // a body write was seen
}

func (w *sessionHintWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionHintWriter) Write(p []byte) (int, error) {
	first := !w.written
	w.written = true
	if first && w.status == http.StatusNotFound && bytes.Equal(p, goSDKSessionNotFound) {
		if _, err := w.ResponseWriter.Write([]byte(msgSessionNotFound + "\n")); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (w *sessionHintWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
