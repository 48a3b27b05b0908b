package transport_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/transport"
)

const keyC = "test-key-charlie-5555555555"

// startHTTPLogged is startHTTP with a logger the test can wait on.
func startHTTPLogged(t *testing.T, s *mcp.Server, opts transport.HTTPOptions) (*httptest.Server, func(msg string) <-chan struct{}) {
	t.Helper()
	log, _, wait := watchLog()
	h, err := transport.NewHTTPHandler(s, opts, log)
	if err != nil {
		t.Fatalf("NewHTTPHandler: %v", err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts, wait
}

func bearer(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

// openSession sends initialize to a stateful server and returns the status
// and the new session's id.
func openSession(t *testing.T, url string, header map[string]string) (int, string, string) {
	t.Helper()
	resp, body := do(t, rpc(t, "POST", url+"/mcp", initializeBody, header))
	return resp.StatusCode, body, resp.Header.Get("Mcp-Session-Id")
}

// checkLimitBody checks that a refusal carries a JSON-RPC error.
func checkLimitBody(t *testing.T, body string) {
	t.Helper()
	var doc struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("refusal body %q is not JSON: %v", body, err)
	}
	if doc.JSONRPC != "2.0" || string(doc.ID) != "null" || doc.Error.Code != -32000 || !strings.Contains(doc.Error.Message, "limit") {
		t.Errorf("refusal body = %s; want a JSON-RPC error -32000 naming the limit", body)
	}
}

// TestSessionCaps fills the per-identity and total caps on stateful
// sessions, and checks that ending a session (DELETE) frees its slot.
func TestSessionCaps(t *testing.T) {
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{
		Stateful: true, APIKeys: []string{keyA, keyB, keyC}, MaxSessions: 3, MaxSessionsPerIdentity: 2,
	})
	mustOpen := func(key string) string {
		t.Helper()
		code, body, sid := openSession(t, ts.URL, bearer(key))
		if code != http.StatusOK || sid == "" {
			t.Fatalf("initialize with %s = %d %q, session %q; want 200 and a session", key[:14], code, body, sid)
		}
		return sid
	}
	refused := func(key string, want int) {
		t.Helper()
		code, body, _ := openSession(t, ts.URL, bearer(key))
		if code != want {
			t.Fatalf("initialize with %s = %d %q; want %d", key[:14], code, body, want)
		}
		checkLimitBody(t, body)
	}
	end := func(key, sid string) {
		t.Helper()
		resp, body := do(t, rpc(t, "DELETE", ts.URL+"/mcp", "", map[string]string{
			"Authorization": "Bearer " + key, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18",
		}))
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE session = %d %q; want 204", resp.StatusCode, body)
		}
	}

	a1 := mustOpen(keyA)
	mustOpen(keyA)
	refused(keyA, http.StatusTooManyRequests) // A holds its 2
	b1 := mustOpen(keyB)
	refused(keyC, http.StatusServiceUnavailable) // 3 in total
	refused(keyB, http.StatusServiceUnavailable) // B is under its own cap, the server is not

	end(keyA, a1)
	mustOpen(keyA) // A's slot came back
	refused(keyA, http.StatusTooManyRequests)
	end(keyB, b1)
	mustOpen(keyC)

	// Requests on existing sessions are not capped.
	resp, body := do(t, rpc(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{
		"Authorization": "Bearer " + keyA, "Mcp-Session-Id": a1, "Mcp-Protocol-Version": "2025-06-18",
	}))
	if resp.StatusCode != http.StatusNotFound { // a1 was deleted: go-sdk's answer, not a cap's
		t.Errorf("POST on a deleted session = %d %q; want 404", resp.StatusCode, body)
	}
}

