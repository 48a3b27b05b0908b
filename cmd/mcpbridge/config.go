package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/bridge/quota"
	"github.com/mcpbridge/mcpbridge/bridge/request"
	"github.com/mcpbridge/mcpbridge/sanitizer"
	"github.com/mcpbridge/mcpbridge/specloader"
)

// Config is the whole configuration. Every field has a flag (--key), an
// environment variable (MCPBRIDGE_KEY, dashes become underscores) and a key
// in the YAML config file; precedence is flag > environment > file >
// default.
type Config struct {
	Config string `mapstructure:"config"` // path of the YAML config file

	// httpOnly names the HTTP-only settings given (by flag, environment
	// or file), which stdio ignores.
	httpOnly []string

	// Spec and whitelist.
	Spec             string            `mapstructure:"spec"`
	SpecHeaders      []string          `mapstructure:"spec-headers"` // "Name: value" sent when fetching a URL spec
	SpecTimeout      time.Duration     `mapstructure:"spec-timeout"`
	SpecMaxBytes     int64             `mapstructure:"spec-max-bytes"`
	SpecRefresh      time.Duration     `mapstructure:"spec-refresh"`
	SpecAllowOrigins []string          `mapstructure:"spec-allow-origins"`
	Strict           bool              `mapstructure:"strict"`
	Whitelist        string            `mapstructure:"whitelist"`
	AllOperations    bool              `mapstructure:"all-operations"`
	ServerVars       map[string]string `mapstructure:"server-variables"`

	// Upstream.
	Upstream           string        `mapstructure:"upstream"`
	UpstreamToken      string        `mapstructure:"upstream-token"`
	UpstreamHeaders    []string      `mapstructure:"upstream-headers"` // "Name: value"
	UpstreamAuth       UpstreamAuth  `mapstructure:"upstream-auth"`
	Timeout            time.Duration `mapstructure:"timeout"`
	Args               string        `mapstructure:"args"`
	Retries            int           `mapstructure:"retries"`
	MaxResponseBytes   int64         `mapstructure:"max-response-bytes"`
	MaxOutputSchema    int           `mapstructure:"max-output-schema-bytes"`
	MaxArgumentBytes   int64         `mapstructure:"max-argument-bytes"`
	MaxURLBytes        int           `mapstructure:"max-url-bytes"`
	Truncate           bool          `mapstructure:"truncate"`
	MaxConcurrency     int           `mapstructure:"max-concurrency"`
	MaxQueue           int           `mapstructure:"max-queue"`
	Tools              string        `mapstructure:"tools"`
	MaxDescription     int           `mapstructure:"max-description-length"`
	SchemaDetail       string        `mapstructure:"schema-detail"`
	NestedStyle        string        `mapstructure:"nested-style"`
	OutputSchema       string        `mapstructure:"output-schema"`
	ResultText         string        `mapstructure:"result-text"`
	StructuredClients  []string      `mapstructure:"structured-clients"`
	ContentClients     []string      `mapstructure:"content-clients"`
	MetricsListen      string        `mapstructure:"metrics-listen"`
	LogArguments       bool          `mapstructure:"log-arguments"`
	REST               bool          `mapstructure:"rest"`
	OTel               bool          `mapstructure:"otel"`
	Quota              string        `mapstructure:"quota"`
	QuotaIdentities    []QuotaEntry  `mapstructure:"quota-identities"`
	QuotaFail          string        `mapstructure:"quota-fail"`
	RedisURL           string        `mapstructure:"redis-url"`
	RedisPrefix        string        `mapstructure:"redis-prefix"`
	UpstreamCAFile     string        `mapstructure:"upstream-ca-file"`
	UpstreamClientCert string        `mapstructure:"upstream-client-cert"`
	UpstreamClientKey  string        `mapstructure:"upstream-client-key"`
	MaxMessageBytes    int           `mapstructure:"max-message-bytes"`
	MaxJSONDepth       int           `mapstructure:"max-json-depth"`
	ReadTimeout        time.Duration `mapstructure:"read-timeout"`
	IdleTimeout        time.Duration `mapstructure:"idle-timeout"`
	MaxSessions        int           `mapstructure:"max-sessions"`
	MaxSessionsPerID   int           `mapstructure:"max-sessions-per-identity"`
	MaxSSEStreams      int           `mapstructure:"max-sse-streams"`
	MaxSSEStreamsPerID int           `mapstructure:"max-sse-streams-per-identity"`

	// Sanitizer.
	RedactKeys     []string `mapstructure:"redact-keys"`
	RedactPatterns []string `mapstructure:"redact-patterns"`
	RedactPrefixes []string `mapstructure:"redact-prefixes"`

	// Transport.
	Transport            string        `mapstructure:"transport"`
	Listen               string        `mapstructure:"listen"`
	Stateful             bool          `mapstructure:"stateful"`
	SessionTimeout       time.Duration `mapstructure:"session-timeout"`
	APIKeys              []string      `mapstructure:"api-keys"`
	APIKeyFile           string        `mapstructure:"api-key-file"`
	AllowAPIKeyHeader    bool          `mapstructure:"allow-x-api-key"`
	AllowedOrigins       []string      `mapstructure:"allowed-origins"`
	AllowedHosts         []string      `mapstructure:"allowed-hosts"`
	TrustedProxies       []string      `mapstructure:"trusted-proxies"`
	JWKSURL              string        `mapstructure:"jwks-url"`
	JWTIssuer            string        `mapstructure:"jwt-issuer"`
	JWTAudience          string        `mapstructure:"jwt-audience"`
	ResourceURL          string        `mapstructure:"resource-url"`
	AuthorizationServers []string      `mapstructure:"authorization-servers"`
	NoAuth               bool          `mapstructure:"no-auth"`
	MaxBodyBytes         int64         `mapstructure:"max-body-bytes"`
	KeepAlive            time.Duration `mapstructure:"keepalive"`
	ShutdownTimeout      time.Duration `mapstructure:"shutdown-timeout"`
	ShutdownDelay        time.Duration `mapstructure:"shutdown-delay"`

	// Output and logging.
	JSON      bool   `mapstructure:"json"`
	Stats     bool   `mapstructure:"stats"`
	LogLevel  string `mapstructure:"log-level"`
	LogFormat string `mapstructure:"log-format"`
	NoCache   bool   `mapstructure:"no-cache"`
	CacheDir  string `mapstructure:"cache-dir"`
	// StartupHugePages: serve asks for transparent huge pages while it
	// starts (hugepages_linux.go).
	StartupHugePages bool `mapstructure:"startup-huge-pages"`

	// Previews and reports.
	Verbose     bool     `mapstructure:"verbose"`      // tools --json: each tool with its operation
	Tags        []string `mapstructure:"tags"`         // tools: only operations with one of these tags
	Paths       []string `mapstructure:"paths"`        // tools: only operations under one of these path prefixes
	MaxProblems int      `mapstructure:"max-problems"` // validate: problems shown per kind

	// learned is not configuration: the OAuth2 access tokens obtained
	// while running, which every redactor masks (see tokenSecrets).
	learned *sanitizer.Secrets
}

