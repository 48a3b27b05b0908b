package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// TestCommandHelp checks that each command's help lists that command's
// flags and no other command's, on stdout, with no error.
func TestCommandHelp(t *testing.T) {
	tests := []struct {
		args      []string
		want, not []string
	}{
		{[]string{"serve", "--help"}, []string{"Usage: mcpbridge serve", "--spec", "--upstream", "--listen", "--api-key", "--timeout", "--log-level", "Serving:"}, []string{"--args", "--json", "--max-problems", "--tag"}},
		{[]string{"tools", "-h"}, []string{"Usage: mcpbridge tools", "--json", "--stats", "--verbose", "--tag", "--path", "--spec", "--whitelist"}, []string{"--listen", "--args", "--api-key", "--max-problems"}},
		{[]string{"help", "call"}, []string{"Usage: mcpbridge call TOOL", "--args", "--timeout", "--spec"}, []string{"--listen", "--json"}},
		{[]string{"validate", "--help"}, []string{"--max-problems", "--strict", "Exit status: 0"}, []string{"--listen", "--args"}},
		{[]string{"init", "-h"}, []string{"Usage: mcpbridge init", "--spec"}, []string{"--whitelist", "--listen", "--upstream"}},
		{[]string{"demo", "--help"}, []string{"Usage: mcpbridge demo", "--transport", "--whitelist"}, []string{"--spec ", "--upstream ", "--args"}},
		{[]string{"client", "--help"}, []string{"Usage: mcpbridge client", "--command", "--url", "--header"}, []string{"--spec", "MCPBRIDGE_"}},
		{[]string{"completion", "--help"}, []string{"Usage: mcpbridge completion bash|zsh|fish", "source <(mcpbridge completion bash)"}, []string{"--spec"}},
		{[]string{"help", "version"}, []string{"Usage: mcpbridge version"}, []string{"--spec"}},
		{[]string{"--help"}, []string{"Usage: mcpbridge COMMAND", "serve", "tools", "call", "validate", "init", "client", "demo", "completion", "version"}, []string{"--listen"}},
		{[]string{"help"}, []string{"Usage: mcpbridge COMMAND", "mcpbridge help COMMAND"}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			if err := run(t.Context(), tt.args, nil, &out, &errb); err != nil {
				t.Fatalf("run(%q) = %v", tt.args, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("help lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("help shows %q, which is not this command's:\n%s", n, out.String())
				}
			}
			if errb.Len() != 0 {
				t.Errorf("stderr got %q", errb.String())
			}
		})
	}
}

// TestEveryCommandHelp checks that every command in the table has help, and
// that every serve flag shows up in some command's help.
func TestEveryCommandHelp(t *testing.T) {
	shown := map[string]bool{}
	for _, c := range commands() {
		var out bytes.Buffer
		if err := help([]string{c.name}, &out); err != nil || !strings.HasPrefix(out.String(), "Usage: mcpbridge "+c.name) {
			t.Errorf("help %s: %v\n%s", c.name, err, out.String())
		}
		if fs := helpFlags(c.name); fs != nil && c.name != "client" {
			for _, f := range commandFlags(c, fs) {
				shown[f.Name] = true
			}
		}
	}
	flagSet("serve").VisitAll(func(f *pflag.Flag) {
		if !shown[f.Name] {
			t.Errorf("flag --%s is in no command's help", f.Name)
		}
	})
}

