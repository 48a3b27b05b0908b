package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

// TestCallCommand performs one call without an MCP client against a
// recording upstream, and checks the exit status follows isError.
func TestCallCommand(t *testing.T) {
	rec := newRecorder(t)
	base := []string{"--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml", "--upstream", rec.srv.URL + "/api", "--no-cache"}
	var out, errb bytes.Buffer
	if err := run(t.Context(), append([]string{"call", "getItem", "--args", `{"itemId":"a b"}`}, base...), nil, &out, &errb); err != nil {
		t.Fatalf("call: %v\n%s", err, errb.String())
	}
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.IsError || !strings.Contains(res.Content[0].Text, `"a b"`) {
		t.Fatalf("call printed %s (%v)", out.String(), err)
	}
	rec.mu.Lock()
	uri := rec.reqs[len(rec.reqs)-1].URI
	rec.mu.Unlock()
	if uri != "/api/items/a%20b" {
		t.Errorf("upstream got %s; want /api/items/a%%20b", uri)
	}

	out.Reset()
	err := run(t.Context(), append([]string{"call", "getItem", "--args", `{}`}, base...), nil, &out, &errb)
	if !errors.Is(err, errToolFailed) || !strings.Contains(out.String(), `"isError": true`) {
		t.Errorf("a bad call: err %v, printed %s; want errToolFailed and the error result", err, out.String())
	}
	err = run(t.Context(), append([]string{"call", "getItm"}, base...), nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), `did you mean "getItem"`) {
		t.Errorf("unknown tool: %v; want a suggestion", err)
	}
	err = run(t.Context(), append([]string{"call", "getItem", "--args", `[1]`}, base...), nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "JSON object") {
		t.Errorf("--args [1]: %v", err)
	}
}

// TestValidateCommand checks validate's exit status and report.
func TestValidateCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"validate", "--spec", "testdata/e2e.yaml", "--whitelist", "testdata/e2e-whitelist.yaml"}, nil, &out, &errb); err != nil {
		t.Fatalf("validate: %v\n%s%s", err, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "spec:       OK") || !strings.Contains(out.String(), "whitelist:  OK") {
		t.Errorf("report:\n%s", out.String())
	}
	out.Reset()
	err := run(t.Context(), []string{"validate", "--spec", "testdata/e2e.yaml", "--whitelist", "testdata/bad-whitelist.yaml"}, nil, &out, &errb)
	if err == nil || !strings.HasPrefix(out.String(), "FAIL") {
		t.Errorf("a bad whitelist: err %v, report %q; want failure", err, out.String())
	}
	// Every problem names the file, not only the first one the whitelist
	// parser reported (validate groups them, so the others lost it).
	wl := filepath.Join(t.TempDir(), "wl.yaml")
	if err := os.WriteFile(wl, []byte("tool:\n  - operationId: getItem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(t.Context(), []string{"validate", "--spec", "testdata/e2e.yaml", "--whitelist", wl}, nil, &out, &errb); err == nil {
		t.Errorf("validate of a whitelist without tools: no error\n%s", out.String())
	}
	problems := 0
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "  - ") {
			problems++
			if !strings.HasPrefix(l, "  - "+wl+": line ") {
				t.Errorf("problem line %q does not name %s", l, wl)
			}
		}
	}
	if problems != 2 {
		t.Errorf("%d problems, want 2:\n%s", problems, out.String())
	}
	out.Reset()
	if err := run(t.Context(), []string{"validate", "--spec", "testdata/not-a-spec.yaml"}, nil, &out, &errb); err == nil {
		t.Errorf("not a spec validated: %s", out.String())
	}
}