// UpstreamAuth holds richer upstream credentials (config file or env).
type UpstreamAuth struct {
	BasicUser     string            `mapstructure:"basic-user"`
	BasicPassword string            `mapstructure:"basic-password"`
	Query         map[string]string `mapstructure:"query"`   // API keys in the query string
	Headers       map[string]string `mapstructure:"headers"` // API keys in headers
	Cookies       map[string]string `mapstructure:"cookies"` // API keys in cookies
	OAuth2        OAuth2            `mapstructure:"oauth2"`  // client credentials grant
	// Schemes are the secrets of the spec's security schemes, by scheme
	// name (components.securitySchemes, Swagger 2.0 securityDefinitions):
	// each operation's requests carry those its security requirements
	// ask for (bridge.Options.Schemes). Config file only, read from the
	// file as written (fileSchemes): scheme names are case-sensitive and
	// may hold dots, which viper reads as nesting, and what no variable
	// name can hold.
	Schemes map[string]SchemeAuth `mapstructure:"-"`
	// RawSchemes is viper's reading of the file's upstream-auth.schemes,
	// ignored (see Schemes).
	RawSchemes any `mapstructure:"schemes"`
}

// SchemeAuth is the secret of one security scheme of the spec; the
// scheme's definition says how it is sent. A config file may give a
// scalar for value ("ApiKeyAuth: abc").
type SchemeAuth struct {
	Value    string `mapstructure:"value"`    // apiKey value; http bearer, oauth2 or openIdConnect token
	User     string `mapstructure:"user"`     // http basic
	Password string `mapstructure:"password"` // http basic
	OAuth2   OAuth2 `mapstructure:"oauth2"`   // oauth2/openIdConnect: client credentials grant instead of a value
}

// OAuth2 is the upstream's OAuth 2.0 client credentials grant: the bridge
// fetches a token from TokenURL, caches it until it expires, and sends it
// as "Authorization: Bearer".
type OAuth2 struct {
	TokenURL     string   `mapstructure:"tokenURL"`
	ClientID     string   `mapstructure:"clientID"`
	ClientSecret string   `mapstructure:"clientSecret"`
	Scopes       []string `mapstructure:"scopes"`
	// Audience and Resource go to the token endpoint as the audience
	// (Auth0, Okta's custom servers) and resource (RFC 8707; Entra ID's
	// v1 endpoint) parameters: without the one it wants, such an endpoint
	// refuses the grant or issues a token the API refuses.
	Audience string `mapstructure:"audience"`
	Resource string `mapstructure:"resource"`
}

// checkResource refuses a resource that RFC 8707 does not allow: it must
// be an absolute URI without a fragment.
func (o OAuth2) checkResource() error {
	if o.Resource == "" {
		return nil
	}
	if u, err := url.Parse(o.Resource); err != nil || !u.IsAbs() || u.Fragment != "" || strings.Contains(o.Resource, "#") {
		return fmt.Errorf("%q must be an absolute URI without a fragment (RFC 8707)", o.Resource)
	}
	return nil
}

// on reports whether the grant is configured.
func (o OAuth2) on() bool { return o.TokenURL != "" }

// QuotaEntry is a per-identity quota of the config file (a list, because
// identities such as "jwt:https://idp.example|sub" hold dots, which viper
// reads as nesting in map keys).
type QuotaEntry struct {
	Identity string `mapstructure:"identity"` // an identity ID ("api-key:0", "jwt:ISS|SUB"), a JWT subject, or a client IP (IPv6: its /64)
	Limit    string `mapstructure:"limit"`    // "1000/1h", or "unlimited"
}

