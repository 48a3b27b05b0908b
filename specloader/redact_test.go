package specloader_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/specloader"
)

var redactTests = []struct{ in, want string }{
	{"https://api.example.com/openapi.json?access_token=abc123&page=2", "https://api.example.com/openapi.json?access_token=REDACTED&page=REDACTED"},
	{"https://api.example.com/spec?api_key=k&&flag", "https://api.example.com/spec?api_key=REDACTED&&REDACTED"},
	{"https://user:pass@api.example.com/x", "https://user:REDACTED@api.example.com/x"},
	{"https://ghp_0123456789@raw.example.com/x", "https://REDACTED@raw.example.com/x"},
	{"https://api.example.com/x#access_token=abc", "https://api.example.com/x#REDACTED"},
	{"https://api.example.com/x#/access_token=abc", "https://api.example.com/x#REDACTED"},
	{"https://api.example.com/x#secret", "https://api.example.com/x#REDACTED"},
	{"https://u:p@api.example.com/s.yaml?k=v#/components/schemas/Pet", "https://u:REDACTED@api.example.com/s.yaml?k=REDACTED#/components/schemas/Pet"}, // a $ref's JSON pointer
	{"https://api.example.com/openapi.yaml", "https://api.example.com/openapi.yaml"},
	{"http://[::1]:8080/a?b=c", "http://[::1]:8080/a?b=REDACTED"},
	{"https://u:p@api.example.com/%zz?token=abc", "https://REDACTED@api.example.com/%zz?REDACTED"}, // does not parse
	{"https://u:p@api.example.com?token=abc", "https://u:REDACTED@api.example.com?token=REDACTED"},
	{"testdata/openapi.yaml", "testdata/openapi.yaml"},
	{"/abs/path?x=y.yaml", "/abs/path?x=y.yaml"}, // a file name, not a URL
	{"", ""},
}

func TestRedactURL(t *testing.T) {
	for _, tt := range redactTests {
		got := specloader.RedactURL(tt.in)
		if got != tt.want {
			t.Errorf("RedactURL(%q) = %q; want %q", tt.in, got, tt.want)
		}
		if again := specloader.RedactURL(got); again != got {
			t.Errorf("RedactURL(%q) = %q; not idempotent", got, again)
		}
	}
}

func FuzzRedactURL(f *testing.F) {
	for _, tt := range redactTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		once := specloader.RedactURL(raw)
		if twice := specloader.RedactURL(once); twice != once {
			t.Errorf("RedactURL(%q) = %q, then %q: not idempotent", raw, once, twice)
		}
		u, err := url.Parse(raw)
		if err != nil || !strings.Contains(raw, "://") {
			return
		}
		if p, ok := u.User.Password(); ok && len(p) > len("REDACTED") && strings.Contains(once, p) {
			t.Errorf("RedactURL(%q) = %q keeps the password", raw, once)
		}
	})
}

// TestCredentialsNotInErrors: a credential in the spec's URL (userinfo, a
// query value) appears in no error, whatever fails and whichever library
// wrote the message, and in no field of the Result.
func TestCredentialsNotInErrors(t *testing.T) {
	const token, password = "tok-0123456789abcdef", "hunter2-pw"
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	other := serveSpec(t, petSchema)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok.yaml", "/pet.yaml":
			if r.URL.Path == "/ok.yaml" {
				w.Write([]byte(refSpec("./pet.yaml")))
			} else {
				w.Write([]byte(petSchema))
			}
		case "/missing-ref.yaml":
			w.Write([]byte(refSpec("./nope.yaml")))
		case "/bad-fragment.yaml":
			w.Write([]byte(refSpec("./pet.yaml#/no/such/place")))
		case "/invalid.yaml":
			w.Write([]byte("openapi: 3.0.3\ninfo: [\n"))
		case "/busy":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/away":
			http.Redirect(w, r, other.URL+"/openapi.yaml?access_token="+token, http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	withCreds := func(base, path string) string {
		u, err := url.Parse(base + path)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword("me", password)
		u.RawQuery = "access_token=" + token + "&v=1"
		return u.String()
	}

	for _, tt := range []struct{ name, src string }{
		{"404", withCreds(srv.URL, "/missing")},
		{"503", withCreds(srv.URL, "/busy")},
		{"connection refused", withCreds(closedURL, "/openapi.yaml")},
		{"$ref 404", withCreds(srv.URL, "/missing-ref.yaml")},
		{"$ref to a missing place", withCreds(srv.URL, "/bad-fragment.yaml")},
		{"invalid YAML", withCreds(srv.URL, "/invalid.yaml")},
		{"redirect refused", withCreds(srv.URL, "/away")},
		{"unparsable URL", "https://me:" + password + "@example.com/%zz?access_token=" + token},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, loadErr := specloader.Load(t.Context(), tt.src, specloader.Options{})
			_, _, readErr := specloader.Read(t.Context(), tt.src, specloader.Options{})
			for fn, err := range map[string]error{"Load": loadErr, "Read": readErr} {
				if err == nil {
					continue // Read succeeds where only parsing fails
				}
				if msg := err.Error(); strings.Contains(msg, token) || strings.Contains(msg, password) {
					t.Errorf("%s error shows a credential: %s", fn, msg)
				}
			}
			if loadErr == nil {
				t.Error("Load succeeded; want an error")
			}
		})
	}

	src := withCreds(srv.URL, "/ok.yaml")
	data, loc, err := specloader.Read(t.Context(), src, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := specloader.LoadData(t.Context(), data, loc, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkRefSchema(t, res) // the $ref, relative, went out with the credentials
	if got, want := res.Location.String(), srv.URL+"/ok.yaml?access_token=REDACTED&v=REDACTED"; got != want {
		t.Errorf("Location = %s; want %s", got, want)
	}
	for _, r := range res.ExternalRefs {
		if strings.Contains(r.Location, token) || strings.Contains(r.Location, password) {
			t.Errorf("ExternalRefs shows a credential: %s", r.Location)
		}
	}
	if len(res.ExternalRefs) != 1 {
		t.Errorf("ExternalRefs = %v; want pet.yaml", res.ExternalRefs)
	}
}

// TestRefFragmentShown: the error for a $ref that is not followed names
// the part of the document it wanted (a JSON pointer), with the URL's
// credentials still masked.
func TestRefFragmentShown(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: x, version: "1"}
paths:
  /a:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema:
                $ref: "https://user:hunter2pass@schemas.example.com/s.yaml?token=abc123#/components/schemas/Pet"
`
	_, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{})
	if err == nil {
		t.Fatal("a $ref to an origin not allowed was followed")
	}
	msg := err.Error()
	if !strings.Contains(msg, "s.yaml?token=REDACTED#/components/schemas/Pet") {
		t.Errorf("the error does not name the $ref's fragment: %s", msg)
	}
	for _, secret := range []string{"hunter2pass", "abc123"} {
		if strings.Contains(msg, secret) {
			t.Errorf("the error shows %q: %s", secret, msg)
		}
	}
}
