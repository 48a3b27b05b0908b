package transport

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestCallTable: a key held by one call cancels it; a key two calls hold
// (clients behind one address numbering alike) cancels neither, until one
// ends; entries go in any order, and the table ends empty.
func TestCallTable(t *testing.T) {
	tab := newCallTable()
	k := callKey{"addr:127.0.0.1", mustID(t, float64(7))}
	ctx1, cancel1 := context.WithCancel(t.Context())
	ctx2, cancel2 := context.WithCancel(t.Context())
	ctx3, cancel3 := context.WithCancel(t.Context())
	c1, c2, c3 := tab.add(k, nil, cancel1), tab.add(k, nil, cancel2), tab.add(k, nil, cancel3)
	tab.cancel(k)
	if ctx1.Err() != nil || ctx2.Err() != nil || ctx3.Err() != nil {
		t.Fatal("an ambiguous id cancelled a call")
	}
	tab.remove(k, c2) // the middle one
	tab.remove(k, c3) // the head
	tab.cancel(callKey{"addr:127.0.0.2", k.id})
	tab.cancel(callKey{k.who, mustID(t, "7")})
	if ctx1.Err() != nil {
		t.Fatal("another caller's or another id's notification cancelled the call")
	}
	rec := httptest.NewRecorder()
	c1.ResponseWriter = rec
	io.WriteString(c1, "before")
	tab.cancel(k)
	if ctx1.Err() == nil {
		t.Fatal("the only call under its key was not cancelled")
	}
	if n, err := io.WriteString(c1, "after"); n != 5 || err != nil {
		t.Errorf("write after the cancellation = %d, %v; want it dropped silently", n, err)
	}
	if got := rec.Body.String(); got != "before" {
		t.Errorf("response = %q; want what was written before the cancellation only", got)
	}
	tab.remove(k, c1)
	if tab.n != 0 || len(tab.calls) != 0 {
		t.Fatalf("table not empty: n=%d, %d keys", tab.n, len(tab.calls))
	}
	tab.cancel(k) // nothing in flight: no effect
}

// TestCallTableFull: past maxInflightCalls a call is not tracked.
func TestCallTableFull(t *testing.T) {
	tab := newCallTable()
	tab.n = maxInflightCalls
	if c := tab.add(callKey{"x", mustID(t, float64(1))}, nil, func() {}); c != nil {
		t.Fatal("a full table took a call")
	}
}

// TestCancelledID: requestId decodes as go-sdk decodes an id; a missing,
// null or malformed one is no id.
func TestCancelledID(t *testing.T) {
	for params, want := range map[string]any{
		`{"requestId":7}`:                  float64(7),
		`{"requestId":"abc","reason":"x"}`: "abc",
		`{"requestId":null}`:               nil,
		`{}`:                               nil,
		`{"requestId":{}}`:                 nil,
		`[1]`:                              nil,
		``:                                 nil,
	} {
		id, ok := cancelledID(json.RawMessage(params))
		if want == nil {
			if ok {
				t.Errorf("cancelledID(%s) = %v; want none", params, id)
			}
			continue
		}
		if !ok || id != mustID(t, want) {
			t.Errorf("cancelledID(%s) = %v, %v; want %v", params, id, ok, want)
		}
	}
}

// BenchmarkCallTableServe is what the table adds to a stateless call: the
// key, a cancellable context, the entry and its removal (b.N calls through
// serve to a handler that does nothing, against the same without the table).
func BenchmarkCallTableServe(b *testing.B) {
	msg, _, _, _ := inspectMessage([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`), 64)
	r := httptest.NewRequest("POST", "/mcp", nil)
	w := httptest.NewRecorder()
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	b.Run("table", func(b *testing.B) {
		tab := newCallTable()
		b.ReportAllocs()
		for b.Loop() {
			tab.serve(w, r, msg, next)
		}
	})
	b.Run("none", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			next.ServeHTTP(w, r)
		}
	})
}