// flagSet declares every flag with its default and help text.
func flagSet(cmd string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(cmd, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.String("config", "", "YAML config file (keys are the flag names)")
	fs.String("spec", "", "OpenAPI document: file path or http(s) URL (Swagger 2.0, OpenAPI 3.0, 3.1)")
	fs.StringArray("spec-header", nil, `header sent when fetching a URL spec, "Name: value" (repeatable)`)
	fs.Duration("spec-timeout", 30*time.Second, "time limit for fetching the spec")
	fs.StringArray("spec-allow-origin", nil, "origin (scheme://host[:port]) besides the spec's own whose $refs may be fetched and to which its URL may redirect, or file:///DIR whose files a local spec's $refs may read besides its own directory's (repeatable; env MCPBRIDGE_SPEC_ALLOW_ORIGINS, comma-separated)")
	fs.Duration("spec-refresh", 0, "re-read the spec and whitelist this often and swap in the new tools when they changed (0: only on SIGHUP)")
	fs.Int64("spec-max-bytes", 64<<20, "size limit for the spec")
	fs.Bool("strict", false, "treat spec validation warnings and skipped operations as fatal")
	fs.String("whitelist", "", "whitelist.yaml selecting the operations to expose")
	fs.Bool("all-operations", false, "expose every operation (no whitelist)")
	fs.StringToString("server-variables", nil, "values for the spec's server {variables}, name=value")
	fs.String("upstream", "", "upstream base URL (default: the spec's first server)")
	fs.String("upstream-token", "", "sent upstream as Authorization: Bearer TOKEN")
	fs.StringArray("upstream-header", nil, `static header sent upstream, "Name: value" (repeatable)`)
	fs.String("upstream-ca-file", "", "PEM bundle of CAs trusted for the upstream (in addition to the system roots)")
	fs.String("upstream-client-cert", "", "PEM client certificate presented to the upstream (mTLS; with --upstream-client-key)")
	fs.String("upstream-client-key", "", "PEM private key of --upstream-client-cert")
	fs.Duration("timeout", 30*time.Second, "time limit for one tool call, retries included")
	fs.Int("retries", 2, "retries for idempotent calls on connection errors, 429, 502, 503, 504 (0 disables)")
	// 4 MiB: a result carries the answer twice (text and structuredContent),
	// and the official TypeScript SDK's stdio client closes the connection
	// on a message over 10 MiB.
	fs.Int64("max-response-bytes", 4<<20, "size limit for an upstream response body")
	fs.Bool("truncate", true, "an answer over --max-response-bytes becomes a truncated result (JSON arrays keep the items that fit) instead of an error")
	fs.Int64("max-argument-bytes", 8<<20, "largest tool-call arguments accepted (JSON bytes)")
	fs.Int("max-url-bytes", 8<<10, "longest URL path and query, and header line, a call's arguments may make; servers commonly answer 414/431 past 8 KiB (-1: no limit)")
	fs.Int("max-concurrency", 64, "upstream calls in flight at once; more wait in a queue (-1: no limit)")
	fs.Int("max-queue", 256, "calls waiting for a free slot; beyond, a call is refused as busy (0: no queue)")
	fs.Int("max-description-length", 0, "trim tool descriptions to this many bytes at a word boundary (0: no limit)")
	fs.String("output-schema", "tolerant", "tolerant (drift-proof output schemas), strict (as the spec says, repaired) or off (none)")
	fs.String("result-text", "known", "when a result with structuredContent also carries the JSON as text: known (always, but for the --structured-client hosts, which read structuredContent only, and the --content-client hosts, which get the text alone), always (every client gets both) or auto (only clients before protocol 2025-06-18 and the --content-client hosts)")
	fs.StringArray("structured-client", slices.Clone(mcpx.DefaultStructuredClients), "with --result-text known: a client (its clientInfo.name) that hands its model structuredContent and drops the text, so gets no duplicate text block (repeatable; env MCPBRIDGE_STRUCTURED_CLIENTS, comma-separated; '' for none)")
	fs.StringArray("content-client", slices.Clone(mcpx.DefaultContentClients), "with --result-text known or auto: a client (its clientInfo.name) that shows its model a result's content whenever it has any, so is listed the tools without output schemas and gets every answer as text alone (repeatable; env MCPBRIDGE_CONTENT_CLIENTS, comma-separated; '' for none)")
	fs.String("nested-style", "brackets", "how nested query and form values are written: brackets (a[b][0]=x), brackets-empty (a[]=x), dots (a.b.1=x) or json")
	fs.String("schema-detail", "full", "full, or compact: drop descriptions and examples below the first level of input schemas")
	fs.String("tools", "all", "tool mode: all (one tool per operation), dynamic (search/describe/call meta-tools), hybrid (pinned operations and the meta-tools)")
	fs.String("metrics-listen", "", "serve Prometheus metrics at /metrics on this address instead of on --listen (they name every tool called)")
	fs.Bool("log-arguments", false, "include call arguments (redacted) in the usage record of each call")
	fs.Bool("rest", false, "HTTP: also serve the REST facade under /api/tools")
	fs.Bool("otel", false, "export OpenTelemetry traces over OTLP/HTTP, configured by the standard OTEL_* variables (default: on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set)")
	fs.String("quota", "", `tool calls allowed per caller and period, e.g. "100/1m" (per-identity quotas: quota-identities in the config file)`)
	fs.String("quota-fail", "closed", "when the quota store (Redis) is unreachable: closed refuses calls, open lets them through uncounted")
	fs.String("redis-url", "", "keep quota counters in this Redis (redis://[:password@]host:6379/0), shared by every replica")
	fs.String("redis-prefix", quota.DefaultRedisPrefix, "prefix of the quota keys in Redis: one per deployment sharing a Redis (its replicas give the same)")
	fs.Int("max-message-bytes", 16<<20, "stdio: largest JSON-RPC message (line) accepted")
	fs.Int("max-json-depth", 64, "deepest nesting accepted in a JSON-RPC message (stdio and HTTP)")
	fs.Duration("read-timeout", 30*time.Second, "HTTP: time a request body has to arrive, and each 64 KiB of an answer to be taken")
	fs.Duration("idle-timeout", 2*time.Minute, "HTTP: idle keep-alive connections are closed after this")
	fs.Int("max-sessions", 1000, "HTTP stateful: sessions in total")
	fs.Int("max-sessions-per-identity", 64, "HTTP stateful: sessions per caller (API key, JWT subject, or client IP)")
	fs.Int("max-sse-streams", 1000, "HTTP: legacy SSE streams in total")
	fs.Int("max-sse-streams-per-identity", 64, "HTTP: legacy SSE streams per caller")
	fs.Int("max-output-schema-bytes", 4096, "leave out output schemas larger than this (-1: no limit, 0: none at all)")
	fs.StringArray("redact-key", nil, "extra field name whose value is redacted (repeatable)")
	fs.StringArray("redact-pattern", nil, "extra regular expression redacted inside strings (repeatable; env MCPBRIDGE_REDACT_PATTERNS takes one per line, commas are part of the pattern)")
	fs.StringArray("redact-prefix", nil, "extra secret prefix, e.g. ghp_ (repeatable)")
	fs.String("transport", "stdio", "stdio or http")
	fs.String("listen", "127.0.0.1:8080", "HTTP listen address")
	fs.Bool("stateful", false, "HTTP: sessions with Mcp-Session-Id and a GET stream (default stateless)")
	fs.Duration("session-timeout", 30*time.Minute, "HTTP stateful: idle session timeout")
	fs.StringArray("api-key", nil, "HTTP: accepted inbound API key (repeatable; env MCPBRIDGE_API_KEYS, comma-separated)")
	fs.String("api-key-file", "", "HTTP: file with one inbound API key per line")
	fs.Bool("allow-x-api-key", false, "HTTP: also accept the key in an X-API-Key header")
	fs.StringArray("allowed-origin", nil, "HTTP: allowed Origin (repeatable)")
	fs.StringArray("trusted-proxy", nil, "HTTP: address or CIDR of a reverse proxy whose X-Forwarded-For names the client (per-IP quotas and caps, logs); others' is ignored (repeatable)")
	fs.StringArray("allowed-host", nil, "HTTP: Host accepted on a loopback --listen besides loopback names, for a reverse proxy that passes the client's Host on (repeatable)")
	fs.String("jwks-url", "", "HTTP: verify bearer JWTs against this JWKS URL")
	fs.String("jwt-issuer", "", "HTTP: required JWT issuer")
	fs.String("jwt-audience", "", "HTTP: required JWT audience (default: --resource-url)")
	fs.String("resource-url", "", "HTTP: the bridge's public URL (RFC 9728 resource)")
	fs.StringArray("authorization-server", nil, "HTTP: authorization server listed in the protected resource metadata (repeatable)")
	fs.Bool("no-auth", false, "HTTP: disable inbound auth explicitly")
	fs.Int64("max-body-bytes", 4<<20, "HTTP: request body limit")
	fs.Duration("keepalive", 30*time.Second, "HTTP: SSE keepalive comment interval")
	fs.Duration("shutdown-timeout", 15*time.Second, "time in-flight calls get to finish and be answered on SIGTERM/SIGINT (HTTP and stdio)")
	fs.Duration("shutdown-delay", 0, "HTTP: on SIGTERM/SIGINT, keep serving this long with /ready answering 503 before closing the listener, so a load balancer drains the replica first")
	fs.String("args", "", "call: the tool's arguments as a JSON object")
	fs.Bool("json", false, "tools: print the tools/list array as JSON")
	fs.Bool("stats", false, "tools: print operation, tool, skip and payload statistics")
	fs.Bool("verbose", false, `tools --json: each tool with its operation, {"tool": {...}, "operation": {"method", "path", "operationId", "tags"}}`)
	fs.StringArray("tag", nil, "tools: only the operations tagged `TAG` (repeatable; a preview of a whitelist tag entry)")
	fs.StringArray("path", nil, "tools: only the operations whose path starts with `PREFIX`, e.g. /pet (repeatable)")
	fs.Int("max-problems", 10, "validate: problems listed per kind before \"... and K more\"")
	fs.String("log-level", "info", "debug, info, warn or error")
	fs.String("log-format", "console", "console or json (logs always go to stderr)")
	fs.Bool("no-cache", false, "do not use the persistent tool cache")
	fs.String("cache-dir", "", "tool cache directory (default: the user cache dir)")
	fs.Bool("startup-huge-pages", true, "Linux: start on transparent huge pages where they are enabled on request (madvise mode); fewer page faults, a faster start on virtual machines")
	return fs
}

// flagKeys maps flag names to config keys where they differ (repeatable
// flags have singular names and plural keys).
var flagKeys = map[string]string{
	"spec-header":          "spec-headers",
	"spec-allow-origin":    "spec-allow-origins",
	"upstream-header":      "upstream-headers",
	"redact-key":           "redact-keys",
	"redact-pattern":       "redact-patterns",
	"redact-prefix":        "redact-prefixes",
	"api-key":              "api-keys",
	"allowed-origin":       "allowed-origins",
	"allowed-host":         "allowed-hosts",
	"trusted-proxy":        "trusted-proxies",
	"authorization-server": "authorization-servers",
	"structured-client":    "structured-clients",
	"content-client":       "content-clients",
	"tag":                  "tags",
	"path":                 "paths",
}

// regexpLists are list keys whose items are regular expressions: their
// environment variables take one item per line, never split on commas.
var regexpLists = map[string]bool{"redact-patterns": true}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// loadConfig builds the configuration from parsed flags, MCPBRIDGE_*
// variables and the optional config file, rejecting unknown file keys.
func loadConfig(fs *pflag.FlagSet, environ []string) (*Config, error) {
	v := viper.New()
	var bindErr error
	fs.VisitAll(func(f *pflag.Flag) {
		key := f.Name
		if k, ok := flagKeys[key]; ok {
			key = k
		}
		if err := v.BindPFlag(key, f); err != nil {
			bindErr = errors.Join(bindErr, err)
		}
		env := "MCPBRIDGE_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
		if val, ok := lookupEnv(environ, env); ok && !fs.Changed(f.Name) {
			typ := f.Value.Type()
			if strings.TrimSpace(val) == "" && (typ == "int" || typ == "int64" || typ == "bool") {
				// Weakly typed decoding would read "" as 0 or false.
				bindErr = errors.Join(bindErr, fmt.Errorf("%s is empty: set a value (default %s) or unset it", env, f.DefValue))
				return
			}
			if typ == "int" || typ == "int64" || typ == "bool" || typ == "duration" {
				// " 100" or "30s\n" (a secret or an env file's line) is
				// the number, switch or duration it shows.
				val = strings.TrimSpace(val)
			}
			if regexpLists[key] {
				// Regular expressions hold commas ({3,5}): one per line.
				v.Set(key, splitLines(val))
			} else {
				v.Set(key, val) // environment beats the file; a set flag beats both
			}
		}
	})
	if bindErr != nil {
		return nil, bindErr
	}
	// Nested upstream-auth keys from the environment.
	for _, k := range upstreamAuthEnv {
		env := "MCPBRIDGE_UPSTREAM_AUTH_" + strings.ToUpper(strings.ReplaceAll(k, "-", "_"))
		if val, ok := lookupEnv(environ, env); ok {
			v.Set("upstream-auth."+k, val)
		}
	}
	var caseKept map[string]map[string]string
	var schemes map[string]SchemeAuth
	if path := v.GetString("config"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("reading config file %s: %w", path, err)
		}
		v.SetConfigType("yaml")
		if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("reading config file %s: %w", path, err)
		}
		if caseKept, err = fileCaseMaps(data); err != nil {
			return nil, fmt.Errorf("reading config file %s: %w", path, err)
		}
		if schemes, err = fileSchemes(data); err != nil {
			return nil, fmt.Errorf("config file %s: %w", path, err)
		}
		if v.InConfig("config") {
			// It would be ignored: one file is read, the one named by
			// --config or MCPBRIDGE_CONFIG.
			return nil, fmt.Errorf("config file %s: config: a config file cannot name another (give it to --config)", path)
		}
	}
	var cfg Config
	hook := viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(),
		numberToDurationHook,
		strictKindHook,
		stringToListHook,
		stringToMapHook,
	))
	if err := v.UnmarshalExact(&cfg, hook); err != nil {
		return nil, decodeError(err, v, fs, environ)
	}
	// Viper lowercased the keys of the file's maps; put back the names as
	// written where the file is their source (configcase.go).
	if m, ok := caseKept["server-variables"]; ok && !fs.Changed("server-variables") {
		if _, fromEnv := lookupEnv(environ, "MCPBRIDGE_SERVER_VARIABLES"); !fromEnv {
			cfg.ServerVars = m
		}
	}
	for name, dst := range map[string]*map[string]string{"upstream-auth.query": &cfg.UpstreamAuth.Query, "upstream-auth.headers": &cfg.UpstreamAuth.Headers, "upstream-auth.cookies": &cfg.UpstreamAuth.Cookies} {
		if m, ok := caseKept[name]; ok {
			*dst = m
		}
	}
	if schemes != nil {
		cfg.UpstreamAuth.Schemes = schemes
	}
	cfg.UpstreamAuth.RawSchemes = nil
	// A token read from a file or a secret often ends in a line break,
	// which no bearer token holds and which made every call fail as a
	// transport error.
	cfg.UpstreamToken = strings.TrimSpace(cfg.UpstreamToken)
	resolveConfigPaths(&cfg, v, fs, environ) // configpaths.go
	fs.VisitAll(func(f *pflag.Flag) {
		key := f.Name
		if k, ok := flagKeys[key]; ok {
			key = k
		}
		if strings.HasPrefix(f.Usage, "HTTP:") && v.IsSet(key) {
			cfg.httpOnly = append(cfg.httpOnly, "--"+f.Name)
		}
	})
	if !v.IsSet("otel") {
		cfg.OTel = otelFromEnv(environ)
	}
	return &cfg, nil
}

