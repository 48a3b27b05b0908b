package main

import (
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestHandler(t *testing.T) {
	srv := httptest.NewServer(newHandler(handlerOptions{StepDelay: time.Nanosecond}))
	defer srv.Close()
	tests := []struct {
		method, path string
		body         string
		wantStatus   int
		wantType     string
		wantPrefix   string
	}{
		{"GET", "/simple-text", "", 200, "text/plain", simpleText},
		{"GET", "/image", "", 200, "image/png", "\x89PNG"},
		{"GET", "/audio", "", 200, "audio/wav", "RIFF"},
		{"GET", "/embedded-resource", "", 200, "application/pdf", "%PDF-1.4"},
		{"GET", "/error", "", 500, "text/plain", errorText},
		{"GET", "/multiple-content-types", "", 200, "multipart/mixed", "--"},
		{"GET", "/logging", "", 200, "text/plain", loggingText},
		{"GET", "/logging-tool", "", 200, "text/plain", loggingText},
		{"GET", "/progress", "", 200, "text/plain", progressText},
		{"POST", "/json-schema-2020-12?name=a", `{"street":"s"}`, 200, "application/json", `{"body":{"street":"s"},"query":{"name":["a"]}}`},
		{"GET", "/static-text", "", 200, "text/plain", staticText},
		{"GET", "/template/123/data", "", 200, "application/json", `{"data":"Data for ID: 123","id":"123","templateTest":true}`},
		{"GET", "/nope", "", 404, "text/plain", "404"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			got := []any{resp.StatusCode, mt, strings.HasPrefix(string(body), tt.wantPrefix)}
			want := []any{tt.wantStatus, tt.wantType, true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("status, type, prefix mismatch (-want +got):\n%s\nbody: %q", diff, body)
			}
		})
	}
}

func TestRunRejectsNonLoopback(t *testing.T) {
	err := run(t.Context(), []string{"--listen", "0.0.0.0:0"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "only loopback") {
		t.Errorf("run(--listen 0.0.0.0:0) = %v; want a loopback error", err)
	}
}