// TestSessionCapReleases checks the other ways a slot comes back: a POST
// that creates no lasting session, and a session that expires. Without auth
// the cap counts per remote address.
func TestSessionCapReleases(t *testing.T) {
	t.Run("POST that is not an initialize", func(t *testing.T) {
		ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Stateful: true, MaxSessionsPerIdentity: 1})
		// go-sdk opens a session for a POST without Mcp-Session-Id, and
		// closes it at once when the POST is not an initialize.
		for range 3 {
			resp, body := do(t, rpc(t, "POST", ts.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, nil))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("ping without a session = %d %q; want 200", resp.StatusCode, body)
			}
		}
		if code, body, _ := openSession(t, ts.URL, nil); code != http.StatusOK {
			t.Fatalf("initialize after pings = %d %q; want 200: a ping must not keep a slot", code, body)
		}
		code, body, _ := openSession(t, ts.URL, nil)
		if code != http.StatusTooManyRequests {
			t.Fatalf("second session from the same address = %d %q; want 429", code, body)
		}
		checkLimitBody(t, body)
	})

	t.Run("session that expires", func(t *testing.T) {
		ts, wait := startHTTPLogged(t, newMCPServer(newGate()), transport.HTTPOptions{
			Stateful: true, MaxSessionsPerIdentity: 1, SessionTimeout: 150 * time.Millisecond,
		})
		if code, body, _ := openSession(t, ts.URL, nil); code != http.StatusOK {
			t.Fatalf("initialize = %d %q; want 200", code, body)
		}
		ended := wait("stateful session ended")
		select {
		case <-ended:
		default:
			if code, body, _ := openSession(t, ts.URL, nil); code != http.StatusTooManyRequests {
				t.Fatalf("second session before the first expired = %d %q; want 429", code, body)
			}
		}
		<-ended // SessionTimeout closed the first one
		if code, body, _ := openSession(t, ts.URL, nil); code != http.StatusOK {
			t.Errorf("initialize after the session expired = %d %q; want 200", code, body)
		}
	})
}

// TestSSEStreamCaps fills the per-identity and total caps on legacy SSE
// streams, and checks that a stream's slot is freed when its client leaves.
func TestSSEStreamCaps(t *testing.T) {
	ts, wait := startHTTPLogged(t, newMCPServer(newGate()), transport.HTTPOptions{
		APIKeys: []string{keyA, keyB, keyC}, MaxSSEStreams: 2, MaxSSEStreamsPerIdentity: 1,
	})
	get := func(ctx context.Context, key string) *http.Response {
		t.Helper()
		req := rpc(t, "GET", ts.URL+"/sse", "", map[string]string{"Accept": "text/event-stream", "Authorization": "Bearer " + key}).WithContext(ctx)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET /sse: %v", err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	refused := func(key string, want int) {
		t.Helper()
		resp := get(t.Context(), key)
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != want {
			t.Fatalf("GET /sse with %s = %d; want %d", key[:14], resp.StatusCode, want)
		}
		checkLimitBody(t, string(body))
	}

	ctxA, leaveA := context.WithCancel(t.Context())
	if resp := get(ctxA, keyA); resp.StatusCode != http.StatusOK {
		t.Fatalf("first stream for A = %d; want 200", resp.StatusCode)
	}
	refused(keyA, http.StatusTooManyRequests)
	if resp := get(t.Context(), keyB); resp.StatusCode != http.StatusOK {
		t.Fatalf("first stream for B = %d; want 200", resp.StatusCode)
	}
	refused(keyC, http.StatusServiceUnavailable)

	leaveA()
	<-wait("SSE stream ended")
	if resp := get(t.Context(), keyC); resp.StatusCode != http.StatusOK {
		t.Errorf("stream for C after A left = %d; want 200", resp.StatusCode)
	}
}

// TestCapsDefaults checks that the zero options cap sessions: the 65th
// session of one caller is refused.
func TestCapsDefaults(t *testing.T) {
	ts := startHTTP(t, newMCPServer(newGate()), transport.HTTPOptions{Stateful: true, APIKeys: []string{keyA}})
	var codes []int
	for range transport.DefaultMaxSessionsPerIdentity + 1 {
		code, _, _ := openSession(t, ts.URL, bearer(keyA))
		codes = append(codes, code)
	}
	want := make([]int, transport.DefaultMaxSessionsPerIdentity+1)
	for i := range want {
		want[i] = http.StatusOK
	}
	want[len(want)-1] = http.StatusTooManyRequests
	if diff := cmp.Diff(want, codes); diff != "" {
		t.Errorf("initialize statuses (-want +got):\n%s", diff)
	}
}