// decodeLine is one problem of mapstructure's report: "'key' message".
var decodeLine = regexp.MustCompile(`^'([^']+)' (.*)$`)

// decodeError rewrites mapstructure's report of values it could not decode
// so that each problem names where the value came from, the environment
// variable or the config file, and what the key wants; and each unknown
// key of the file the nearest key there is. A value from the environment
// used to be blamed on the config file when there was one.
func decodeError(err error, v *viper.Viper, fs *pflag.FlagSet, environ []string) error {
	path := v.GetString("config")
	file := "configuration"
	if path != "" {
		file = "config file " + path
	}
	// mapstructure says "'' has invalid keys: a, b" for unknown keys;
	// since v2.5 it names the root "'main.Config'" and nested keys
	// "'main.Config.upstream-auth'".
	msg := err.Error()
	for _, root := range []string{"''", "'main.Config'"} {
		msg = strings.ReplaceAll(msg, root+" has invalid keys:", "unknown keys:")
	}
	msg = strings.ReplaceAll(msg, "'main.Config.", "'")
	msg = strings.ReplaceAll(msg, "decoding failed due to the following error(s):\n\n", "")
	var lines []string
	for _, line := range splitProblems(msg) {
		if keys, ok := strings.CutPrefix(line, "unknown keys: "); ok {
			lines = append(lines, file+": unknown keys: "+suggestKeys(keys, ""))
			continue
		}
		m := decodeLine.FindStringSubmatch(line)
		if m == nil {
			lines = append(lines, file+": "+line)
			continue
		}
		key, problem := m[1], m[2]
		if keys, ok := strings.CutPrefix(problem, "has invalid keys: "); ok {
			lines = append(lines, fmt.Sprintf("%s: unknown keys in %s: %s", file, key, suggestKeys(keys, key)))
			continue
		}
		switch {
		case strings.Contains(problem, "time: "):
			problem += " (write a duration such as 30s, 1m30s or 500ms)"
		case strings.Contains(problem, "as 'int"), strings.Contains(problem, "as 'uint"):
			problem += " (write a whole number)"
		case strings.Contains(problem, "as 'bool'"):
			problem += " (write true or false)"
		}
		base, _, _ := strings.Cut(key, "[") // quota-identities[0]
		flag := base
		for f, k := range flagKeys {
			if k == base {
				flag = f
			}
		}
		env := "MCPBRIDGE_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(base))
		bound := fs.Lookup(flag) != nil && !fs.Changed(flag) // a set flag beats the variable
		if auth, ok := strings.CutPrefix(base, "upstream-auth."); ok {
			bound = slices.Contains(upstreamAuthEnv, auth)
		}
		if _, fromEnv := lookupEnv(environ, env); fromEnv && bound {
			lines = append(lines, env+": "+problem)
			continue
		}
		lines = append(lines, fmt.Sprintf("%s: %s: %s", file, key, problem))
	}
	return errors.New(strings.Join(lines, "\n"))
}

