package transport_test

import (
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap/zapcore"

	"github.com/mcpbridge/mcpbridge/transport"
)

// TestOptionsValidation checks that NewHTTPHandler reports every problem
// of its options at once.
func TestOptionsValidation(t *testing.T) {
	s := newMCPServer(newGate())
	tests := []struct {
		name string
		opts transport.HTTPOptions
		want []string // fragments, each on its own line of the error
	}{
		{"bad listen", transport.HTTPOptions{Listen: "8080"}, []string{`Listen (--listen) "8080"`}},
		{"negative values", transport.HTTPOptions{
			MaxBodyBytes: -1, SessionTimeout: -1, ShutdownTimeout: -1, ReadHeaderTimeout: -1, ReadTimeout: -1, IdleTimeout: -1,
			MaxJSONDepth: -1, MaxSessions: -1, MaxSessionsPerIdentity: -1, MaxSSEStreams: -1, MaxSSEStreamsPerIdentity: -1,
		}, []string{
			"SessionTimeout (--session-timeout) is negative", "ShutdownTimeout (--shutdown-timeout) is negative", "ReadHeaderTimeout is negative",
			"ReadTimeout (--read-timeout) is negative", "IdleTimeout (--idle-timeout) is negative", "MaxBodyBytes (--max-body-bytes) is negative",
			"MaxJSONDepth (--max-json-depth) is negative", "MaxSessions (--max-sessions) is negative", "MaxSessionsPerIdentity (--max-sessions-per-identity) is negative",
			"MaxSSEStreams (--max-sse-streams) is negative", "MaxSSEStreamsPerIdentity (--max-sse-streams-per-identity) is negative",
		}},
		{"unauthenticated on all interfaces", transport.HTTPOptions{Listen: ":8080"}, []string{
			`non-loopback address ":8080"`,
		}},
		{"unauthenticated on a public address", transport.HTTPOptions{Listen: "192.0.2.10:8080"}, []string{
			`non-loopback address "192.0.2.10:8080"`,
		}},
		{"bad keys", transport.HTTPOptions{APIKeys: []string{"ok-key", "", " padded"}}, []string{
			"APIKeys[1] is empty", "APIKeys[2] has leading or trailing white space",
		}},
		{"bad origins", transport.HTTPOptions{AllowedOrigins: []string{"example.com", "https://a.example/path", "*"}}, []string{
			`origin "example.com"`, `origin "https://a.example/path"`, `origin "*"`,
		}},
		{"bad hosts", transport.HTTPOptions{AllowedHosts: []string{"mcp.example.com", "https://mcp.example.com", "a.example/path", "", "a b"}}, []string{
			`host "https://mcp.example.com"`, `host "a.example/path"`, `host ""`, `host "a b"`,
		}},
		{"NoAuth with keys", transport.HTTPOptions{NoAuth: true, APIKeys: []string{"k"}}, []string{"NoAuth conflicts with APIKeys/JWKSURL"}},
		{"JWKS without issuer or audience", transport.HTTPOptions{JWKSURL: "https://auth.example.com/jwks"}, []string{
			"JWKSURL (--jwks-url) needs JWTIssuer (--jwt-issuer)", "needs JWTAudience (--jwt-audience) or ResourceURL (--resource-url)",
		}},
		{"plain http JWKS off loopback", transport.HTTPOptions{JWKSURL: "http://auth.example.com/jwks", JWTIssuer: "i", JWTAudience: "a"}, []string{
			"must use https",
		}},
		{"JWT settings without JWKS", transport.HTTPOptions{JWTIssuer: "https://issuer"}, []string{"JWKSURL (--jwks-url) is empty"}},
		{"bad URLs", transport.HTTPOptions{ResourceURL: "/mcp", AuthorizationServers: []string{"ftp://as.example"}}, []string{
			"ResourceURL", "AuthorizationServers[0]",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := transport.NewHTTPHandler(s, tt.opts, nil)
			if err == nil {
				t.Fatalf("NewHTTPHandler(%+v) = nil error; want %q", tt.opts, tt.want)
			}
			lines := strings.Split(err.Error(), "\n")
			if got, want := len(lines)-1, len(tt.want); got != want { // first line is the summary
				t.Errorf("error has %d problems; want %d:\n%v", got, want, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}

	if _, err := transport.NewHTTPHandler(nil, transport.HTTPOptions{}, nil); err == nil {
		t.Error("NewHTTPHandler(nil server) = nil error; want one")
	}
}

// TestUnauthenticatedOffLoopback checks that serving without credentials
// beyond loopback needs NoAuth, that the refusal names the flags that fix
// it, and that a bound Listener is judged by its address.
func TestUnauthenticatedOffLoopback(t *testing.T) {
	s := newMCPServer(newGate())
	_, err := transport.NewHTTPHandler(s, transport.HTTPOptions{Listen: "0.0.0.0:8080"}, nil)
	if err == nil {
		t.Fatal("NewHTTPHandler(0.0.0.0:8080, no auth) = nil error; want a refusal")
	}
	for _, flag := range []string{"--no-auth", "--api-key", "--api-key-file", "--jwks-url"} {
		if !strings.Contains(err.Error(), flag) {
			t.Errorf("refusal does not name %s:\n%v", flag, err)
		}
	}
	for name, opts := range map[string]transport.HTTPOptions{
		"NoAuth":   {Listen: "0.0.0.0:8080", NoAuth: true},
		"API keys": {Listen: "0.0.0.0:8080", APIKeys: []string{keyA}},
		"loopback": {Listen: "[::1]:8080"},
	} {
		if _, err := transport.NewHTTPHandler(s, opts, nil); err != nil {
			t.Errorf("NewHTTPHandler with %s = %v; want nil", name, err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Listen is ignored for a Listener: its address is what is served.
	if _, err := transport.NewHTTPHandler(s, transport.HTTPOptions{Listen: "0.0.0.0:1", Listener: ln}, nil); err != nil {
		t.Errorf("NewHTTPHandler with a loopback Listener = %v; want nil", err)
	}
}

// TestAuthOffLogging checks what is logged when no credential is
// configured: info on loopback or with NoAuth (anything else is refused, see
// TestOptionsValidation).
func TestAuthOffLogging(t *testing.T) {
	tests := []struct {
		name string
		opts transport.HTTPOptions
		want []string // "LEVEL message"
	}{
		{"default loopback", transport.HTTPOptions{},
			[]string{"info inbound auth off: loopback listener and no API keys or JWKS configured"}},
		{"localhost", transport.HTTPOptions{Listen: "localhost:9000"},
			[]string{"info inbound auth off: loopback listener and no API keys or JWKS configured"}},
		{"NoAuth", transport.HTTPOptions{Listen: "0.0.0.0:8080", NoAuth: true},
			[]string{"info inbound auth disabled (NoAuth)"}},
		{"keys configured", transport.HTTPOptions{Listen: "0.0.0.0:8080", APIKeys: []string{"k"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, logs, _ := watchLog()
			if _, err := transport.NewHTTPHandler(newMCPServer(newGate()), tt.opts, log); err != nil {
				t.Fatalf("NewHTTPHandler: %v", err)
			}
			var got []string
			for _, e := range logs.FilterLevelExact(zapcore.InfoLevel).All() {
				got = append(got, "info "+e.Message)
			}
			for _, e := range logs.FilterLevelExact(zapcore.WarnLevel).All() {
				got = append(got, "warn "+e.Message)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("logged (-want +got):\n%s", diff)
			}
		})
	}
}
