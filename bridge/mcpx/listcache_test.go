package mcpx_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/transport/handoff"
)

// listSpec has characters encoding/json escapes differently with and
// without HTML escaping (<, >, &) and the line separators it always
// escapes, in descriptions and in a schema.
func listSpec(extra string) string {
	return `openapi: 3.0.3
info: {title: lists, version: "1"}
paths:
  /a:
    get:
      operationId: alpha
      summary: "Alpha <b>bold</b> & more"
      description: "Line\u2028separated & <escaped>"
      parameters: [{name: q, in: query, description: "a < b && c > d", schema: {type: string, pattern: "^<[a-z]+>$"}}]
      responses:
        "200":
          description: ok
          content: {application/json: {schema: {type: object, properties: {html: {type: string, description: "<p>&amp;</p>"}}}}}
  /b:
    post:
      operationId: beta
      summary: Beta
      requestBody: {content: {application/json: {schema: {type: object, properties: {n: {type: integer}}}}}}
      responses: {"200": {description: ok}}
` + extra
}

// wire is a raw stdio-like session with srv: lines written and read as
// bytes, so that two answers can be compared byte for byte.
type wire struct {
	t    *testing.T
	in   io.Writer
	out  *bufio.Reader
	next int
}

func newWire(t *testing.T, srv *mcp.Server, version string) *wire {
	t.Helper()
	return newWireCtx(t, t.Context(), srv, version)
}

