package trace_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/mcpbridge/mcpbridge/bridge/trace"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

// TestAttemptErrorQuotesNothing: Go's transport quotes the upstream's bytes
// in some errors (a header line without a colon, whole), and otelhttp puts
// the error's text in the attempt span's status: an upstream echoing the
// bridge's API key in such a line sent it to the trace collector. The span
// says what the client is told; the caller still gets the error itself.
func TestAttemptErrorQuotesNothing(t *testing.T) {
	const secret = "hdr-secret-4b227777d4dd1fc6"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			c.Read(buf) //nolint:errcheck // the request, unread
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nX%s y\r\nContent-Length: 2\r\n\r\n{}", secret)
			c.Close()
		}
	}()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background()) //nolint:errcheck // in memory
	client := &http.Client{Transport: trace.Transport(tp)(http.DefaultTransport)}
	resp, err := client.Get("http://" + ln.Addr().String() + "/")
	if err == nil {
		resp.Body.Close()
		t.Fatal("a malformed header was accepted")
	}
	if kind := upstream.FailureKind(err); kind != "the upstream's answer is not valid HTTP" {
		t.Errorf("the caller's error %q reads as %q", err, kind)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	seen := []string{s.Status().Description}
	for _, a := range s.Attributes() {
		seen = append(seen, a.Value.Emit())
	}
	for _, e := range s.Events() {
		for _, a := range e.Attributes {
			seen = append(seen, a.Value.Emit())
		}
	}
	if all := strings.Join(seen, " | "); strings.Contains(all, secret) || !strings.Contains(s.Status().Description, "not valid HTTP") {
		t.Errorf("the span records %q", all)
	}
}