// TestUsageErrors checks that a command line the program does not
// understand fails with exit status 2, a suggestion, and nothing on stdout.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no command given"},
		{[]string{"serv"}, `unknown command "serv"; did you mean serve?`},
		{[]string{"vaildate"}, `unknown command "vaildate"; did you mean validate?`},
		{[]string{"frobnicate"}, `unknown command "frobnicate" (mcpbridge --help lists the commands)`},
		{[]string{"serve", "--upstrem", "http://x"}, "serve: unknown flag --upstrem; did you mean --upstream?"},
		{[]string{"serve", "--upstraem=http://x"}, "did you mean --upstream?"},
		{[]string{"tools", "--jsno"}, "tools: unknown flag --jsno; did you mean --json?"},
		{[]string{"call", "x", "--arsg", "{}"}, "did you mean --args?"},
		{[]string{"client", "list", "--comand", "x"}, "client: unknown flag --comand; did you mean --command?"},
		{[]string{"serve", "--timeout", "soon"}, `serve: invalid argument "soon" for "--timeout" flag`},
		{[]string{"serve", "-x"}, "serve: unknown shorthand flag: 'x' in -x"},
		{[]string{"call"}, "call: name exactly one tool"},
		{[]string{"tools", "extra", "--spec", "x", "--all-operations"}, `tools: unexpected argument "extra"`},
		{[]string{"help", "tols"}, `unknown command "tols"; did you mean tools?`},
		{[]string{"completion"}, "completion: name a shell"},
		{[]string{"completion", "bsh"}, `completion: no script for shell "bsh"; did you mean bash?`},
		{[]string{"version", "now"}, `version: unexpected argument "now"`},
		{[]string{"tools", "--spec", "x", "--all-operations", "--stats", "--tag", "pet"}, "--tag and --path preview tools"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			err := run(t.Context(), tt.args, nil, &out, &errb)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("run(%q) = %v, want an error containing %q", tt.args, err, tt.want)
			}
			if code := exitCode(err); code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			if out.Len() != 0 {
				t.Errorf("stdout got %q", out.String())
			}
		})
	}
	if code := exitCode(errors.New("validation failed")); code != 1 {
		t.Errorf("exitCode(other error) = %d, want 1", code)
	}
}

// TestUsageErrorExitStatus runs the real binary: an unknown flag exits 2
// with the suggestion on stderr and nothing on stdout.
func TestUsageErrorExitStatus(t *testing.T) {
	cmd := exec.Command(os.Args[0], "serve", "--upstrem", "http://127.0.0.1:1")
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit: %v, want status 2", err)
	}
	if !strings.Contains(errb.String(), "did you mean --upstream?") || out.Len() != 0 {
		t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
	}
}

func TestNearest(t *testing.T) {
	cands := []string{"upstream", "upstream-token", "spec", "spec-header", "whitelist", "json", "listen"}
	for in, want := range map[string]string{
		"upstrem": "upstream", "upstraem": "upstream", "upstream-tokn": "upstream-token", "sepc": "spec",
		"whitelsit": "whitelist", "jsn": "json", "upst": "upstream", "zzzzzz": "", "x": "",
	} {
		if got := nearest(in, cands); got != want {
			t.Errorf("nearest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestVersionCommand checks version's report.
func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out bytes.Buffer
		if err := run(t.Context(), args, nil, &out, &out); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		first, _, _ := strings.Cut(text, "\n")
		if first != "mcpbridge "+readBuildVersion().Version || readBuildVersion().Version == "" {
			t.Errorf("first line %q", first)
		}
		for _, w := range []string{"module:    github.com/mcpbridge/mcpbridge", "revision:  ", "go:        " + runtime.Version()} {
			if !strings.Contains(text, w) {
				t.Errorf("%v lacks %q:\n%s", args, w, text)
			}
		}
	}
}

// TestCompletionScripts checks the scripts: the bash one is valid bash and
// completes commands, flags and flag values when sourced; all three name
// every command and each command's flags.
func TestCompletionScripts(t *testing.T) {
	scripts := map[string]string{}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		var out bytes.Buffer
		if err := run(t.Context(), []string{"completion", sh}, nil, &out, &out); err != nil {
			t.Fatalf("completion %s: %v", sh, err)
		}
		scripts[sh] = out.String()
		for _, w := range []string{"serve", "tools", "validate", "completion", "upstream", "listen", "max-problems", "verbose", "command"} {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s script lacks %q", sh, w)
			}
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	file := filepath.Join(t.TempDir(), "mcpbridge.bash")
	if err := os.WriteFile(file, []byte(scripts["bash"]), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bash, "-n", file).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
	complete := func(words ...string) []string {
		t.Helper()
		var q []string
		for _, w := range words {
			q = append(q, "'"+w+"'")
		}
		script := "source " + file + "\nCOMP_WORDS=(" + strings.Join(q, " ") + ")\nCOMP_CWORD=" +
			string(rune('0'+len(words)-1)) + "\n_mcpbridge\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command(bash, "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("completing %q: %v\n%s", words, err, out)
		}
		return strings.Fields(string(out))
	}
	for _, tt := range []struct {
		words []string
		want  []string
	}{
		{[]string{"mcpbridge", "se"}, []string{"serve"}},
		{[]string{"mcpbridge", "serve", "--upst"}, []string{"--upstream", "--upstream-token", "--upstream-header", "--upstream-ca-file", "--upstream-client-cert", "--upstream-client-key"}},
		{[]string{"mcpbridge", "tools", "--ve"}, []string{"--verbose"}},
		{[]string{"mcpbridge", "serve", "--ve"}, nil}, // --verbose is tools' own
		{[]string{"mcpbridge", "serve", "--transport", ""}, []string{"stdio", "http"}},
		{[]string{"mcpbridge", "completion", ""}, []string{"bash", "zsh", "fish"}},
		{[]string{"mcpbridge", "help", "va"}, []string{"validate"}},
	} {
		got := complete(tt.words...)
		if len(got) == 0 {
			got = nil
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("completing %q (-want +got):\n%s", tt.words, diff)
		}
	}
	for sh, check := range map[string][]string{"zsh": {"zsh", "-n"}, "fish": {"fish", "--no-execute"}} {
		if path, err := exec.LookPath(check[0]); err == nil {
			f := filepath.Join(t.TempDir(), "mcpbridge."+sh)
			os.WriteFile(f, []byte(scripts[sh]), 0o600)
			if out, err := exec.Command(path, check[1], f).CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v\n%s", check[0], check[1], err, out)
			}
		}
	}
}

