package bridge_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

const encodingSpec = `openapi: 3.0.3
info: {title: enc, version: "1"}
paths:
  /thing:
    get:
      operationId: getThing
      parameters:
        - {name: Accept-Encoding, in: header, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: object, properties: {name: {type: string}}}
`

func compress(t *testing.T, kind string, data string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w interface {
		Write([]byte) (int, error)
		Close() error
	}
	switch kind {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "zlib":
		w = zlib.NewWriter(&buf)
	case "flate":
		w, _ = flate.NewWriter(&buf, flate.DefaultCompression)
	case "zstd":
		w, _ = zstd.NewWriter(&buf)
	case "zstd-wide":
		// A frame whose header asks for a 32 MiB window (descriptor
		// 15<<3: 2^(10+15) bytes), holding data one raw last block.
		n := len(data)
		buf.Write([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 15 << 3, byte(1 | n<<3), byte(n >> 5), byte(n >> 13)})
		buf.WriteString(data)
		return buf.Bytes()
	}
	w.Write([]byte(data))
	w.Close()
	return buf.Bytes()
}

// TestContentEncodings: an answer compressed without being asked (x-gzip,
// deflate as zlib or raw) reaches the agent decoded; an encoding the
// bridge cannot decode, or a corrupt stream, is an error that says so,
// never compressed bytes passed off as the answer. The agent cannot set
// Accept-Encoding (the bridge owns decoding).
func TestContentEncodings(t *testing.T) {
	const answer = `{"name":"widget"}`
	var gotAE atomic.Value
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAE.Store(r.Header.Get("Accept-Encoding"))
		var body []byte
		ce := r.URL.Query().Get("q")
		switch ce {
		case "x-gzip", "gzip, identity":
			body = compress(t, "gzip", answer)
		case "deflate":
			body = compress(t, "zlib", answer)
		case "deflate-raw":
			ce, body = "deflate", compress(t, "flate", answer)
		case "deflate, gzip":
			body = compress(t, "gzip", string(compress(t, "zlib", answer)))
		case "zstd":
			body = compress(t, "zstd", `{"name":"widget","password":"hunter2hunter2"}`)
		case "zstd, gzip":
			body = compress(t, "gzip", string(compress(t, "zstd", answer)))
		case "zstd-corrupt":
			ce, body = "zstd", append(compress(t, "zstd", answer)[:8], "not zstd beyond its header"...)
		case "zstd-wide":
			ce, body = "zstd", compress(t, "zstd-wide", answer)
		case "zstd, zstd":
			body = compress(t, "zstd", string(compress(t, "zstd", answer)))
		case "br":
			body = []byte{0x1b, 0x03, 0x00, 0xf8}
		case "corrupt":
			ce, body = "deflate", []byte("this is not deflate at all, just text")
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", ce)
		w.Write(body)
	}))
	defer up.Close()
	cat := specCatalog(t, encodingSpec, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	if in := string(cat.Tools()[0].InputSchema().Raw()); strings.Contains(in, "Accept-Encoding") {
		t.Errorf("Accept-Encoding is an argument: %s", in)
	}
	rt := bridge.NewRuntime(cat)
	for _, tc := range []struct {
		q        string
		kind     bridge.ErrorKind
		contains string
	}{
		{"x-gzip", bridge.OK, `"widget"`},
		{"gzip, identity", bridge.OK, `"widget"`},
		{"deflate", bridge.OK, `"widget"`},
		{"deflate-raw", bridge.OK, `"widget"`},
		{"deflate, gzip", bridge.OK, `"widget"`},
		// zstd (RFC 9659, which browsers and CDNs now send) is decoded,
		// and what it held redacted; it was refused as an encoding the
		// bridge cannot decode.
		{"zstd", bridge.OK, `"password":"[REDACTED]"`},
		{"zstd, gzip", bridge.OK, `"widget"`},
		{"zstd-corrupt", bridge.Unavailable, "compressed answer is corrupt"},
		{"zstd-wide", bridge.Unavailable, "compressed answer is corrupt"},
		// Each zstd layer may hold an 8 MiB window: four stacked ones
		// made a few KB cost 37 MiB. Servers compress once.
		{"zstd, zstd", bridge.Unavailable, "zstd applied 2 times; the bridge undoes it once"},
		{"br", bridge.Unavailable, `content encoding the bridge cannot decode: "br"`},
		{"corrupt", bridge.Unavailable, "compressed answer is corrupt"},
	} {
		t.Run(tc.q, func(t *testing.T) {
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: "getThing", Args: []byte(`{"q":"` + tc.q + `"}`)})
			if err != nil {
				t.Fatal(err)
			}
			text := out.Result.Content[0].(*mcp.TextContent).Text
			if out.Kind != tc.kind || !strings.Contains(text, tc.contains) || strings.Contains(text, "hunter2") {
				t.Errorf("kind %v, text %q; want %v containing %q", out.Kind, text, tc.kind, tc.contains)
			}
			if ae := gotAE.Load(); ae != "gzip" {
				t.Errorf("upstream got Accept-Encoding %q, want the transport's gzip", ae)
			}
		})
	}
}

