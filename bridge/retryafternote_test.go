package bridge_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

// TestUpstreamRetryAfterReachesTheAgent: an error answer's Retry-After
// is said in the error text. The agent got "upstream returned HTTP 429
// Too Many Requests: ..." and no word of when to try again: a 429 whose
// wait ran past the call's deadline (answered at once), and any status
// of a call the bridge never retries (a POST), lost it.
func TestUpstreamRetryAfterReachesTheAgent(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("b") {
		case "date":
			w.Header().Set("Retry-After", time.Now().Add(90*time.Second).UTC().Format(http.TimeFormat))
		case "garbage":
			w.Header().Set("Retry-After", "soon")
		default:
			w.Header().Set("Retry-After", "120")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"message":"slow down"}`))
	}))
	t.Cleanup(up.Close)
	client := upstream.New(upstream.Options{RetryWaitMin: time.Millisecond, RetryWaitMax: 2 * time.Millisecond})
	rt := bridge.NewRuntime(specCatalog(t, answerSpec, bridge.Options{BaseURL: up.URL, Client: client}))
	for _, tc := range []struct{ b, want string }{
		{"secs", "upstream returned HTTP 429 Too Many Requests (the upstream asks to retry after 2m0s): "},
		{"date", "(the upstream asks to retry after 1m"},
		{"garbage", "upstream returned HTTP 429 Too Many Requests: "},
	} {
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: "getAnswer", Args: []byte(`{"b":"` + tc.b + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		text := resultText(out.Result)
		if !out.Result.IsError || !strings.Contains(text, tc.want) || !strings.Contains(text, "slow down") {
			t.Errorf("%s: %q; want an error containing %q and the body", tc.b, text, tc.want)
		}
	}
}