// TestInitCommand checks that init writes a whitelist the parser accepts,
// that selects exactly the read-only operations.
func TestInitCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"init", "--spec", "../../testdata/specs/petstore.3.0.yaml"}, nil, &out, &errb); err != nil {
		t.Fatalf("init: %v\n%s", err, errb.String())
	}
	text := out.String()
	for _, want := range []string{"\n  # pet\n", "  - operationId: getPetById", "  # - operationId: addPet", "  # store\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("init output lacks %q:\n%s", want, text)
		}
	}
	p := filepath.Join(t.TempDir(), "whitelist.yaml")
	if err := os.WriteFile(p, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(p)
	defer f.Close()
	if _, err := whitelist.Parse(f); err != nil {
		t.Fatalf("init's whitelist does not parse: %v\n%s", err, text)
	}
	out.Reset()
	if err := run(t.Context(), []string{"tools", "--spec", "../../testdata/specs/petstore.3.0.yaml", "--whitelist", p}, nil, &out, &errb); err != nil {
		t.Fatalf("tools with init's whitelist: %v", err)
	}
	if strings.Contains(out.String(), "addPet") || !strings.Contains(out.String(), "getPetById") {
		t.Errorf("init's whitelist selects the wrong tools:\n%s", out.String())
	}
}

// TestClientCommand drives the real binary (re-exec) over stdio with the
// client command.
func TestClientCommand(t *testing.T) {
	t.Setenv(runMainEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	cmd := exe + " demo"
	if err := runClient(t.Context(), []string{"list", "--command", cmd}, &out, &errb); err != nil {
		t.Fatalf("client list: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "ping\t") {
		t.Errorf("client list:\n%s", out.String())
	}
	out.Reset()
	if err := runClient(t.Context(), []string{"call", "ping", "--command", cmd}, &out, &errb); err != nil {
		t.Fatalf("client call: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), `mcpbridge`) {
		t.Errorf("client call ping:\n%s", out.String())
	}
	if err := runClient(t.Context(), []string{"call"}, &out, &errb); err == nil {
		t.Errorf("client call without a tool accepted")
	}
}

// TestQuotaEndToEnd runs the real binary with --quota and checks that the
// caller gets an isError result saying when to retry once the quota is
// spent, that the upstream is not called then, and that ping still works.
func TestQuotaEndToEnd(t *testing.T) {
	rec := newRecorder(t)
	cs, _ := startBridge(t, "serve",
		"--spec", "testdata/e2e.yaml",
		"--whitelist", "testdata/e2e-whitelist.yaml",
		"--upstream", rec.srv.URL+"/api",
		"--quota", "2/1h",
	)
	for i := range 2 {
		if res, text := callText(t, cs, "getItem", map[string]any{"itemId": "x"}); res.IsError {
			t.Fatalf("call %d refused: %s", i, text)
		}
	}
	res, text := callText(t, cs, "getItem", map[string]any{"itemId": "x"})
	if !res.IsError || !strings.Contains(text, "rate limit exceeded") || !strings.Contains(text, "retry in") {
		t.Errorf("third call: isError %v, %q; want a rate-limit error with a retry time", res.IsError, text)
	}
	if got := rec.take(); len(got) != 2 {
		t.Errorf("upstream got %d requests; want 2", len(got))
	}
	if res, text := callText(t, cs, "ping", nil); res.IsError {
		t.Errorf("ping counted against the quota: %s", text)
	}
}

// TestRedactPatternsEnvKeepsCommas checks that a regular expression with a
// comma survives MCPBRIDGE_REDACT_PATTERNS (one pattern per line).
func TestRedactPatternsEnvKeepsCommas(t *testing.T) {
	fs := flagSet("serve")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(fs, []string{"MCPBRIDGE_REDACT_PATTERNS=\\d{3,5}\nacct-[0-9]+"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.RedactPatterns) != 2 || cfg.RedactPatterns[0] != `\d{3,5}` || cfg.RedactPatterns[1] != "acct-[0-9]+" {
		t.Errorf("patterns %q; want [\\d{3,5} acct-[0-9]+]", cfg.RedactPatterns)
	}
}

// TestSecretsNotInErrorsOrLogs checks that a credential in the spec URL's
// query, the upstream token and an inbound API key appear neither in the
// error run returns nor in any log line, even at debug level.
func TestSecretsNotInErrorsOrLogs(t *testing.T) {
	const specSecret, token, key = "specsecret-5f4dcc3b5aa765d61d8327deb882cf99", "uptoken-9b74c9897bac770ffc029102a200c5de", "inbound-key-7d793037a0760186574b0282f2f435e7"
	for _, args := range [][]string{
		{"tools", "--spec", "http://127.0.0.1:1/openapi.json?access_token=" + specSecret, "--all-operations", "--upstream-token", token, "--log-level", "debug"},
		{"validate", "--spec", "http://127.0.0.1:1/openapi.json?access_token=" + specSecret, "--log-level", "debug"},
		{"serve", "--spec", "testdata/e2e.yaml", "--all-operations", "--transport", "http", "--listen", "0.0.0.0:1", "--upstream-header", "X-Api-Key: " + token},
		{"serve", "--spec", "testdata/e2e.yaml", "--all-operations", "--api-key", key, "--upstream", "ftp://" + token + "@example.com"},
	} {
		var out, errb bytes.Buffer
		err := run(t.Context(), args, strings.NewReader(""), &out, &errb)
		if err == nil {
			t.Errorf("%v: no error", args)
			continue
		}
		for _, s := range []string{specSecret, token, key} {
			if strings.Contains(err.Error(), s) || strings.Contains(errb.String(), s) || strings.Contains(out.String(), s) {
				t.Errorf("%v: a secret leaked:\nerr: %v\nstderr: %s", args[0], err, errb.String())
			}
		}
	}
}

// TestNoServersIsAStartupError checks that a spec without servers and no
// --upstream fails with one clear error instead of serving zero tools.
func TestNoServersIsAStartupError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(p, []byte("openapi: 3.0.3\ninfo: {title: t, version: \"1\"}\npaths:\n  /a:\n    get: {operationId: a, responses: {\"200\": {description: ok}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run(t.Context(), []string{"tools", "--spec", p, "--all-operations"}, nil, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "--upstream") {
		t.Errorf("got %v; want an error pointing at --upstream", err)
	}
	if err := run(t.Context(), []string{"tools", "--spec", p, "--all-operations", "--upstream", "http://127.0.0.1:9"}, nil, &out, &errb); err != nil {
		t.Errorf("with --upstream: %v", err)
	}
}

// TestClientURLCredentialsNotPrinted: a token in client --url (as the user
// name, https://TOKEN@host, or a query value, ?key=TOKEN) is not printed in
// the error when the server cannot be reached; net/http masks only a
// password.
func TestClientURLCredentialsNotPrinted(t *testing.T) {
	for _, u := range []string{
		"http://SECRETTOKEN1@127.0.0.1:1/mcp",
		"http://user:SECRETTOKEN1@127.0.0.1:1/mcp",
		"http://127.0.0.1:1/mcp?key=SECRETTOKEN1",
	} {
		var out, errb bytes.Buffer
		err := runClient(t.Context(), []string{"list", "--url", u}, &out, &errb)
		if err == nil {
			t.Fatalf("%s: no error", u)
		}
		if got := err.Error() + out.String() + errb.String(); strings.Contains(got, "SECRETTOKEN1") {
			t.Errorf("%s: the credential is printed: %s", u, got)
		}
	}
}

// TestInitHostileSpec: a spec's tag or operationId with a line break
// cannot write a line of its own into init's whitelist (here, one that
// enables the DELETE the whitelist shows commented out).
func TestInitHostileSpec(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    get:
      operationId: getA
      tags: ["x\n  - operationId: deleteAll\n  #"]
      responses: {"200": {description: ok}}
  /c:
    get:
      operationId: "getC\n  - operationId: deleteAll\n  #"
      tags: ["z"]
      responses: {"200": {description: ok}}
  /d:
    delete:
      operationId: deleteAll
      responses: {"200": {description: ok}}
`
	dir := t.TempDir()
	sp := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(sp, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"init", "--spec", sp}, nil, &out, &errb); err != nil {
		t.Fatalf("init: %v\n%s", err, errb.String())
	}
	wl, err := whitelist.Parse(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatalf("init's whitelist does not parse: %v\n%s", err, out.String())
	}
	for _, e := range wl.Entries {
		if e.OperationID == "deleteAll" {
			t.Fatalf("the spec enabled deleteAll in init's whitelist:\n%s", out.String())
		}
	}
}

// TestInitControlCharacters: a spec's title or summary with a control
// character (an escape sequence) or a long non-ASCII text still gives a
// whitelist that parses: YAML allows neither control characters nor
// invalid UTF-8, even in a comment.
func TestInitControlCharacters(t *testing.T) {
	spec := "openapi: 3.0.3\ninfo: {title: \"t\\e]0;x\\a " + strings.Repeat("é", 60) + "\", version: \"1\"}\n" +
		"paths:\n  /a:\n    get:\n      operationId: getA\n      summary: \"hi \\e[31mred\\e[0m " + strings.Repeat("ü", 60) + "\"\n" +
		"      responses: {\"200\": {description: ok}}\n"
	sp := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(sp, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"init", "--spec", sp}, nil, &out, &errb); err != nil {
		t.Fatalf("init: %v\n%s", err, errb.String())
	}
	if _, err := whitelist.Parse(bytes.NewReader(out.Bytes())); err != nil {
		t.Fatalf("init's whitelist does not parse: %v\n%q", err, out.String())
	}
}

// TestInitRepeatedOperationID: an operationId entry selects every operation
// that carries it, so init wrote "- operationId: thing" for the GET of a
// spec that also gave "thing" to a DELETE, and the whitelist it says
// enables read-only operations only served the DELETE as well. A repeated
// operationId is written as method and path. A commented-out entry becomes
// a valid one when its "# " is removed.
func TestInitRepeatedOperationID(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "https://api.example.com"}]
paths:
  /things/{id}:
    parameters: [{name: id, in: path, required: true, schema: {type: string}}]
    get: {operationId: thing, responses: {"200": {description: ok}}}
    delete: {operationId: thing, responses: {"204": {description: gone}}}
  /other:
    post: {responses: {"200": {description: ok}}}
`
	dir := t.TempDir()
	sp := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(sp, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"init", "--spec", sp}, nil, &out, &errb); err != nil {
		t.Fatalf("init: %v\n%s", err, errb.String())
	}
	wlPath := filepath.Join(dir, "whitelist.yaml")
	if err := os.WriteFile(wlPath, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var tools bytes.Buffer
	if err := run(t.Context(), []string{"tools", "--no-cache", "--spec", sp, "--whitelist", wlPath}, nil, &tools, &errb); err != nil {
		t.Fatalf("tools with init's whitelist: %v\n%s", err, errb.String())
	}
	if strings.Contains(tools.String(), "DELETE") || !strings.Contains(tools.String(), "GET") {
		t.Errorf("init's whitelist serves more than the read-only operation:\n%s\nwhitelist:\n%s", tools.String(), out.String())
	}
	// Every entry uncommented: all three operations, each once.
	all := regexp.MustCompile(`(?m)^  # (- |  )`).ReplaceAllString(out.String(), "  $1")
	wl, err := whitelist.Parse(strings.NewReader(all))
	if err != nil {
		t.Fatalf("init's whitelist with its entries uncommented does not parse: %v\n%s", err, all)
	}
	if len(wl.Entries) != 3 {
		t.Errorf("uncommented: %d entries; want 3:\n%s", len(wl.Entries), all)
	}
}