// TestMalformedAnswerNotRetried: an upstream that does not speak HTTP is
// reported as such, at once: trying an idempotent call again would only
// meet the same bytes.
func TestMalformedAnswerNotRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				buf := make([]byte, 4096)
				c.Read(buf)
				c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\nProtocol mismatch.\r\n"))
			}()
		}
	}()
	client := upstream.New(upstream.Options{RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
	rt := bridge.NewRuntime(specCatalog(t, encodingSpec, bridge.Options{BaseURL: "http://" + ln.Addr().String(), Client: client}))
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "getThing", Args: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	text := out.Result.Content[0].(*mcp.TextContent).Text
	if out.Kind != bridge.Unavailable || !strings.Contains(text, "not valid HTTP") {
		t.Errorf("kind %v, text %q; want upstream_unavailable saying the answer is not valid HTTP", out.Kind, text)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1 (no retry)", n)
	}
}

// TestCookieHeaderParameter: a header parameter named Cookie is an
// argument only where nothing else makes the Cookie header; next to cookie
// parameters it would be overwritten, so it is not offered.
func TestCookieHeaderParameter(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: ck, version: "1"}
paths:
  /alone:
    get:
      operationId: alone
      parameters:
        - {name: Cookie, in: header, schema: {type: string}}
      responses: {"200": {description: ok}}
  /both:
    get:
      operationId: both
      parameters:
        - {name: Cookie, in: header, schema: {type: string}}
        - {name: theme, in: cookie, schema: {type: string}}
      responses: {"200": {description: ok}}
`
	up, got, _ := echoUpstream(t)
	cat := specCatalog(t, spec, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	rt := bridge.NewRuntime(cat)
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "alone", Args: []byte(`{"Cookie":"sess=1"}`)})
	if err != nil || out.Kind != bridge.OK {
		t.Fatalf("alone: %v %+v", err, out)
	}
	if c := got.Load().Header.Get("Cookie"); c != "sess=1" {
		t.Errorf("alone: Cookie %q", c)
	}
	var in string
	for _, tl := range cat.Tools() {
		if tl.Name() == "both" {
			in = string(tl.InputSchema().Raw())
		}
	}
	if strings.Contains(in, `"Cookie"`) || !strings.Contains(in, `"theme"`) {
		t.Errorf("both: input schema %s; want theme and no Cookie", in)
	}
}

// TestTransportErrorLogHasNoArguments: a failed upstream request is
// logged without its URL, whose path and query carry argument values
// (those are logged only with --log-arguments, by the usage record).
func TestTransportErrorLogHasNoArguments(t *testing.T) {
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
			c.Close() // EOF before any answer
		}
	}()
	core, logs := observer.New(zap.InfoLevel)
	rt := bridge.NewRuntime(specCatalog(t, encodingSpec, bridge.Options{BaseURL: "http://" + ln.Addr().String(), Client: &http.Client{}, Logger: zap.New(core)}))
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "getThing", Args: []byte(`{"q":"jane.doe@example.com"}`)})
	if err != nil || out.Kind != bridge.Unavailable {
		t.Fatalf("%v %+v", err, out)
	}
	entries := logs.FilterMessage("upstream request failed").All()
	if len(entries) != 1 {
		t.Fatalf("%d log entries, want 1", len(entries))
	}
	for k, v := range entries[0].ContextMap() {
		if s, _ := v.(string); strings.Contains(s, "jane.doe") {
			t.Errorf("log field %s = %q holds an argument value", k, s)
		}
	}
	if op := entries[0].ContextMap()["op"]; op != "GET /thing" {
		t.Errorf("op = %v, want GET /thing", op)
	}
}
