package specloader_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// refSpec is a spec whose one response schema is the document at target.
func refSpec(target string) string {
	return `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "` + target + `"}
`
}

const petSchema = "type: object\nproperties:\n  name: {type: string}\n"

// newCountingServer serves petSchema at every path, and counts requests.
func newCountingServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Write([]byte(petSchema))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// serveSpec serves body at every path.
func serveSpec(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func checkRefSchema(t *testing.T, res *specloader.Result) {
	t.Helper()
	s := res.Doc.Paths.Value("/a").Get.Responses.Value("200").Value.Content["application/json"].Schema.Value
	if s == nil || s.Properties["name"] == nil {
		t.Errorf("schema $ref not resolved to the pet schema: %+v", s)
	}
}

// TestRefsStayOnOrigin: a remote spec's $refs reach other origins only when
// Options.AllowOrigins names them, and never link-local, unspecified or
// reserved addresses (cloud metadata), allowed or not. A refused $ref is a
// plain error, and nothing is requested.
func TestRefsStayOnOrigin(t *testing.T) {
	other, hits := newCountingServer(t)
	otherPort := other.URL[strings.LastIndex(other.URL, ":")+1:]
	tests := []struct {
		name   string
		target string
		allow  []string
		want   string // "" means the load succeeds
		hits   int32  // requests the other server gets
	}{
		{"other origin", other.URL + "/pet.yaml", nil, "is not followed: references are followed only on the spec's own origin", 0},
		{"other origin, allowed", other.URL + "/pet.yaml", []string{other.URL}, "", 1},
		{"other origin, another port allowed", other.URL + "/pet.yaml", []string{"http://127.0.0.1:1"}, "is not followed", 0},
		{"metadata", "http://169.254.169.254/latest/meta-data/iam/security-credentials/", nil, "is not followed", 0},
		{"metadata, allowed", "http://169.254.169.254/latest/meta-data/", []string{"http://169.254.169.254"}, "link-local (cloud metadata) addresses are never dialed", 0},
		{"metadata as mapped IPv6, allowed", "http://[::ffff:169.254.169.254]/latest/", []string{"http://[::ffff:169.254.169.254]"}, "never dialed", 0},
		{"IPv6 link-local, allowed", "http://[fe80::1]/x.yaml", []string{"http://[fe80::1]"}, "never dialed", 0},
		{"AWS IPv6 metadata, allowed", "http://[fd00:ec2::254]/latest/", []string{"http://[fd00:ec2::254]"}, "never dialed", 0},
		{"unspecified, which Linux dials as loopback, allowed", "http://0.0.0.0:" + otherPort + "/pet.yaml", []string{"http://0.0.0.0:" + otherPort}, "unspecified addresses are never dialed", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits.Store(0)
			spec := serveSpec(t, refSpec(tt.target))
			res, err := specloader.Load(t.Context(), spec.URL+"/openapi.yaml", specloader.Options{AllowOrigins: tt.allow})
			switch {
			case tt.want == "" && err != nil:
				t.Fatal(err)
			case tt.want == "":
				checkRefSchema(t, res)
			case err == nil:
				t.Fatalf("Load succeeded; want an error containing %q", tt.want)
			case !strings.Contains(err.Error(), tt.want):
				t.Errorf("Load error %q does not contain %q", err, tt.want)
			case errors.Is(err, specloader.ErrFetch):
				t.Errorf("a refused $ref is an ErrFetch: %v", err)
			}
			if got := hits.Load(); got != tt.hits {
				t.Errorf("the other server got %d requests; want %d", got, tt.hits)
			}
		})
	}
}

