package bridge_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// TestContentTypeCarriesNoSecret: an upstream that echoes the bridge's
// credential into its Content-Type (as is, or lower-cased) does not get it
// to the client through a resource's or an image's mimeType, a truncation
// note or an error text; the answer is passed on as
// application/octet-stream instead.
func TestContentTypeCarriesNoSecret(t *testing.T) {
	const secret = "S3cret-Token-4815162342"
	cases := []struct {
		name, ct string
		status   int
		body     string
		octet    bool // the result names application/octet-stream
	}{
		{"binary", "application/x-" + secret, 200, "\x00\x01\x02binary", true},
		{"binary, lower case", "application/x-" + strings.ToLower(secret), 200, "\x00\x01\x02binary", true},
		{"image", "image/" + secret, 200, "\x89PNG\r\n\x1a\n", true},
		{"in a parameter", "application/octet-stream; name=" + secret, 200, "\x00\x01", true},
		{"error body", "application/x-" + secret, 500, "\x00\x01\x02\x03", true},
		{"truncated", "application/x-" + strings.ToLower(secret), 200, strings.Repeat("\x00abc", 600), true},
	}
	var current int
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := cases[current]
		w.Header().Set("Content-Type", c.ct)
		w.WriteHeader(c.status)
		w.Write([]byte(c.body))
	}))
	defer up.Close()
	rt := bridge.NewRuntime(specCatalog(t, credParamSpec, bridge.Options{
		BaseURL: up.URL, Client: up.Client(), MaxResponseBytes: 1 << 10, Truncate: true,
		Credentials: bridge.Credentials{Headers: map[string]string{"X-Api-Key": secret}},
	}))
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			current = i
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: "echo", Args: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			wire, err := json.Marshal(out.Result)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(strings.ToLower(string(wire)), strings.ToLower(secret)) {
				t.Errorf("the result carries the secret: %s", wire)
			}
			if c.octet && !strings.Contains(string(wire), "application/octet-stream") {
				t.Errorf("the result does not name application/octet-stream: %.400s", wire)
			}
		})
	}
}