// newWireCtx is newWire with the session's context.
func newWireCtx(t *testing.T, ctx context.Context, srv *mcp.Server, version string) *wire {
	t.Helper()
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	ss, err := srv.Connect(ctx, &mcp.IOTransport{Reader: sr, Writer: sw, MaxLineLength: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Closing the reader too releases a notification (list_changed after
	// a swap) that the server is writing while nobody reads.
	t.Cleanup(func() { cw.Close(); cr.Close(); ss.Close() })
	w := &wire{t: t, in: cw, out: bufio.NewReaderSize(cr, 1<<20)}
	w.call("initialize", `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}`)
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return w
}

func (w *wire) send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.in, line+"\n"); err != nil {
		w.t.Fatal(err)
	}
}

// call sends a request and returns its result's bytes as written.
func (w *wire) call(method, params string) []byte {
	w.t.Helper()
	w.next++
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q`, w.next, method)
	if params != "" {
		req += `,"params":` + params
	}
	w.send(req + "}")
	for {
		line, err := w.out.ReadBytes('\n')
		if err != nil {
			w.t.Fatal(err)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			w.t.Fatalf("answer %q: %v", line, err)
		}
		if msg.ID == nil || *msg.ID != w.next {
			continue // a notification
		}
		if msg.Error != nil {
			w.t.Fatalf("%s: error %s", method, msg.Error)
		}
		return msg.Result
	}
}

func (w *wire) list() []byte { return w.call("tools/list", "") }

// TestToolsListReused: from the second tools/list on, the answer comes
// from the encoded array and is byte for byte the first one's (which
// encoding/json wrote the usual way), for every revision class; a swap
// of the catalog invalidates it.
func TestToolsListReused(t *testing.T) {
	up := newUpstream(t)
	cat := catalog(t, listSpec(""), up, nil)
	rt := bridge.NewRuntime(cat)
	srv := mcpx.New(rt, mcpx.Options{Version: "test"})
	for _, version := range []string{"2025-03-26", "2025-06-18", "2025-11-25"} {
		w := newWire(t, srv.MCP(), version)
		first, second, third := w.list(), w.list(), w.list()
		if !bytes.Equal(first, second) || !bytes.Equal(first, third) {
			t.Errorf("%s: lists differ:\n%s\n%s\n%s", version, first, second, third)
		}
		if !bytes.Contains(first, []byte(`"Alpha <b>bold</b> & more"`)) || !bytes.Contains(first, []byte(`"beta"`)) {
			t.Errorf("%s: list lacks the tools as written: %s", version, first)
		}
	}

	// A swap: the next list shows the new catalog, and is reused in turn.
	up2 := httptest.NewServer(up.Config.Handler)
	t.Cleanup(up2.Close)
	cat2 := catalog(t, listSpec("  /c:\n    get:\n      operationId: gamma\n      responses: {\"200\": {description: ok}}\n"), up2, map[string]string{"beta": "Beta, described anew"})
	rt.Swap(cat2)
	w := newWire(t, srv.MCP(), "2025-11-25")
	after, again := w.list(), w.list()
	if !bytes.Contains(after, []byte(`"gamma"`)) || !bytes.Contains(after, []byte("Beta, described anew")) {
		t.Errorf("list after the swap shows the old catalog: %s", after)
	}
	if !bytes.Equal(after, again) {
		t.Errorf("lists after the swap differ:\n%s\n%s", after, again)
	}
}

// TestToolsListFromSnapshot: a catalog restored from a snapshot that
// carries the encoded list answers its first tools/list with it, byte for
// byte what the first server answered; an array whose names do not match
// the tools, or a client of the other class, gets the list encoded anew.
func TestToolsListFromSnapshot(t *testing.T) {
	up := newUpstream(t)
	cat := catalog(t, listSpec(""), up, nil)
	srv := mcpx.New(bridge.NewRuntime(cat), mcpx.Options{Version: "test"})
	want := newWire(t, srv.MCP(), "2025-11-25").list()
	wantOld := newWire(t, srv.MCP(), "2025-03-26").list()

	l := srv.EncodedList(cat)
	if l == nil || strings.Join(l.Names, ",") != "alpha,beta,ping" {
		t.Fatalf("EncodedList = %v; want alpha, beta and ping", l)
	}
	if other := catalog(t, listSpec(""), up, nil); srv.EncodedList(other) != nil {
		t.Error("EncodedList of a catalog the server does not list: want nil")
	}
	restore := func(l *bridge.EncodedList) *mcp.Server {
		t.Helper()
		cat.SetEncodedList(l)
		snap, err := cat.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		restored, err := bridge.NewFromSnapshot(snap, bridge.Options{BaseURL: up.URL, Client: up.Client(), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return mcpx.New(bridge.NewRuntime(restored), mcpx.Options{Version: "test"}).MCP()
	}
	if got := newWire(t, restore(l), "2025-11-25").list(); !bytes.Equal(got, want) {
		t.Errorf("restored server's first list:\n%s\nwant\n%s", got, want)
	}

	// The array is trusted as the snapshot is: a marked one is served...
	marked := &bridge.EncodedList{Names: l.Names, JSON: bytes.Replace(l.JSON, []byte("Beta"), []byte("MARK"), 1)}
	srv2 := restore(marked)
	if got := newWire(t, srv2, "2025-11-25").list(); !bytes.Contains(got, []byte("MARK")) {
		t.Errorf("restored server encoded its first list anew instead of using the snapshot's: %s", got)
	}
	// ...to the class it was encoded for only.
	if got := newWire(t, srv2, "2025-03-26").list(); !bytes.Equal(got, wantOld) {
		t.Errorf("2025-03-26 client got:\n%s\nwant\n%s", got, wantOld)
	}
	// Names that are not the tools': not used.
	wrong := &bridge.EncodedList{Names: []string{"alpha", "beta"}, JSON: marked.JSON}
	if got := newWire(t, restore(wrong), "2025-11-25").list(); !bytes.Equal(got, want) {
		t.Errorf("an array for other tools was served: %s", got)
	}
}

// TestToolsListHandedOff: a session whose context carries a handoff taker
// (the stdio transport's) gets a stand-in for a large list, and the bytes
// handed off are, joined, byte for byte the list encoding/json writes,
// both the first list (encoded anew) and the next (from the list cache).
// A small list is not handed off.
func TestToolsListHandedOff(t *testing.T) {
	up := newUpstream(t)
	var extra strings.Builder
	for i := range 150 {
		fmt.Fprintf(&extra, "  /x%d:\n    get:\n      operationId: extra%d\n      description: %q\n      responses: {\"200\": {description: ok}}\n", i, i, strings.Repeat("Some <b>text</b> & more, ", 20))
	}
	for _, c := range []struct {
		name   string
		extra  string
		handed bool
	}{{"large", extra.String(), true}, {"small", "", false}} {
		t.Run(c.name, func(t *testing.T) {
			srv := mcpx.New(bridge.NewRuntime(catalog(t, listSpec(c.extra), up, nil)), mcpx.Options{Version: "test"})
			want := newWire(t, srv.MCP(), "2025-11-25").list()
			taker := handoff.NewTaker()
			w := newWireCtx(t, handoff.WithTaker(t.Context(), taker), srv.MCP(), "2025-11-25")
			for i := range 2 {
				got := w.list()
				parts, handed := taker.Take(got)
				if handed != c.handed {
					t.Fatalf("list %d (%d bytes): handed off %v, want %v", i+1, len(want), handed, c.handed)
				}
				if handed {
					got = bytes.Join(parts, nil)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("list %d differs from encoding/json's:\n%.300s\nwant\n%.300s", i+1, got, want)
				}
			}
		})
	}
}
