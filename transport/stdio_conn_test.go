package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/mcpbridge/mcpbridge/transport/handoff"
)

// sdkLine is what go-sdk's IOTransport writes for msg.
func sdkLine(t testing.TB, msg jsonrpc.Message) []byte {
	t.Helper()
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		t.Fatalf("EncodeMessage: %v", err)
	}
	return append(data, '\n')
}

// marshalResult is a Result as go-sdk makes it (jsonrpc2's marshalToRaw:
// an encoder without HTML escaping).
func marshalResult(t testing.TB, v any) json.RawMessage {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// TestEncodeLineMatchesSDK: every message, shortcut or not, is written
// byte for byte as go-sdk's own encoder writes it.
func TestEncodeLineMatchesSDK(t *testing.T) {
	results := []any{
		map[string]any{"content": []any{map[string]any{"type": "text", "text": `{"a":"<b>&amp; \u2028 é \"q\" \\ \n"}`}}},
		map[string]any{},
		[]any{1.5, "x", nil, true},
		map[string]any{"tools": []any{map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}}},
		"plain",
	}
	ids := []any{int64(0), int64(-7), int64(1 << 53), "abc", "a<b>&c", "with space", `q"uote`, `back\slash`, "é", "tab\t", "\u2028", ""}
	var msgs []jsonrpc.Message
	for _, id := range ids {
		jid, err := jsonrpc.MakeID(id)
		if err != nil {
			if n, ok := id.(int64); ok {
				jid, err = jsonrpc.MakeID(float64(n))
			}
			if err != nil {
				t.Fatalf("MakeID(%v): %v", id, err)
			}
		}
		for _, r := range results {
			msgs = append(msgs, &jsonrpc.Response{ID: jid, Result: marshalResult(t, r)})
		}
		msgs = append(msgs,
			&jsonrpc.Response{ID: jid}, // no result
			&jsonrpc.Response{ID: jid, Error: &jsonrpc.Error{Code: -32602, Message: "bad <x>"}}, // an error
			&jsonrpc.Response{ID: jid, Error: errors.New("plain error")},
			&jsonrpc.Request{ID: jid, Method: "ping"},
		)
	}
	msgs = append(msgs,
		&jsonrpc.Response{Result: marshalResult(t, map[string]any{"x": 1})}, // no id
		&jsonrpc.Request{Method: "notifications/progress", Params: marshalResult(t, map[string]any{"progress": 1})},
	)
	for _, m := range msgs {
		got, err := encodeLine(m)
		if err != nil {
			t.Fatalf("encodeLine(%#v): %v", m, err)
		}
		if want := sdkLine(t, m); !bytes.Equal(got, want) {
			t.Errorf("encodeLine(%#v)\n got %s\nwant %s", m, got, want)
		}
	}
}

// FuzzEncodeLine checks the shortcut against go-sdk's encoder for any
// result go-sdk could have marshaled and any id.
func FuzzEncodeLine(f *testing.F) {
	f.Add(`{"content":[{"type":"text","text":"hi"}]}`, int64(1), "")
	f.Add(`{"a":"<\u2028>"}`, int64(0), "id-1")
	f.Add(`[1,2,{"x":null}]`, int64(-1), `q"`)
	f.Fuzz(func(t *testing.T, raw string, n int64, s string) {
		var v any
		if json.Unmarshal([]byte(raw), &v) != nil {
			return
		}
		result := marshalResult(t, v)
		for _, id := range []jsonrpc.ID{mustID(t, float64(n)), mustID(t, s)} {
			m := &jsonrpc.Response{ID: id, Result: result}
			got, err := encodeLine(m)
			if err != nil {
				t.Fatal(err)
			}
			if want := sdkLine(t, m); !bytes.Equal(got, want) {
				t.Fatalf("encodeLine\n got %s\nwant %s", got, want)
			}
			if !strings.HasSuffix(string(got), "\n") || strings.Count(string(got), "\n") != 1 {
				t.Fatalf("not one line: %q", got)
			}
		}
	})
}

func mustID(t testing.TB, v any) jsonrpc.ID {
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// lockedBuffer is an io.WriteCloser that records every Write call.
type lockedBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.buf.Write(p)
}

func (b *lockedBuffer) Close() error { return nil }

