package transport

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestJWKSClientBounds: a JWKS download follows redirects only within its
// origin and fails past jwksMaxBytes, instead of following a key server to
// any host or reading an endless body into memory.
func TestJWKSClientBounds(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the other origin was asked for %s", r.URL)
		io.WriteString(w, `{"keys":[]}`)
	}))
	defer other.Close()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/jwks", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, srv.URL+"/jwks", http.StatusFound)
		case "/huge":
			w.Write([]byte(`{"keys":["`))
			w.Write([]byte(strings.Repeat("a", 2*jwksMaxBytes)))
		default:
			io.WriteString(w, `{"keys":[]}`)
		}
	}))
	defer srv.Close()
	c := jwksClient()
	get := func(path string) (string, error) {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get("/moved"); err != nil || body != `{"keys":[]}` {
		t.Errorf("same-origin redirect: %q, %v; want the key set", body, err)
	}
	if _, err := get("/away"); err == nil || !strings.Contains(err.Error(), "another origin") {
		t.Errorf("cross-origin redirect: err = %v; want a refusal", err)
	}
	if body, err := get("/huge"); err == nil || len(body) > jwksMaxBytes {
		t.Errorf("huge body: read %d bytes, err = %v; want an error within %d bytes", len(body), err, jwksMaxBytes)
	}
}
