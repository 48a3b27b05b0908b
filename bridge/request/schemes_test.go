package request

import (
	"context"
	"net/http"
	"testing"
)

// TestWithSchemesWins: where a security scheme and a credential configured
// for every call name the same query parameter, cookie or header (as
// lenient servers read names), the request carries the scheme's alone;
// a scheme sent in Authorization replaces the configured token; the
// configured credentials themselves are left as they were.
func TestWithSchemesWins(t *testing.T) {
	global := Credentials{
		BearerToken: "global-token",
		Query:       map[string]string{"API_KEY": "global-query", "other": "o"},
		Cookies:     map[string]string{"sid": "global-cookie"},
		Headers:     map[string]string{"x_api_key": "global-header"},
	}
	uses := []SchemeUse{
		{Name: "Q", Type: "apiKey", In: "query", Param: "api_key"},
		{Name: "C", Type: "apiKey", In: "cookie", Param: "sid"},
		{Name: "H", Type: "apiKey", In: "header", Param: "X-API-Key"},
		{Name: "B", Type: "http", Scheme: "basic"},
	}
	secrets := map[string]SchemeSecret{"Q": {Value: "q"}, "C": {Value: "c"}, "H": {Value: "h"}, "B": {User: "u", Password: "p"}}
	merged, grant := global.WithSchemes(uses, secrets)
	if grant != "" {
		t.Errorf("grant = %q, want none", grant)
	}
	prep, err := merged.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	p := &Plan{Label: "GET /x", Method: http.MethodGet, Base: "https://api.example.com/v1", Path: []Seg{{Lit: "/x", Param: -1}}}
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	req, err := p.Build(context.Background(), map[string]any{}, prep, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.URL.RawQuery, "api_key=q&other=o"; got != want {
		t.Errorf("query %q, want %q", got, want)
	}
	if got := req.Header.Get("Cookie"); got != "sid=c" {
		t.Errorf("Cookie %q, want sid=c", got)
	}
	if got := req.Header.Values("X-Api-Key"); len(got) != 1 || got[0] != "h" || req.Header.Get("X_api_key") != "" {
		t.Errorf("X-API-Key %q (and X_api_key %q), want h alone", got, req.Header.Get("X_api_key"))
	}
	if u, pw, ok := req.BasicAuth(); !ok || u != "u" || pw != "p" {
		t.Errorf("Authorization %q, want basic u:p", req.Header.Get("Authorization"))
	}
	if global.Query["API_KEY"] != "global-query" || global.BearerToken != "global-token" || len(global.Headers) != 1 {
		t.Errorf("the configured credentials changed: %+v", global)
	}
}