// suggestKeys is a list of unknown keys of the config file ("a, b") with
// the nearest known key after each that has one; under is the mapping
// they are in ("" for the top level, "upstream-auth", "quota-identities[0]").
func suggestKeys(keys, under string) string {
	known := configKeys(under)
	var out []string
	for k := range strings.SplitSeq(keys, ", ") {
		if near := nearest(k, known); near != "" {
			k += " (did you mean " + near + "?)"
		}
		out = append(out, k)
	}
	return strings.Join(out, ", ")
}

// configKeys are the keys the config file's mapping under (dotted, list
// indexes allowed) may hold, read from Config's mapstructure tags.
func configKeys(under string) []string {
	t := reflect.TypeFor[Config]()
	if under != "" {
		for part := range strings.SplitSeq(under, ".") {
			part, _, _ = strings.Cut(part, "[")
			found := false
			for i := range t.NumField() {
				if f := t.Field(i); f.Tag.Get("mapstructure") == part {
					t, found = f.Type, true
					break
				}
			}
			for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer || t.Kind() == reflect.Map {
				t = t.Elem()
			}
			if !found || t.Kind() != reflect.Struct {
				return nil
			}
		}
	}
	var keys []string
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("mapstructure"); tag != "" && tag != "config" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// durationType is the type of every duration setting.
var durationType = reflect.TypeFor[time.Duration]()

// numberToDurationHook refuses a bare number for a duration (a config file's
// "timeout: 30"), which mapstructure would take as nanoseconds: the flag and
// the environment refuse "30" already. 0 is the same in every unit.
func numberToDurationHook(from, to reflect.Type, data any) (any, error) {
	if to != durationType || from == durationType {
		return data, nil
	}
	switch from.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if reflect.ValueOf(data).IsZero() {
			return data, nil
		}
		return nil, fmt.Errorf("%v is a number without a unit: write a duration such as %vs or %vm", data, data, data)
	}
	return data, nil
}

