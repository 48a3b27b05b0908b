package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// TestUpstreamURLKey is the review's F7: a key in the --upstream URL's
// query still reaches the upstream, but ping shows the URL with its query
// values masked, and an upstream echoing the key (as it is, URL-escaped or
// in an error answer) does not show it to the client or the log.
func TestUpstreamURLKey(t *testing.T) {
	const key = "SECRET-KEY-123"
	var mu sync.Mutex
	var got []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RawQuery)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/api/missing" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":"no such thing for appid %s"}`, r.URL.Query().Get("appid"))
			return
		}
		fmt.Fprintf(w, `{"id":"1","echo":%q,"self":%q}`, "appid is "+r.URL.Query().Get("appid"), "http://"+r.Host+r.URL.String())
	}))
	defer api.Close()
	var stderr bytes.Buffer
	var smu sync.Mutex
	t.Cleanup(func() { // after the process exits (registered before startBridge's cleanup)
		smu.Lock()
		defer smu.Unlock()
		if strings.Contains(stderr.String(), key) {
			t.Errorf("the log holds the key:\n%s", stderr.String())
		}
	})
	upstream := api.URL + "/api?appid=" + key + "&v=2"
	cs, _ := startBridgeStderr(t, lockedWriter{&smu, &stderr}, "serve", "--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml",
		"--upstream", upstream, "--no-cache", "--log-level", "debug")

	res, text := callText(t, cs, "ping", nil)
	var info bridge.PingInfo
	if err := json.Unmarshal([]byte(text), &info); err != nil || res.IsError {
		t.Fatalf("ping: %s (%v)", text, err)
	}
	if want := api.URL + "/api?appid=[REDACTED]&v=[REDACTED]"; info.Upstream != want {
		t.Errorf("ping upstream = %q, want %q", info.Upstream, want)
	}
	for _, c := range []struct{ tool, itemID string }{{"getItem", "1"}, {"getMissing", ""}} {
		args := map[string]any{}
		if c.itemID != "" {
			args["itemId"] = c.itemID
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: args})
		if err != nil {
			t.Fatalf("CallTool(%s): %v", c.tool, err)
		}
		out := resultText(t, res)
		if strings.Contains(out, key) || !strings.Contains(out, "[REDACTED]") {
			t.Errorf("%s: the key is not masked: %s", c.tool, out)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || !strings.HasPrefix(got[0], "appid="+key+"&v=2") {
		t.Errorf("the upstream received queries %q; want the configured key first", got)
	}
}

func TestPublicURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"https://api.example.com/v1", "https://api.example.com/v1"},
		{"http://127.0.0.1:9901/?appid=SECRET-KEY-123", "http://127.0.0.1:9901/?appid=[REDACTED]"},
		{"https://h/k?token=a%2Bb&flag&page=2&", "https://h/k?token=[REDACTED]&[REDACTED]&page=[REDACTED]&"},
		{"https://user:pw@h/p#frag", "https://h/p"},
		{"http://h/a%zz?x=1", "http://h/a%zz?[REDACTED]"},
	} {
		if got := bridge.PublicURL(c.in); got != c.want {
			t.Errorf("PublicURL(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := bridge.PublicURL(bridge.PublicURL(c.in)); got != c.want {
			t.Errorf("PublicURL twice (%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestUpstreamQueryValues(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"https://h/v1", nil},
		{"https://h/v1?", nil},
		{"https://h/?appid=SECRET-KEY-123&v=2", []string{"SECRET-KEY-123"}},
		{"https://h/?api_key=a%2Bb%3D&bare-key-value9", []string{"a%2Bb%3D", "a+b=", "bare-key-value9"}},
		{"https://h/?a=&b&token=abcd", []string{"abcd"}},
		// Not keys: a date, a version, words, a number.
		{"https://h/?api-version=2024-01-01&preview=2024-05-01-preview&format=json&limit=100&v=v1.2.3", nil},
	} {
		if diff := cmp.Diff(c.want, upstreamQueryValues(c.in)); diff != "" {
			t.Errorf("upstreamQueryValues(%q) mismatch (-want +got):\n%s", c.in, diff)
		}
	}
}
