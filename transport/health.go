package transport

import (
	"encoding/json"
	"net/http"
)

// healthBody is the /health document: "status" plus the process Status.
type healthBody struct {
	State string `json:"status"` // always "ok"
	*Status
}

// readyBody is the /ready document.
type readyBody struct {
	Ready    bool `json:"ready"`
	Draining bool `json:"draining,omitempty"`
}

// healthHandler serves GET /health: liveness, always 200 while the process
// serves, with what the process reports about itself. It needs no
// credential, so that probes work, but the upstream base URL (which maps
// the private network behind the bridge) is shown only to a caller that
// authenticated: authenticated reports whether r did, or auth is off.
func healthHandler(status func() Status, authenticated func(*http.Request) bool) http.Handler {
	return getOnly(func(w http.ResponseWriter, r *http.Request) {
		body := healthBody{State: "ok"}
		if status != nil {
			st := status()
			if st.UpstreamBaseURL != "" && !authenticated(r) {
				st.UpstreamBaseURL = ""
			}
			body.Status = &st
		}
		writeJSON(w, http.StatusOK, body)
	})
}

// readyHandler serves GET /ready: 200 once Status().Ready (spec loaded and
// tools registered), 503 before, and 503 with "draining" once shutdown has
// started (draining reports it). Without a status func it is ready until
// shutdown.
func readyHandler(status func() Status, draining func() bool) http.Handler {
	return getOnly(func(w http.ResponseWriter, _ *http.Request) {
		body := readyBody{Draining: draining()}
		body.Ready = !body.Draining && (status == nil || status().Ready)
		code := http.StatusOK
		if !body.Ready {
			code = http.StatusServiceUnavailable
		}
		writeJSON(w, code, body)
	})
}

// getOnly answers 405 with Allow to anything but GET and HEAD.
func getOnly(f http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		f(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil { // cannot happen: fixed types
		http.Error(w, "encoding response failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(body, '\n'))
}