// upstreamAuthEnv are the nested upstream-auth keys with an environment
// form (MCPBRIDGE_UPSTREAM_AUTH_BASIC_USER, …).
var upstreamAuthEnv = []string{"basic-user", "basic-password"}

// unknownEnv returns the MCPBRIDGE_ variables of environ that name no
// setting (the singular of a repeatable flag's plural, a typo), each with
// the nearest variable that does ("" when none is near). Variables of the
// tests (MCPBRIDGE_TEST_…, MCPBRIDGE_FASTSCHEMA_DIR) are not settings and
// not reported.
func unknownEnv(fs *pflag.FlagSet, environ []string) (unknown [][2]string) {
	var known []string
	fs.VisitAll(func(f *pflag.Flag) {
		key := f.Name
		if k, ok := flagKeys[key]; ok {
			key = k
		}
		known = append(known, "MCPBRIDGE_"+strings.ToUpper(strings.ReplaceAll(key, "-", "_")))
	})
	for _, k := range upstreamAuthEnv {
		known = append(known, "MCPBRIDGE_UPSTREAM_AUTH_"+strings.ToUpper(strings.ReplaceAll(k, "-", "_")))
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "MCPBRIDGE_") || strings.HasPrefix(name, "MCPBRIDGE_TEST_") || name == "MCPBRIDGE_FASTSCHEMA_DIR" || slices.Contains(known, name) {
			continue
		}
		unknown = append(unknown, [2]string{name, nearest(name, known)})
	}
	return unknown
}

// strictKindHook refuses what weakly typed decoding would take without a
// word from a config file: a fraction for a whole number (1.7 as 1), a
// switch for a number (true as 1) and a number for a switch. Strings (the
// environment's) are parsed as before.
func strictKindHook(from, to reflect.Type, data any) (any, error) {
	isInt := func(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Uint64 }
	isFloat := func(k reflect.Kind) bool { return k == reflect.Float32 || k == reflect.Float64 }
	switch {
	case to == durationType && from.Kind() == reflect.Bool:
		// Weakly typed decoding took true as 1 ns.
		return nil, fmt.Errorf("%v is a switch, not a duration such as 30s", data)
	case to == durationType:
	case isInt(to.Kind()) && from.Kind() == reflect.Bool:
		return nil, fmt.Errorf("%v is a switch, not a number", data)
	case isInt(to.Kind()) && isFloat(from.Kind()):
		if f := reflect.ValueOf(data).Float(); f != math.Trunc(f) {
			return nil, fmt.Errorf("%v is not a whole number", data)
		}
	case to.Kind() == reflect.Bool && (isInt(from.Kind()) || isFloat(from.Kind())):
		return nil, fmt.Errorf("%v is a number, not true or false", data)
	}
	return data, nil
}

// stringToListHook decodes a comma-separated list (the environment's form,
// or a config file's scalar) into a list, each item trimmed and empty
// items dropped: "ssn, iban" is ssn and iban, as a reader of the variable
// takes it, not ssn and " iban", a key no answer holds.
func stringToListHook(from, to reflect.Type, data any) (any, error) {
	s, ok := data.(string)
	if !ok || from.Kind() != reflect.String || to.Kind() != reflect.Slice || to.Elem().Kind() != reflect.String {
		return data, nil
	}
	out := []string{}
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out, nil
}

// stringToMapHook decodes "a=1,b=2" (environment form) into a map.
func stringToMapHook(_, to reflect.Type, data any) (any, error) {
	s, ok := data.(string)
	if !ok || to.Kind() != reflect.Map {
		return data, nil
	}
	m := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		k, val, found := strings.Cut(pair, "=")
		if !found {
			return nil, fmt.Errorf("%q is not name=value", pair)
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(val)
	}
	return m, nil
}

// otelFromEnv is the standard OpenTelemetry switch, for when --otel is not
// given: an OTLP endpoint turns tracing on, unless OTEL_SDK_DISABLED=true or
// OTEL_TRACES_EXPORTER=none.
func otelFromEnv(environ []string) bool {
	if v, _ := lookupEnv(environ, "OTEL_SDK_DISABLED"); strings.EqualFold(v, "true") {
		return false
	}
	if v, _ := lookupEnv(environ, "OTEL_TRACES_EXPORTER"); v == "none" {
		return false
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		if v, _ := lookupEnv(environ, name); v != "" {
			return true
		}
	}
	return false
}