// TestToolsTable checks the tools table and the --tag / --path previews,
// with --all-operations and with a whitelist.
func TestToolsTable(t *testing.T) {
	const spec = "../../testdata/specs/petstore.3.0.yaml"
	tools := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(t.Context(), append([]string{"tools", "--spec", spec}, args...), nil, &out, &errb); err != nil {
			t.Fatalf("tools %q: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	all := tools("--all-operations")
	header, _, _ := strings.Cut(all, "\n")
	if strings.Join(strings.Fields(header), " ") != "NAME METHOD PATH OPERATION ID TAGS HINTS DESCRIPTION" {
		t.Errorf("header %q", header)
	}
	row := lineWith(all, "getPetById ")
	if f := strings.Fields(row); len(f) < 6 || f[1] != "GET" || f[2] != "/pet/{petId}" || f[3] != "getPetById" || f[4] != "pet" || f[5] != "read-only" {
		t.Errorf("getPetById row %q", row)
	}
	for _, tt := range []struct {
		args      []string
		want, not []string
	}{
		{[]string{"--all-operations", "--tag", "store"}, []string{"getInventory", "placeOrder", "deleteOrder", "4 of 20 tools selected by --tag store"}, []string{"getPetById", "createUser", "ping"}},
		{[]string{"--all-operations", "--tag", "STORE", "--tag", "user"}, []string{"getInventory", "createUser"}, []string{"getPetById"}},
		{[]string{"--all-operations", "--path", "/user/"}, []string{"getUserByName", "loginUser"}, []string{"createUser ", "getInventory"}},
		{[]string{"--whitelist", "../../whitelist.yaml", "--tag", "pet"}, []string{"findPetsByStatus"}, []string{"getInventory"}},
	} {
		got := tools(tt.args...)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("tools %q lacks %q:\n%s", tt.args, w, got)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(got, n) {
				t.Errorf("tools %q shows %q:\n%s", tt.args, n, got)
			}
		}
	}

	// --json stays the tools/list array (filtered); --verbose wraps each
	// element, unchanged, with its operation.
	var plain []json.RawMessage
	if err := json.Unmarshal([]byte(tools("--all-operations", "--path", "/store", "--json")), &plain); err != nil {
		t.Fatal(err)
	}
	var verbose []struct {
		Tool      json.RawMessage `json:"tool"`
		Operation *struct {
			Method, Path, OperationID string
			Tags                      []string
		} `json:"operation"`
	}
	if err := json.Unmarshal([]byte(tools("--all-operations", "--path", "/store", "--json", "--verbose")), &verbose); err != nil {
		t.Fatal(err)
	}
	if len(plain) != 4 || len(verbose) != 4 {
		t.Fatalf("%d plain and %d verbose tools, want 4 and 4", len(plain), len(verbose))
	}
	for i := range plain {
		var a, b any
		json.Unmarshal(plain[i], &a)
		json.Unmarshal(verbose[i].Tool, &b)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("verbose tool %d differs from tools/list (-plain +verbose):\n%s", i, diff)
		}
		op := verbose[i].Operation
		if op == nil || !strings.HasPrefix(op.Path, "/store") || op.Method == "" || op.OperationID == "" || len(op.Tags) != 1 || op.Tags[0] != "store" {
			t.Errorf("verbose tool %d operation %+v", i, op)
		}
	}
	var withPing []struct {
		Tool      struct{ Name string } `json:"tool"`
		Operation *json.RawMessage      `json:"operation"`
	}
	json.Unmarshal([]byte(tools("--all-operations", "--json", "--verbose")), &withPing)
	for _, v := range withPing {
		if (v.Tool.Name == "ping") != (v.Operation == nil) {
			t.Errorf("tool %s: operation %v (only ping has none)", v.Tool.Name, v.Operation)
		}
	}
}

