package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigFileDurationNeedsUnit checks that a duration written as a bare
// number in the config file ("timeout: 30") is an error naming the key,
// not 30 nanoseconds: the flag and the environment refuse "30" already.
func TestConfigFileDurationNeedsUnit(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) (*Config, error) {
		t.Helper()
		conf := filepath.Join(dir, "mcpbridge.yaml")
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		fs := flagSet("serve")
		if err := fs.Parse([]string{"--config", conf}); err != nil {
			t.Fatal(err)
		}
		return loadConfig(fs, nil)
	}
	for _, body := range []string{"timeout: 30\n", "spec-timeout: 10\n", "session-timeout: 1.5\n", "keepalive: 15\n", "spec-refresh: 300\n"} {
		key, _, _ := strings.Cut(body, ":")
		_, err := load(body)
		if err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "unit") {
			t.Errorf("%q: error %v; want one naming %s and asking for a unit", strings.TrimSpace(body), err, key)
		}
	}
	for body, want := range map[string]time.Duration{"timeout: 30s\n": 30 * time.Second, "spec-refresh: 0\n": 0, "timeout: 1m30s\n": 90 * time.Second} {
		cfg, err := load(body)
		if err != nil {
			t.Errorf("%q: %v", strings.TrimSpace(body), err)
			continue
		}
		if got := cfg.Timeout; strings.HasPrefix(body, "timeout") && got != want {
			t.Errorf("%q: timeout %v, want %v", strings.TrimSpace(body), got, want)
		}
	}
	// Defaults (durations from the flags) still decode.
	cfg, err := load("spec: x.yaml\n")
	if err != nil || cfg.Timeout != 30*time.Second || cfg.KeepAlive != 30*time.Second {
		t.Errorf("defaults: %v, timeout %v, keepalive %v", err, cfg.Timeout, cfg.KeepAlive)
	}
}

// TestValidateRejectsSilentDefaults checks that values the bridge would
// otherwise replace by a default, or read as "off", without a word are
// startup errors naming the flag.
func TestValidateRejectsSilentDefaults(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--spec-timeout", "0"}, "--spec-timeout"},
		{[]string{"--spec-timeout", "-1s"}, "--spec-timeout"},
		{[]string{"--session-timeout", "0"}, "--session-timeout"},
		{[]string{"--session-timeout", "-5s"}, "--session-timeout"},
		{[]string{"--keepalive", "0"}, "--keepalive"},
		{[]string{"--keepalive", "-1s"}, "--keepalive"},
		{[]string{"--shutdown-timeout", "-1s"}, "--shutdown-timeout"},
		{[]string{"--shutdown-timeout", "0"}, "--shutdown-timeout"},
		{[]string{"--max-output-schema-bytes", "-5"}, "--max-output-schema-bytes"},
		{[]string{"--max-problems", "-3"}, "--max-problems"},
		// The value given is quoted: "DEBUG" is not debug.
		{[]string{"--log-level", "DEBUG"}, `--log-level must be debug, info, warn or error, not "DEBUG"`},
		{[]string{"--log-format", "text"}, `--log-format must be console or json, not "text"`},
	} {
		fs := flagSet("serve")
		if err := fs.Parse(append([]string{"--spec", "x.yaml", "--all-operations"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		cfg, err := loadConfig(fs, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = cfg.Validate("serve")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: Validate said %v; want an error naming %s", c.args, err, c.want)
		}
	}
	// The defaults and the documented special values pass.
	for _, args := range [][]string{nil, {"--max-output-schema-bytes", "-1"}, {"--max-output-schema-bytes", "0"}} {
		fs := flagSet("serve")
		if err := fs.Parse(append([]string{"--spec", "x.yaml", "--all-operations"}, args...)); err != nil {
			t.Fatal(err)
		}
		cfg, err := loadConfig(fs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate("serve"); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
}

// TestUnknownEnvironmentVariableWarns checks that an MCPBRIDGE_ variable
// that names no setting (the singular of a repeatable flag, a typo) is
// reported on stderr with the variable meant, instead of being ignored
// without a word.
func TestUnknownEnvironmentVariableWarns(t *testing.T) {
	t.Setenv("MCPBRIDGE_REDACT_KEY", "op")    // the variable is MCPBRIDGE_REDACT_KEYS
	t.Setenv("MCPBRIDGE_TIMEOUTT", "5s")      // a typo
	t.Setenv("MCPBRIDGE_SPEC_TIMEOUT", "10s") // a setting: no warning
	t.Setenv("MCPBRIDGE_TEST_SOMETHING", "1") // tests' own: no warning
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"tools", "--spec", "testdata/e2e.yaml", "--all-operations", "--no-cache"}, nil, &out, &errb); err != nil {
		t.Fatalf("tools: %v\n%s", err, errb.String())
	}
	log := errb.String()
	for _, want := range []string{"MCPBRIDGE_REDACT_KEY", "MCPBRIDGE_REDACT_KEYS", "MCPBRIDGE_TIMEOUTT", "MCPBRIDGE_TIMEOUT"} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr does not name %s:\n%s", want, log)
		}
	}
	for _, not := range []string{"MCPBRIDGE_SPEC_TIMEOUT", "MCPBRIDGE_TEST_SOMETHING", "5s"} {
		if strings.Contains(log, not) {
			t.Errorf("stderr names %s:\n%s", not, log)
		}
	}
	if strings.Contains(out.String(), "MCPBRIDGE_") {
		t.Errorf("stdout carries the warning:\n%s", out.String())
	}
}

