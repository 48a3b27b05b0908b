package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestOTLPPlainHTTPWarned: an OTLP endpoint on plain http to a host that
// is not this machine, given credentials (OTEL_EXPORTER_OTLP_HEADERS, a
// key in its query, a password in its userinfo), is warned about at start
// like the upstream's and the token endpoint's; a plain-http collector on
// this machine, or one given no credential (an in-cluster sidecar), is not.
func TestOTLPPlainHTTPWarned(t *testing.T) {
	const warning = "tracing: the OTLP credentials will travel unencrypted: the endpoint is plain http on a non-loopback host; use https"
	for _, tc := range []struct {
		name, endpoint, headers string
		warned                  bool
	}{
		{"headers", "http://collector.example.com:4318", "x-honeycomb-team=hc-key-3f9a", true},
		{"query key", "http://collector.example.com:4318?api_key=qk-77a1", "", true},
		{"userinfo", "http://tenant:pw-5e1@collector.example.com:4318", "", true},
		{"no credential", "http://otel-collector:4318", "", false},
		{"loopback", "http://127.0.0.1:4318", "x-honeycomb-team=hc-key-3f9a", false},
		{"https", "https://collector.example.com", "x-honeycomb-team=hc-key-3f9a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range []string{"ENDPOINT", "HEADERS", "TIMEOUT", "COMPRESSION", "CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY", "PROTOCOL"} {
				t.Setenv("OTEL_EXPORTER_OTLP_"+s, "")
				t.Setenv("OTEL_EXPORTER_OTLP_TRACES_"+s, "")
			}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tc.endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", tc.headers)
			t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "100")
			var out, errb bytes.Buffer
			err := run(t.Context(), []string{"serve", "--otel", "--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml",
				"--no-cache"}, strings.NewReader(""), &out, &errb)
			if err != nil {
				t.Fatalf("serve: %v\n%s", err, errb.String())
			}
			log := errb.String()
			if got := strings.Contains(log, warning); got != tc.warned {
				t.Errorf("warned %v, want %v:\n%s", got, tc.warned, log)
			}
			for _, secret := range []string{"hc-key-3f9a", "qk-77a1", "pw-5e1"} {
				if strings.Contains(log, secret) {
					t.Errorf("the log quotes %q:\n%s", secret, log)
				}
			}
		})
	}
}