func lineWith(text, sub string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestValidateBoundedReport checks that a whitelist with many problems
// gives a report grouped by kind, each group bounded, and that a huge
// problem is cut.
func TestValidateBoundedReport(t *testing.T) {
	var wl strings.Builder
	wl.WriteString("tools:\n  - operationId: " + strings.Repeat("z", 64<<10) + "\n")
	for i := range 40 {
		wl.WriteString("  - operationId: nope" + strings.Repeat("x", i) + "\n")
	}
	for i := range 5 {
		wl.WriteString("  - method: GET\n    path: /absent" + strings.Repeat("y", i) + "\n")
	}
	p := filepath.Join(t.TempDir(), "whitelist.yaml")
	if err := os.WriteFile(p, []byte(wl.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run(t.Context(), []string{"validate", "--spec", "testdata/e2e.yaml", "--whitelist", p, "--max-problems", "3"}, nil, &out, &errb)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "46 problems") {
		t.Fatalf("validate: %v (exit %d), want a failure with 46 problems", err, exitCode(err))
	}
	text := out.String()
	for _, w := range []string{
		"FAIL\n",
		`errors (operationId "…" matches no operation): 41` + "\n",
		"  ... and 38 more\n",
		"errors (METHOD /… matches no operation): 5\n",
		"  ... and 2 more\n",
		"bytes in all)",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("report lacks %q:\n%s", w, text)
		}
	}
	if n := strings.Count(text, "\n  - "); n != 6 {
		t.Errorf("%d problems listed, want 6 (3 per kind)", n)
	}
	if len(text) > 4<<10 {
		t.Errorf("report is %d bytes", len(text))
	}
}

// TestConfigFileRelativePaths checks that relative paths in a config file
// are read from the file's directory, while those of flags and the
// environment stay relative to the working directory.
func TestConfigFileRelativePaths(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for src, dst := range map[string]string{"testdata/e2e.yaml": "api.yaml", "testdata/e2e-whitelist.yaml": "sub/wl.yaml"} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "mcpbridge.yaml")
	body := "spec: api.yaml\nwhitelist: sub/wl.yaml\ncache-dir: cache\nupstream-ca-file: /etc/ssl/ca.pem\napi-key-file: keys.txt\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func(environ []string, args ...string) *Config {
		t.Helper()
		fs := flagSet("serve")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		cfg, err := loadConfig(fs, environ)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := load(nil, "--config", conf)
	want := [][2]string{
		{cfg.Spec, filepath.Join(dir, "api.yaml")},
		{cfg.Whitelist, filepath.Join(dir, "sub/wl.yaml")},
		{cfg.CacheDir, filepath.Join(dir, "cache")},
		{cfg.UpstreamCAFile, "/etc/ssl/ca.pem"},
		{cfg.APIKeyFile, filepath.Join(dir, "keys.txt")},
	}
	for _, w := range want {
		if w[0] != w[1] {
			t.Errorf("from the config file: %q, want %q", w[0], w[1])
		}
	}
	cfg = load([]string{"MCPBRIDGE_CACHE_DIR=envcache"}, "--config", conf, "--whitelist", "testdata/e2e-whitelist.yaml")
	if cfg.Whitelist != "testdata/e2e-whitelist.yaml" || cfg.CacheDir != "envcache" || cfg.Spec != filepath.Join(dir, "api.yaml") {
		t.Errorf("flag and environment paths moved: whitelist %q, cache-dir %q, spec %q", cfg.Whitelist, cfg.CacheDir, cfg.Spec)
	}
	// A URL spec in a config file stays a URL.
	if err := os.WriteFile(conf, []byte("spec: https://api.example.com/openapi.json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg := load(nil, "--config", conf); cfg.Spec != "https://api.example.com/openapi.json" {
		t.Errorf("URL spec became %q", cfg.Spec)
	}

	// End to end, from a working directory that is not the file's.
	if err := os.WriteFile(conf, []byte("spec: api.yaml\nwhitelist: sub/wl.yaml\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"tools", "--config", conf, "--no-cache"}, nil, &out, &errb); err != nil {
		t.Fatalf("tools --config: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "getItem") {
		t.Errorf("tools --config listed:\n%s", out.String())
	}
}

// TestDemoNote checks that the demo says on stderr which tools it serves
// and how to try them, and writes nothing but protocol on stdout.
func TestDemoNote(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"demo", "--log-level", "warn"}, strings.NewReader(""), &out, &errb); err != nil {
		t.Fatalf("demo: %v\n%s", err, errb.String())
	}
	for _, w := range []string{"MCP tools: getAccount, listNotes, createNote, getNote, delete_note, ping", "client call listNotes", "@modelcontextprotocol/inspector"} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("demo's stderr lacks %q:\n%s", w, errb.String())
		}
	}
	if out.Len() != 0 {
		t.Errorf("demo wrote %q to stdout without a client", out.String())
	}
}