func lookupEnv(environ []string, name string) (string, bool) {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// Validate reports every problem at once and changes nothing.
func (c *Config) Validate(cmd string) error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	needsSpec := cmd == "serve" || cmd == "tools" || cmd == "call" || cmd == "validate" || cmd == "init"
	if needsSpec && c.Spec == "" {
		add("--spec is required (a file path or an http(s) URL)")
	}
	if needsSpec && cmd != "validate" && cmd != "init" && c.Whitelist == "" && !c.AllOperations {
		add("choose the operations to expose: --whitelist PATH or --all-operations")
	}
	if c.Whitelist != "" && c.AllOperations {
		add("--whitelist and --all-operations are mutually exclusive")
	}
	if c.Upstream != "" {
		if u, err := url.Parse(c.Upstream); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("--upstream %q must be an absolute http(s) URL", specloader.RedactURL(c.Upstream))
		}
	}
	for _, h := range append(append([]string(nil), c.UpstreamHeaders...), c.SpecHeaders...) {
		if name, _, ok := strings.Cut(h, ":"); !ok || strings.TrimSpace(name) == "" {
			add("header %q must look like \"Name: value\"", redactHeader(h))
		}
	}
	// A control character in a header value makes Go refuse every request
	// (after the retries, as a transport error): say which setting holds
	// it, never the value.
	if badHeaderValue(c.UpstreamToken) {
		add("--upstream-token holds a control character (a line break?)")
	}
	for _, h := range c.UpstreamHeaders {
		if name, val, ok := strings.Cut(h, ":"); ok && badHeaderValue(strings.TrimSpace(val)) {
			add("--upstream-header %q holds a control character (a line break?)", strings.TrimSpace(name)+": …")
		}
	}
	for name, val := range c.UpstreamAuth.Headers {
		if badHeaderValue(strings.TrimSpace(val)) {
			add("upstream-auth.headers %s holds a control character (a line break?)", name)
		}
	}
	if c.Timeout <= 0 {
		add("--timeout must be positive")
	}
	if c.Retries < 0 {
		add("--retries must not be negative")
	}
	if _, err := c.quotaPolicy(); err != nil {
		add("%v", err)
	}
	if _, err := c.upstreamTLS(); err != nil {
		add("%v", err)
	}
	if o := c.UpstreamAuth.OAuth2; o.on() || o.ClientID != "" || o.ClientSecret != "" {
		if u, err := url.Parse(o.TokenURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add("upstream-auth.oauth2.tokenURL %q must be an absolute http(s) URL", specloader.RedactURL(o.TokenURL))
		}
		if o.ClientID == "" || o.ClientSecret == "" {
			add("upstream-auth.oauth2 needs clientID and clientSecret")
		}
		if c.UpstreamToken != "" || c.UpstreamAuth.BasicUser != "" {
			add("upstream-auth.oauth2 conflicts with --upstream-token and basic auth: choose one")
		}
		if err := o.checkResource(); err != nil {
			add("upstream-auth.oauth2.resource: %v", err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.UpstreamAuth.Schemes)) {
		s := c.UpstreamAuth.Schemes[name]
		where := "upstream-auth.schemes." + name
		kinds := 0
		if s.Value != "" {
			kinds++
		}
		if s.User != "" || s.Password != "" {
			kinds++
		}
		if o := s.OAuth2; o.on() || o.ClientID != "" || o.ClientSecret != "" {
			kinds++
			if u, err := url.Parse(o.TokenURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				add("%s.oauth2.tokenURL %q must be an absolute http(s) URL", where, specloader.RedactURL(o.TokenURL))
			}
			if o.ClientID == "" || o.ClientSecret == "" {
				add("%s.oauth2 needs clientID and clientSecret", where)
			}
			if err := o.checkResource(); err != nil {
				add("%s.oauth2.resource: %v", where, err)
			}
		}
		switch {
		case kinds == 0:
			add("%s is empty: give it a value, a user and password, or an oauth2 grant", where)
		case kinds > 1:
			add("%s gives more than one of value, user/password and oauth2: give the one its scheme takes", where)
		}
		if badHeaderValue(s.Value) || badHeaderValue(s.User) || badHeaderValue(s.Password) {
			add("%s holds a control character (a line break?)", where)
		}
	}
	switch c.QuotaFail {
	case "open", "closed":
	default:
		add("--quota-fail must be open or closed, not %q", c.QuotaFail)
	}
	if c.RedisURL != "" {
		if _, err := quota.NewRedisClient(c.RedisURL); err != nil {
			add("--redis-url: %v", err)
		}
	}
	if strings.TrimSpace(c.RedisPrefix) == "" || strings.ContainsAny(c.RedisPrefix, " \t\r\n") {
		add("--redis-prefix must be a non-empty key prefix without spaces, not %q", c.RedisPrefix)
	}
	switch c.OutputSchema {
	case "tolerant", "strict", "off":
	default:
		add("--output-schema must be tolerant, strict or off, not %q", c.OutputSchema)
	}
	if !mcpx.ValidResultText(c.ResultText) {
		add("--result-text must be known, always or auto, not %q", c.ResultText)
	}
	if _, err := request.ParseNestedStyle(c.NestedStyle); err != nil {
		add("--nested-style: %v", err)
	}
	switch c.SchemaDetail {
	case "full", "compact":
	default:
		add("--schema-detail must be full or compact, not %q", c.SchemaDetail)
	}
	if c.MaxDescription < 0 {
		add("--max-description-length must not be negative")
	}
	switch c.Tools {
	case "all", "dynamic", "hybrid":
	default:
		add("--tools must be all, dynamic or hybrid, not %q", c.Tools)
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"--max-message-bytes", c.MaxMessageBytes}, {"--max-json-depth", c.MaxJSONDepth}, {"--max-sessions", c.MaxSessions},
		{"--max-sessions-per-identity", c.MaxSessionsPerID}, {"--max-sse-streams", c.MaxSSEStreams}, {"--max-sse-streams-per-identity", c.MaxSSEStreamsPerID}} {
		if n.v <= 0 {
			add("%s must be positive", n.name)
		}
	}
	if c.ReadTimeout <= 0 || c.IdleTimeout <= 0 {
		add("--read-timeout and --idle-timeout must be positive")
	}
	// The loader and the transports would read 0 as their default, and
	// some a negative value as "off", without a word.
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"--spec-timeout", c.SpecTimeout}, {"--session-timeout", c.SessionTimeout}, {"--keepalive", c.KeepAlive}, {"--shutdown-timeout", c.ShutdownTimeout}} {
		if d.d <= 0 {
			add("%s must be positive, not %s", d.name, d.d)
		}
	}
	if c.ShutdownDelay < 0 {
		add("--shutdown-delay must be 0 (off) or positive, not %s", c.ShutdownDelay)
	}
	if c.MaxOutputSchema < -1 {
		add("--max-output-schema-bytes must be -1 (no limit), 0 (no output schemas) or positive, not %d", c.MaxOutputSchema)
	}
	if c.MaxURLBytes < -1 || c.MaxURLBytes == 0 {
		add("--max-url-bytes must be -1 (no limit) or positive, not %d", c.MaxURLBytes)
	}
	if c.MaxProblems <= 0 {
		add("--max-problems must be positive, not %d", c.MaxProblems)
	}
	if c.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(c.MetricsListen); err != nil {
			add("--metrics-listen %q: %v", c.MetricsListen, err)
		}
	}
	if c.MaxConcurrency == 0 || c.MaxConcurrency < -1 || c.MaxQueue < 0 {
		add("--max-concurrency must be positive or -1 (no limit), --max-queue 0 or more")
	}
	if c.SpecRefresh < 0 || (c.SpecRefresh > 0 && c.SpecRefresh < time.Second) {
		add("--spec-refresh must be 0 (off) or at least 1s, not %s", c.SpecRefresh)
	}
	if c.MaxResponseBytes <= 0 || c.SpecMaxBytes <= 0 || c.MaxBodyBytes <= 0 || c.MaxArgumentBytes <= 0 {
		add("size limits (--max-response-bytes, --spec-max-bytes, --max-body-bytes, --max-argument-bytes) must be positive")
	}
	switch c.Transport {
	case "stdio", "http":
	default:
		add("--transport must be stdio or http, not %q", c.Transport)
	}
	if c.Transport == "http" {
		if _, _, err := net.SplitHostPort(c.Listen); err != nil {
			add("--listen %q: %v", c.Listen, err)
		}
		if c.JWKSURL != "" {
			if u, err := url.Parse(c.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
				add("--jwks-url %q must be an http(s) URL", specloader.RedactURL(c.JWKSURL))
			}
		}
		if c.NoAuth && (len(c.APIKeys) > 0 || c.JWKSURL != "" || c.APIKeyFile != "") {
			add("--no-auth conflicts with --api-key/--api-key-file/--jwks-url")
		}
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		add("--log-level must be debug, info, warn or error, not %q", c.LogLevel)
	}
	switch c.LogFormat {
	case "console", "json":
	default:
		add("--log-format must be console or json, not %q", c.LogFormat)
	}
	if c.APIKeyFile != "" {
		if _, err := os.Stat(c.APIKeyFile); err != nil {
			add("--api-key-file: %v", err)
		}
	}
	return errors.Join(errs...)
}

