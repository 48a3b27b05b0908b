package transport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/transport/handoff"
)

// TestHandOffHTTP: a request gets a taker in its context; a short write
// that carries one of its stand-ins goes out with the parts in its place,
// and the taker keeps nothing after; other writes (no stand-in, another
// taker's, a long write) go out as they are; Flush still reaches the
// connection.
func TestHandOffHTTP(t *testing.T) {
	big := strings.Repeat("x", 100<<10)
	foreign := string(handoff.NewTaker().Put([]byte("{}")))
	var taker *handoff.Taker
	h := handOffHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		taker = handoff.FromContext(r.Context())
		if taker == nil {
			t.Error("no taker in the request's context")
			return
		}
		s := string(taker.Put([]byte(`{"big":"`), []byte(big), []byte(`"}`)))
		io.WriteString(w, "event: message\ndata: {\"id\":1,\"result\":"+s+"}\n\n")
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("Flush: %v", err)
		}
		io.WriteString(w, "event: message\ndata: {\"id\":2,\"result\":"+foreign+"}\n\n")
		io.WriteString(w, "data: "+big+s+"\n\n") // long: not searched
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	got := string(body)
	want := "event: message\ndata: {\"id\":1,\"result\":{\"big\":\"" + big + "\"}}\n\n"
	if !strings.HasPrefix(got, want) {
		t.Fatalf("first event: %.100q…", got)
	}
	rest := got[len(want):]
	if !strings.HasPrefix(rest, "event: message\ndata: {\"id\":2,\"result\":"+foreign+"}\n\n") {
		t.Errorf("a foreign stand-in was not left as it is: %.100q", rest)
	}
	if !strings.HasSuffix(rest, "\n\n") || !strings.Contains(rest, big+`"\u0000handoff:`) {
		t.Errorf("the long write was changed: …%.100q", rest[max(0, len(rest)-100):])
	}
	if taker.Pending() != 0 {
		t.Errorf("%d results pending after the request", taker.Pending())
	}
}