// TestHTTPSettingsOverStdioWarn: an HTTP-only setting given to a stdio
// server (--rest, a key from the environment) has no effect; one WARN
// names them (never their values), and none is written without them.
func TestHTTPSettingsOverStdioWarn(t *testing.T) {
	t.Setenv("MCPBRIDGE_API_KEYS", "secret-key-value")
	var out, errb bytes.Buffer
	if err := run(t.Context(), []string{"demo", "--log-level", "warn", "--rest"}, strings.NewReader(""), &out, &errb); err != nil {
		t.Fatalf("demo: %v\n%s", err, errb.String())
	}
	log := errb.String()
	if !strings.Contains(log, "settings ignored: they apply to --transport http only") || !strings.Contains(log, `"--rest"`) || !strings.Contains(log, `"--api-key"`) {
		t.Errorf("no warning naming --rest and --api-key:\n%s", log)
	}
	if strings.Contains(log, "secret-key-value") {
		t.Errorf("the warning holds the key:\n%s", log)
	}
	os.Unsetenv("MCPBRIDGE_API_KEYS")
	errb.Reset()
	if err := run(t.Context(), []string{"demo", "--log-level", "warn"}, strings.NewReader(""), &out, &errb); err != nil {
		t.Fatalf("demo: %v", err)
	}
	if strings.Contains(errb.String(), "settings ignored") {
		t.Errorf("warned without HTTP settings:\n%s", errb.String())
	}
}

// TestDemoNoteAnyPort: with --listen on port 0 the port is chosen after
// the note is written; the note says where to read it rather than giving
// a URL at port 0.
func TestDemoNoteAnyPort(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	_ = run(ctx, []string{"demo", "--transport", "http", "--listen", "127.0.0.1:0", "--no-auth", "--log-level", "info"}, strings.NewReader(""), &out, &errb)
	log := errb.String()
	if strings.Contains(log, "127.0.0.1:0/mcp") || !strings.Contains(log, "http://127.0.0.1:PORT/mcp") || !strings.Contains(log, `the port the "listening" log line gives`) {
		t.Errorf("demo note:\n%s", log)
	}
}