// TestLocalSpecURLRefs: a local spec, in a file or in memory, follows file
// $refs, and URL $refs only to the origins of Options.AllowOrigins, private
// addresses included.
func TestLocalSpecURLRefs(t *testing.T) {
	other, hits := newCountingServer(t)
	path := filepath.Join(t.TempDir(), "openapi.yaml")
	if err := os.WriteFile(path, []byte(refSpec(other.URL+"/pet.yaml")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := specloader.Load(t.Context(), path, specloader.Options{})
	if err == nil || !strings.Contains(err.Error(), "a local spec's references to URLs are followed only to the origins of Options.AllowOrigins") {
		t.Errorf("Load of a file with a URL $ref: %v; want it refused", err)
	}
	_, err = specloader.LoadData(t.Context(), []byte(refSpec(other.URL+"/pet.yaml")), nil, specloader.Options{})
	if err == nil || !strings.Contains(err.Error(), "is not followed") {
		t.Errorf("LoadData with a URL $ref: %v; want it refused", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("refused $refs made %d requests", n)
	}

	res, err := specloader.Load(t.Context(), path, specloader.Options{AllowOrigins: []string{other.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	checkRefSchema(t, res)
}

// TestSpecRedirects: the spec may be redirected on its origin, from http
// to https on its host, and to an allowed origin; not elsewhere, and never
// to a forbidden address. Result.Location stays the URL as requested.
func TestSpecRedirects(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		w.Write([]byte(refSpec("#/components/schemas/Pet") + "components:\n  schemas:\n    Pet:\n      type: object\n      properties:\n        name: {type: string}\n"))
	}))
	t.Cleanup(other.Close)
	main := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/openapi.yaml", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/openapi.yaml", http.StatusMovedPermanently)
		case "/metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		default:
			http.Redirect(w, r, other.URL+"/openapi.yaml", http.StatusFound)
		}
	}))
	t.Cleanup(main.Close)
	// main serves nothing itself: /here leads to /openapi.yaml, which
	// leads to other, so same-origin hops are followed first.

	tests := []struct {
		name  string
		path  string
		allow []string
		want  string
		hits  int32
	}{
		{"cross-origin", "/away", nil, "refused: another origin, not in Options.AllowOrigins", 0},
		{"cross-origin, allowed", "/away", []string{other.URL}, "", 1},
		{"same origin, then allowed", "/here", []string{other.URL}, "", 1},
		{"same origin, then cross-origin", "/here", nil, "to " + other.URL + "/openapi.yaml refused", 0},
		{"metadata", "/metadata", nil, "refused: another origin", 0},
		{"metadata, allowed", "/metadata", []string{"http://169.254.169.254"}, "never dialed", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			otherHits.Store(0)
			src := main.URL + tt.path
			want := tt.want
			res, err := specloader.Load(t.Context(), src, specloader.Options{AllowOrigins: tt.allow})
			switch {
			case want == "" && err != nil:
				t.Fatal(err)
			case want == "":
				checkRefSchema(t, res)
				if got := res.Location.String(); got != src {
					t.Errorf("Location = %s; want the URL as requested, %s", got, src)
				}
			case err == nil:
				t.Fatalf("Load succeeded; want an error containing %q", want)
			case !strings.Contains(err.Error(), want):
				t.Errorf("Load error %q does not contain %q", err, want)
			case errors.Is(err, specloader.ErrFetch):
				t.Errorf("a refused redirect is an ErrFetch: %v", err)
			}
			if got := otherHits.Load(); got != tt.hits {
				t.Errorf("the other server got %d requests; want %d", got, tt.hits)
			}
		})
	}

	_, err := specloader.Load(t.Context(), main.URL+"/file", specloader.Options{})
	if err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("redirect to a file URL: %v; want it refused", err)
	}
}

// TestRefRedirects: a $ref's redirect is held to the same rules.
func TestRefRedirects(t *testing.T) {
	other, hits := newCountingServer(t)
	var spec *httptest.Server
	spec = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/openapi.yaml":
			w.Write([]byte(refSpec("./pet.yaml")))
		case "/pet.yaml":
			http.Redirect(w, r, other.URL+"/pet.yaml", http.StatusFound)
		}
	}))
	t.Cleanup(spec.Close)

	_, err := specloader.Load(t.Context(), spec.URL+"/openapi.yaml", specloader.Options{})
	if err == nil || !strings.Contains(err.Error(), "refused: another origin") {
		t.Errorf("$ref redirected to another origin: %v; want it refused", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the other server got %d requests; want none", n)
	}
	res, err := specloader.Load(t.Context(), spec.URL+"/openapi.yaml", specloader.Options{AllowOrigins: []string{other.URL}})
	if err != nil {
		t.Fatal(err)
	}
	checkRefSchema(t, res)
}

func TestAllowOriginsInvalid(t *testing.T) {
	for _, o := range []string{"example.com", "https://example.com/path", "ftp://example.com", "https://me:hunter2@example.com", "https://example.com?x=1", "https://"} {
		t.Run(o, func(t *testing.T) {
			_, err := specloader.Load(t.Context(), "testdata/refs/openapi.yaml", specloader.Options{AllowOrigins: []string{o}})
			if err == nil || !strings.Contains(err.Error(), "Options.AllowOrigins") || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("Load with AllowOrigins [%s]: %v; want an error naming Options.AllowOrigins, without the password", o, err)
			}
		})
	}
}

// TestOptionsClientChecked: with Options.Client, whose dialing specloader
// cannot see, addresses are still checked, by a lookup before each request.
func TestOptionsClientChecked(t *testing.T) {
	rt := &countingTransport{}
	spec := serveSpec(t, refSpec("http://169.254.169.254/latest/meta-data/"))
	_, err := specloader.Load(t.Context(), spec.URL+"/openapi.yaml", specloader.Options{
		Client:       &http.Client{Transport: rt},
		AllowOrigins: []string{"http://169.254.169.254"},
	})
	if err == nil || !strings.Contains(err.Error(), "never dialed") {
		t.Errorf("Load with Options.Client and a metadata $ref: %v; want it refused", err)
	}
	if rt.n != 1 {
		t.Errorf("Options.Client made %d requests; want 1 (the spec only)", rt.n)
	}
}