// TestUnknownServerVariable checks that a --server-variables name that no
// server of the served operations declares (a typo) stops startup, naming
// it and the variables there are, instead of leaving the default in place.
func TestUnknownServerVariable(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "api.yaml")
	body := `openapi: 3.0.3
info: {title: Vars, version: "1"}
servers:
  - url: "http://{host}:{port}/v1"
    variables:
      host: {default: 127.0.0.1}
      port: {default: "8080"}
paths:
  /a:
    get:
      operationId: opA
      responses: {"200": {description: ok}}
  /b:
    servers:
      - url: "http://{region}.example.com"
        variables:
          region: {default: eu}
    get:
      operationId: opB
      responses: {"200": {description: ok}}
`
	if err := os.WriteFile(spec, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	tools := func(vars string) error {
		var out, errb bytes.Buffer
		return run(t.Context(), []string{"tools", "--spec", spec, "--all-operations", "--no-cache", "--server-variables", vars}, nil, &out, &errb)
	}
	err := tools("prot=9090")
	if err == nil || !strings.Contains(err.Error(), `"prot"`) || !strings.Contains(err.Error(), "port") {
		t.Errorf("--server-variables prot=9090: %v; want an error naming prot and the variables there are", err)
	}
	for _, ok := range []string{"port=9090", "host=localhost,port=9090", "region=us"} {
		if err := tools(ok); err != nil {
			t.Errorf("--server-variables %s: %v", ok, err)
		}
	}
}

// TestEmptyEnvironmentNumberIsAnError checks that an empty MCPBRIDGE_
// variable of a number or a switch is an error naming it: weakly typed
// decoding read "" as 0 or false (MCPBRIDGE_RETRIES= meant no retries,
// MCPBRIDGE_MAX_QUEUE= no queue), while an empty duration was refused.
func TestEmptyEnvironmentNumberIsAnError(t *testing.T) {
	for _, name := range []string{"MCPBRIDGE_RETRIES", "MCPBRIDGE_MAX_QUEUE", "MCPBRIDGE_MAX_OUTPUT_SCHEMA_BYTES", "MCPBRIDGE_NO_CACHE"} {
		fs := flagSet("serve")
		if err := fs.Parse(nil); err != nil {
			t.Fatal(err)
		}
		_, err := loadConfig(fs, []string{name + "="})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=: %v; want an error naming it", name, err)
		}
	}
	// An empty list is a value: none ('' for none).
	fs := flagSet("serve")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(fs, []string{"MCPBRIDGE_CONTENT_CLIENTS=", "MCPBRIDGE_UPSTREAM="})
	if err != nil || len(cfg.ContentClients) != 0 {
		t.Errorf("empty list variable: %v, %q", err, cfg.ContentClients)
	}
}

// TestConfigFileWrongKindOfValue checks that a config file value of the
// wrong kind for its key is an error naming the key, where weakly typed
// decoding took a fraction for a whole number (max-concurrency: 1.7 was 1),
// a switch for a number (retries: true was 1) or a number for a switch.
// timeout: true was 1 ns, so every call timed out.
func TestConfigFileWrongKindOfValue(t *testing.T) {
	dir := t.TempDir()
	load := func(body string, environ ...string) (*Config, error) {
		t.Helper()
		conf := filepath.Join(dir, "mcpbridge.yaml")
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		fs := flagSet("serve")
		if err := fs.Parse([]string{"--config", conf}); err != nil {
			t.Fatal(err)
		}
		return loadConfig(fs, environ)
	}
	for _, body := range []string{"max-concurrency: 1.7\n", "retries: true\n", "strict: 1\n", "max-response-bytes: 0.5\n", "timeout: true\n", "spec-refresh: true\n"} {
		key, _, _ := strings.Cut(body, ":")
		if _, err := load(body); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%q: %v; want an error naming %s", strings.TrimSpace(body), err, key)
		}
	}
	cfg, err := load("max-concurrency: 8\nretries: 3.0\nstrict: true\n", "MCPBRIDGE_MAX_QUEUE=12", "MCPBRIDGE_TRUNCATE=false")
	if err != nil || cfg.MaxConcurrency != 8 || cfg.Retries != 3 || !cfg.Strict || cfg.MaxQueue != 12 || cfg.Truncate {
		t.Errorf("valid values: %v, %+v", err, cfg)
	}
}

// A header given without its colon ("Authorization Bearer TOKEN", or the
// bare token) is all value as far as anyone can tell: the error must not
// print it.
func TestHeaderWithoutColonNotPrinted(t *testing.T) {
	for _, h := range []string{"Authorization Bearer SECRETTOKEN1", "SECRETTOKEN1", "X-Api-Key=SECRETTOKEN1"} {
		for _, flag := range []string{"--upstream-header", "--spec-header"} {
			var out, errb bytes.Buffer
			err := run(context.Background(), []string{"tools", "--spec", "testdata/e2e.yaml", "--all-operations", flag, h}, strings.NewReader(""), &out, &errb)
			if err == nil {
				t.Fatalf("%s %q: no error", flag, h)
			}
			if got := err.Error() + out.String() + errb.String(); strings.Contains(got, "SECRETTOKEN1") {
				t.Errorf("%s %q: the value is printed: %s", flag, h, got)
			}
		}
	}
}
