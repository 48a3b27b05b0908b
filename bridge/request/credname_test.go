package request

import (
	"errors"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// TestCredName checks the names credName files a name under, as PHP (and
// CGI for headers) reads them, and the pairs SameParamName and
// SameHeaderName take for one.
func TestCredName(t *testing.T) {
	for _, tc := range []struct {
		in     string
		header bool
		want   string
	}{
		{"api_key", false, "api_key"},
		{"API.Key", false, "api_key"},
		{" api key ", false, "api_key"},
		{"api[key", false, "api_key"},
		{"api[key.x", false, "api_key_x"},
		{"api_key[x]", false, "api_key"},
		{"api_key[]", false, "api_key"},
		{"api.key[x][y]", false, "api_key"},
		{"api_key\x00junk", false, "api_key"},
		{"api-key", false, "api-key"},
		{"X-Api-Key", true, "x_api_key"},
		{"X_Api_Key", true, "x_api_key"},
		{" x.api key ", true, "x_api_key"},
	} {
		if got := credName(tc.in, tc.header); got != tc.want {
			t.Errorf("credName(%q, %v) = %q, want %q", tc.in, tc.header, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name, cred string
		same       bool
	}{
		{"session.id", "session_id", true},
		{" session_id", "session_id", true},
		{"api_key.x", "api_key", true}, // servers that nest on dots
		{"api_key[", "api_key", true},
		{"API_KEY", "api_key", true},
		{"api_key_id", "api_key", false},
		{"api-key", "api_key", false},
		{"api", "api_key", false},
		{"session", "session_id", false},
	} {
		if got := SameParamName(tc.name, tc.cred); got != tc.same {
			t.Errorf("SameParamName(%q, %q) = %v, want %v", tc.name, tc.cred, got, tc.same)
		}
	}
	if !SameHeaderName("X_Api_Key", "x-api-key") || SameHeaderName("X-Api-Key-Id", "X-Api-Key") {
		t.Error("SameHeaderName: want X_Api_Key like x-api-key, X-Api-Key-Id not like X-Api-Key")
	}
	for in, want := range map[string]string{"a%5Fb": "a_b", "a+b": "a b", "a%zz%5F": "a%zz_", "%": "%", "%5": "%5", "a%2": "a%2"} {
		if got := unescapeName(in); got != want {
			t.Errorf("unescapeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBuildRefusesCredentialHeader: a header parameter that lenient
// servers read as a configured credential header is left out of the tool
// when it is built; a plan that still has one (restored from an older
// build) is refused at Build rather than sending both.
func TestBuildRefusesCredentialHeader(t *testing.T) {
	spec, err := NewParamSpec(&openapi3.Parameter{Name: "X_Api_Key", In: "header"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := Plan{Label: "GET /x", Method: "GET", Base: "https://api.test", Params: []Param{{Arg: "X_Api_Key", Spec: spec}}}
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	creds, err := Credentials{Headers: map[string]string{"x-api-key": "HSECRET"}}.Prepare()
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Build(t.Context(), map[string]any{"X_Api_Key": "EVIL"}, creds, "t")
	var ae *ArgumentError
	if !errors.As(err, &ae) || ae.Field != "X_Api_Key" {
		t.Fatalf("Build = %v; want an argument error for X_Api_Key", err)
	}
	if _, err := p.Build(t.Context(), map[string]any{"X_Api_Key": "fine"}, nil, "t"); err != nil {
		t.Errorf("without the credential: %v", err)
	}
}
