package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigFileMapKeysKeepTheirCase checks that the names in the config
// file's maps reach the upstream and the spec as written: viper lowercases
// every key of a file, so upstream-auth.query {apiKey: …} was sent as
// ?apikey=…, a cookie SessionID as sessionid, and server-variables {Region:
// …} named no variable of the spec.
func TestConfigFileMapKeysKeepTheirCase(t *testing.T) {
	rec := newRecorder(t)
	dir := t.TempDir()
	conf := filepath.Join(dir, "mcpbridge.yaml")
	body := "upstream-auth:\n  query: {apiKey: QV, Page_Token: &tok PT}\n  cookies: {SessionID: CV}\n  headers: {X-Api-Key: *tok}\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	args := []string{"call", "getItem", "--args", `{"itemId":"a"}`, "--spec", "testdata/e2e.yaml", "--all-operations",
		"--upstream", rec.srv.URL + "/api", "--no-cache", "--config", conf}
	if err := run(t.Context(), args, nil, &out, &errb); err != nil {
		t.Fatalf("call: %v\n%s", err, errb.String())
	}
	reqs := rec.take()
	if len(reqs) != 1 {
		t.Fatalf("%d upstream requests, want 1", len(reqs))
	}
	uri, h := reqs[0].URI, reqs[0].Header
	for _, want := range []string{"apiKey=QV", "Page_Token=PT"} {
		if !strings.Contains(uri, want) {
			t.Errorf("upstream URI %s: no %s", uri, want)
		}
	}
	if c := h.Get("Cookie"); !strings.Contains(c, "SessionID=CV") {
		t.Errorf("upstream Cookie %q: no SessionID=CV", c)
	}
	if got := h.Get("X-Api-Key"); got != "PT" {
		t.Errorf("upstream X-Api-Key %q, want PT", got)
	}

	// A server variable with a capital is a name of the spec.
	spec := filepath.Join(dir, "api.yaml")
	if err := os.WriteFile(spec, []byte(`openapi: 3.0.3
info: {title: Vars, version: "1"}
servers: [{url: "http://127.0.0.1:{Port}/v1", variables: {Port: {default: "8080"}}}]
paths:
  /a:
    get:
      operationId: opA
      responses: {"200": {description: ok}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("server-variables: {Port: \"9090\"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if err := run(t.Context(), []string{"tools", "--spec", spec, "--all-operations", "--no-cache", "--config", conf}, nil, &out, &errb); err != nil {
		t.Errorf("server-variables {Port: 9090} in the config file: %v", err)
	}
	// The flag still beats the file.
	if err := run(t.Context(), []string{"tools", "--spec", spec, "--all-operations", "--no-cache", "--config", conf, "--server-variables", "Prot=1"}, nil, &out, &errb); err == nil || !strings.Contains(err.Error(), `"Prot"`) {
		t.Errorf("--server-variables Prot=1 over the file: %v; want the flag's name refused", err)
	}
}

// TestEnvironmentListItemsTrimmed checks that a comma-separated
// MCPBRIDGE_ list written with spaces after its commas means its items:
// MCPBRIDGE_REDACT_KEYS="note, user" masked note and looked for a key
// " user", so the answer's user went out unmasked without a word.
func TestEnvironmentListItemsTrimmed(t *testing.T) {
	rec := newRecorder(t)
	t.Setenv("MCPBRIDGE_REDACT_KEYS", "note, user ,")
	var out, errb bytes.Buffer
	args := []string{"call", "getSecrets", "--spec", "testdata/e2e.yaml", "--all-operations",
		"--upstream", rec.srv.URL + "/api", "--no-cache"}
	if err := run(t.Context(), args, nil, &out, &errb); err != nil {
		t.Fatalf("call: %v\n%s", err, errb.String())
	}
	for _, leak := range []string{`"ann"`, "leaked"} {
		if strings.Contains(out.String(), leak) {
			t.Errorf("answer carries %s, which MCPBRIDGE_REDACT_KEYS masks:\n%s", leak, out.String())
		}
	}
}

// TestUpstreamTokenLineBreak checks that a token ending in a line break (a
// file or a Kubernetes secret read into MCPBRIDGE_UPSTREAM_TOKEN) is sent
// without it, and that a control character inside a token or a header is a
// startup error naming the setting, not the value: Go refused every
// request, and each call failed after its retries as "upstream
// unavailable: transport error".
func TestUpstreamTokenLineBreak(t *testing.T) {
	rec := newRecorder(t)
	args := []string{"call", "getItem", "--args", `{"itemId":"a"}`, "--spec", "testdata/e2e.yaml", "--all-operations",
		"--upstream", rec.srv.URL + "/api", "--no-cache"}
	t.Setenv("MCPBRIDGE_UPSTREAM_TOKEN", "tok-123\n")
	var out, errb bytes.Buffer
	if err := run(t.Context(), args, nil, &out, &errb); err != nil {
		t.Fatalf("call: %v\n%s", err, out.String())
	}
	if reqs := rec.take(); len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer tok-123" {
		t.Errorf("upstream requests %+v; want one with Authorization: Bearer tok-123", reqs)
	}
	for _, c := range []struct{ env, flag, want string }{
		{"tok\n123", "", "--upstream-token"},
		{"", "X-Key: se\rcret", `--upstream-header "X-Key: …"`},
	} {
		t.Setenv("MCPBRIDGE_UPSTREAM_TOKEN", c.env)
		a := args
		if c.flag != "" {
			a = append(append([]string(nil), args...), "--upstream-header", c.flag)
		}
		err := run(t.Context(), a, nil, &out, &errb)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "control character") || strings.Contains(err.Error(), "123") || strings.Contains(err.Error(), "cret") {
			t.Errorf("token %q, header %q: %v; want a startup error naming %s and not the value", c.env, c.flag, err, c.want)
		}
	}
	if reqs := rec.take(); len(reqs) != 0 {
		t.Errorf("%d upstream requests after a startup error", len(reqs))
	}
}

// TestConfigErrorNamesItsSource checks that a value that does not decode
// is reported with where it came from: a bad MCPBRIDGE_ variable was
// blamed on the config file whenever there was one, and an unknown key of
// the file now comes with the key meant.
func TestConfigErrorNamesItsSource(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "mcpbridge.yaml")
	if err := os.WriteFile(conf, []byte("spec: testdata/e2e.yaml\nall-operations: true\nretries: many\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPBRIDGE_TIMEOUT", "abc")
	var out, errb bytes.Buffer
	err := run(t.Context(), []string{"tools", "--config", conf, "--no-cache"}, nil, &out, &errb)
	if err == nil {
		t.Fatal("tools: no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := map[string][]string{"MCPBRIDGE_TIMEOUT": {"duration such as 30s"}, "config file " + conf + ": retries": {"whole number"}}
	for prefix, parts := range want {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, prefix+": ") {
				found = true
				for _, p := range parts {
					if !strings.Contains(l, p) {
						t.Errorf("%q does not say %q", l, p)
					}
				}
			}
		}
		if !found {
			t.Errorf("no line starting %q in:\n%v", prefix, err)
		}
	}
	if out.Len() != 0 {
		t.Errorf("stdout: %q", out.String())
	}

	t.Setenv("MCPBRIDGE_TIMEOUT", "5s")
	if err := os.WriteFile(conf, []byte("spec: testdata/e2e.yaml\nall-operations: true\ntimout: 5s\nupstream-auth: {basic-usr: a}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err = run(t.Context(), []string{"tools", "--config", conf, "--no-cache"}, nil, &out, &errb)
	for _, want := range []string{"unknown keys: timout (did you mean timeout?)", "unknown keys in upstream-auth: basic-usr (did you mean basic-user?)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("unknown keys: %v; want %q", err, want)
		}
	}
}

// TestConfigFileNamingAnotherRefused checks that a config file's config
// key, which was ignored without a word (one file is read), is an error.
func TestConfigFileNamingAnotherRefused(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "mcpbridge.yaml")
	spec, err := filepath.Abs("testdata/e2e.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("config: other.yaml\nspec: "+spec+"\nall-operations: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err = run(t.Context(), []string{"tools", "--config", conf, "--no-cache"}, nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "config file "+conf+": config:") {
		t.Errorf("tools: %v; want an error naming the file's config key", err)
	}
}

// TestEnvironmentScalarSpacesTrimmed checks that a number, switch or
// duration in an MCPBRIDGE_ variable is read with the spaces and line
// break around it dropped (an env file's " 20", a secret's "5s\n"): they
// were refused as not a number.
func TestEnvironmentScalarSpacesTrimmed(t *testing.T) {
	t.Setenv("MCPBRIDGE_MAX_DESCRIPTION_LENGTH", " 20 ")
	t.Setenv("MCPBRIDGE_TIMEOUT", "5s\n")
	t.Setenv("MCPBRIDGE_JSON", "true ")
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"tools", "--spec", "../../testdata/specs/petstore.3.0.yaml", "--all-operations", "--no-cache"}, nil, &out, &errb); err != nil {
		t.Fatalf("tools: %v", err)
	}
	var tools []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := json.Unmarshal(out.Bytes(), &tools); err != nil {
		t.Fatalf("MCPBRIDGE_JSON=\"true \": output is not JSON: %v", err)
	}
	for _, tl := range tools {
		if tl.Name != "ping" && len(tl.Description) > 20 {
			t.Errorf("%s: description of %d bytes, over MCPBRIDGE_MAX_DESCRIPTION_LENGTH=\" 20 \"", tl.Name, len(tl.Description))
		}
	}
}