// badHeaderValue reports whether v holds a character no HTTP header value
// may hold: a control character other than a tab.
func badHeaderValue(v string) bool {
	return strings.ContainsFunc(v, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f })
}

// redactHeader shows a header's name only.
func redactHeader(h string) string {
	name, _, ok := strings.Cut(h, ":")
	if !ok {
		// No colon, no name: all of it may be the value (a bare token,
		// or "X-Api-Key=TOKEN").
		return "…"
	}
	return strings.TrimSpace(name) + ": …"
}

// parseHeaders turns "Name: value" strings into a map.
func parseHeaders(hs []string) map[string]string {
	m := map[string]string{}
	for _, h := range hs {
		name, val, ok := strings.Cut(h, ":")
		if !ok {
			continue
		}
		m[strings.TrimSpace(name)] = strings.TrimSpace(val)
	}
	return m
}

// quotaPolicy is the quota configuration, checked.
func (c *Config) quotaPolicy() (quota.Policy, error) {
	ids := map[string]string{}
	for i, e := range c.QuotaIdentities {
		if e.Identity == "" {
			return quota.Policy{}, fmt.Errorf("quota-identities[%d]: identity is empty", i)
		}
		ids[e.Identity] = e.Limit
	}
	p, err := quota.ParsePolicy(c.Quota, ids)
	if err != nil {
		return quota.Policy{}, fmt.Errorf("quota: %w", err)
	}
	return p, nil
}

// upstreamTLS is the TLS configuration toward the upstream (nil: system
// defaults).
func (c *Config) upstreamTLS() (*tls.Config, error) {
	if c.UpstreamCAFile == "" && c.UpstreamClientCert == "" && c.UpstreamClientKey == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.UpstreamCAFile != "" {
		pem, err := os.ReadFile(c.UpstreamCAFile)
		if err != nil {
			return nil, fmt.Errorf("--upstream-ca-file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--upstream-ca-file %s: no PEM certificate in it", c.UpstreamCAFile)
		}
		cfg.RootCAs = pool
	}
	if (c.UpstreamClientCert == "") != (c.UpstreamClientKey == "") {
		return nil, errors.New("--upstream-client-cert and --upstream-client-key go together")
	}
	if c.UpstreamClientCert != "" {
		cert, err := tls.LoadX509KeyPair(c.UpstreamClientCert, c.UpstreamClientKey)
		if err != nil {
			return nil, fmt.Errorf("upstream client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}