// TestWriteLargeResultInPieces: a result of inPlaceResult bytes or more is
// written in pieces, and still arrives as go-sdk's own line, whole, with
// small messages written concurrently never landing inside it; the drain
// counts each answer once.
func TestWriteLargeResultInPieces(t *testing.T) {
	out := &lockedBuffer{}
	d := newDrain()
	c := &stdioConn{out: d.writer(&syncWriter{w: out}), closed: make(chan struct{})}
	big := marshalResult(t, map[string]any{"content": []any{map[string]any{"type": "text", "text": strings.Repeat(`{"k":"<v>"},`, inPlaceResult/8)}}})
	small := marshalResult(t, map[string]any{"content": []any{}})
	want := map[string]bool{}
	var msgs []jsonrpc.Message
	for i := range 40 {
		r := small
		if i%2 == 0 {
			r = big
		}
		m := &jsonrpc.Response{ID: mustID(t, float64(i)), Result: r}
		msgs = append(msgs, m)
		want[string(sdkLine(t, m))] = true
		d.mu.Lock()
		d.ids[string(idKey(int64(i)))] = struct{}{}
		d.pending++
		d.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, m := range msgs {
		wg.Go(func() {
			if err := c.Write(t.Context(), m); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	lines := strings.SplitAfter(out.buf.String(), "\n")
	if last := lines[len(lines)-1]; last != "" {
		t.Fatalf("output does not end with a newline: ...%q", last[max(0, len(last)-40):])
	}
	lines = lines[:len(lines)-1]
	if len(lines) != len(msgs) {
		t.Fatalf("%d lines, want %d", len(lines), len(msgs))
	}
	for _, l := range lines {
		if !want[l] {
			t.Fatalf("a line is not one of go-sdk's: %.80q", l)
		}
		delete(want, l)
	}
	if out.writes <= len(msgs) {
		t.Errorf("%d writes for %d messages: the large results were copied into one buffer", out.writes, len(msgs))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending != 0 || len(d.ids) != 0 {
		t.Errorf("drain: %d pending, %d ids left after every answer", d.pending, len(d.ids))
	}
}

// TestWriteHandedResult: a response whose result was handed off
// (transport/handoff) is written as go-sdk would write the response with
// the parts joined as its result, plain and escaped ids alike, and the
// taker keeps nothing after; a stand-in of another taker is left as it is.
func TestWriteHandedResult(t *testing.T) {
	out := &lockedBuffer{}
	taker := handoff.NewTaker()
	c := &stdioConn{out: newDrain().writer(&syncWriter{w: out}), taker: taker, closed: make(chan struct{})}
	for _, c2 := range []struct {
		items, writes int
	}{{5000, 3}, {1000, 1}} { // 80 KB: the array alone; 16 KB: one line
		parts := [][]byte{[]byte(`{"content":[],"tools":[`), []byte(strings.Repeat(`{"name":"a<b>"},`, c2.items) + `{}`), []byte(`]}`)}
		joined := bytes.Join(parts, nil)
		for _, id := range []any{float64(7), "abc", "a<b>&c", `q"uote`} {
			out.buf.Reset()
			before := out.writes
			m := &jsonrpc.Response{ID: mustID(t, id), Result: taker.Put(parts...)}
			if err := c.Write(t.Context(), m); err != nil {
				t.Fatal(err)
			}
			want := sdkLine(t, &jsonrpc.Response{ID: m.ID, Result: joined})
			if got := out.buf.String(); got != string(want) {
				t.Errorf("id %v: wrote %.120q…, want %.120q…", id, got, want)
			}
			if n := out.writes - before; n != c2.writes {
				t.Errorf("%d bytes written in %d calls, want %d", len(want), n, c2.writes)
			}
		}
	}
	parts := [][]byte{[]byte(`{"a":`), []byte(strings.Repeat(" ", 10)), []byte(`1}`)}
	if n := taker.Pending(); n != 0 {
		t.Errorf("%d results still pending", n)
	}
	foreign := handoff.NewTaker().Put(parts...)
	out.buf.Reset()
	m := &jsonrpc.Response{ID: mustID(t, float64(8)), Result: foreign}
	if err := c.Write(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	if got := out.buf.String(); got != string(sdkLine(t, m)) {
		t.Errorf("a foreign stand-in was replaced: %.120q", got)
	}
}
