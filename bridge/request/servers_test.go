package request_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcpbridge/mcpbridge/bridge/request"
)

func TestServerURL(t *testing.T) {
	httpLoc, _ := url.Parse("https://api.example.com/specs/openapi.json")
	fileLoc, _ := url.Parse("file:///etc/openapi.yaml")
	vars := openapi3.Servers{{
		URL: "https://{region}.example.com/{base}",
		Variables: map[string]*openapi3.ServerVariable{
			"region": {Default: "eu", Enum: []string{"eu", "us"}},
			"base":   {Default: "v2"},
		},
	}}
	tests := []struct {
		name    string
		servers openapi3.Servers
		vars    map[string]string
		loc     *url.URL
		want    string
		wantErr string
	}{
		{"none", nil, nil, nil, "", ""},
		{"absolute", openapi3.Servers{{URL: "https://api.example.com/v1"}}, nil, nil, "https://api.example.com/v1", ""},
		{"variable defaults", vars, nil, nil, "https://eu.example.com/v2", ""},
		{"variable override", vars, map[string]string{"region": "us"}, nil, "https://us.example.com/v2", ""},
		{"variable outside enum", vars, map[string]string{"region": "mars"}, nil, "", "not one of"},
		{"relative to an http spec", openapi3.Servers{{URL: "/api/v3"}}, nil, httpLoc, "https://api.example.com/api/v3", ""},
		{"relative to a file spec", openapi3.Servers{{URL: "/api/v3"}}, nil, fileLoc, "", "relative"},
		{"credentials in the URL", openapi3.Servers{{URL: "https://user:pw@api.example.com"}}, nil, nil, "", "must not carry credentials"},
		{"not http", openapi3.Servers{{URL: "ftp://example.com"}}, nil, nil, "", "scheme must be http or https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := request.ServerURL(tt.servers, tt.vars, tt.loc)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ServerURL() = %q, %v; want error containing %q", got, err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "pw@") {
					t.Errorf("error leaks the URL's password: %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ServerURL() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// A token given as the URL's user name (https://TOKEN@host, as GitHub's
// and many Git hosts' URLs carry one) is a secret too: url.URL.Redacted
// masks only a password, so the error must not print the user name.
func TestParseBaseURLHidesUserName(t *testing.T) {
	for _, raw := range []string{
		"https://ghp_SECRETTOKEN1@api.example.com/v1",
		"https://ghp_SECRETTOKEN1:x-oauth-basic@api.example.com/v1",
		"https://ghp_SECRETTOKEN1@/v1",
		"ftp://ghp_SECRETTOKEN1@api.example.com/v1",
		"https://ghp_SECRETTOKEN1@api example.com/v1",
	} {
		_, err := request.ParseBaseURL(raw)
		if err == nil {
			t.Fatalf("%s: no error", raw)
		}
		if strings.Contains(err.Error(), "SECRETTOKEN1") {
			t.Errorf("%s: error prints the credential: %v", raw, err)
		}
	}
}
