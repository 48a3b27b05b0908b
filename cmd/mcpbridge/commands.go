package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// errToolFailed is returned (exit status 1) when a call's result is an
// error; the result itself has been printed.
var errToolFailed = errors.New("the tool returned an error result")

// callArgs parses --args: a JSON object, "" meaning {}.
func callArgs(s string) (json.RawMessage, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}"), nil
	}
	if !strings.HasPrefix(s, "{") || !json.Valid([]byte(s)) {
		return nil, errors.New("--args must be a JSON object, e.g. --args '{\"petId\": 1}'")
	}
	return json.RawMessage(s), nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// call performs one tool call through the same runtime and middleware
// chain as serve, without an MCP client, and prints the result as JSON.
func (a *app) call(ctx context.Context, name string) error {
	args, err := callArgs(a.cfg.Args)
	if err != nil {
		return err
	}
	bt, err := a.build(ctx, false, !a.cfg.NoCache)
	if err != nil {
		return err
	}
	rt, _, err := a.newRuntime(bt)
	if err != nil {
		return err
	}
	out, err := rt.Call(ctx, &bridge.Call{Tool: name, Args: args, Caller: bridge.Local, Transport: "cli"})
	if errors.Is(err, bridge.ErrUnknownTool) {
		return fmt.Errorf("no tool %q%s (mcpbridge tools lists them)", name, whitelist.Suggest(name, catalogToolNames(rt.Catalog())))
	}
	if err != nil {
		return err
	}
	if err := printJSON(a.stdout, out.Result); err != nil {
		return err
	}
	if out.Result.IsError {
		return errToolFailed
	}
	return nil
}

func catalogToolNames(c *bridge.Catalog) []string {
	var names []string
	for _, t := range c.Tools() {
		names = append(names, t.Name())
	}
	return names
}

// maxReport bounds each group of a report (tools --stats repairs).
const maxReport = 10

// maxProblemBytes bounds one problem line of a validate report: a spec
// error may quote a whole document.
const maxProblemBytes = 400

// validate checks the spec and the whitelist as serve would, and prints a
// bounded report grouped by kind: each kind lists its first --max-problems
// problems, then "... and K more". It fails (exit status 1) on anything
// that would stop serve and, with --strict, on warnings and skipped
// operations.
func (a *app) validate(ctx context.Context) error {
	a.verify = true
	if a.cfg.Whitelist == "" {
		a.cfg.AllOperations = true
	}
	n := a.cfg.MaxProblems
	if n <= 0 {
		n = maxReport
	}
	w := a.stdout
	bt, err := a.build(ctx, false, false)
	if err != nil {
		fmt.Fprintln(w, "FAIL")
		problems := splitProblems(err.Error())
		byKind, kinds := groupProblems(problems, problemKind)
		for _, k := range kinds {
			printGroup(w, "errors ("+k+")", byKind[k], n)
		}
		return fmt.Errorf("validation failed: %d %s", len(problems), plural(len(problems), "problem", "problems"))
	}
	fmt.Fprintf(w, "spec:       OK (OpenAPI %s, %d operations selected)\n", bt.spec.Version, bt.ops)
	if a.cfg.Whitelist != "" {
		fmt.Fprintf(w, "whitelist:  OK (%s)\n", a.cfg.Whitelist)
	}
	fmt.Fprintf(w, "tools:      %d\n", bt.cat.Len())
	printGroup(w, "warnings", bt.spec.Warnings, n)
	var skipped []string
	for _, sk := range bt.cat.Skipped() {
		skipped = append(skipped, sk.Operation+": "+sk.Reason)
	}
	byKind, kinds := groupProblems(skipped, func(p string) string {
		_, reason, _ := strings.Cut(p, ": ")
		return reasonKind(reason)
	})
	for _, k := range kinds {
		printGroup(w, "skipped ("+k+")", byKind[k], n)
	}
	if len(skipped) > 0 {
		fmt.Fprintln(w, "hint:       skipped operations are not exposed; leave them out of the whitelist or fix the spec")
	}
	return nil
}

// splitProblems is one problem per line of an error (errors.Join puts one
// per line), blank lines dropped.
func splitProblems(msg string) []string {
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// groupProblems groups problems by kind, kinds sorted.
func groupProblems(problems []string, kind func(string) string) (map[string][]string, []string) {
	by := map[string][]string{}
	var kinds []string
	for _, p := range problems {
		k := kind(p)
		if _, seen := by[k]; !seen {
			kinds = append(kinds, k)
		}
		by[k] = append(by[k], p)
	}
	sort.Strings(kinds)
	return by, kinds
}

// problemLocation is the "FILE: line N: " a whitelist problem starts with.
var problemLocation = regexp.MustCompile(`^(?:[^:]*: )?line \d+: `)

// quoted matches a double-quoted string in a message.
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// problemKind is a problem without its place and its particulars:
// `line 3: operationId "getItme" matches no operation; did you mean
// "getItem"?` is of kind `operationId "…" matches no operation`, and
// `line 5: GET /x matches no operation` of kind `METHOD /… matches no
// operation`.
func problemKind(p string) string {
	p = problemLocation.ReplaceAllString(p, "")
	p, _, _ = strings.Cut(p, "; ")
	p = quoted.ReplaceAllString(p, `"…"`)
	f := strings.Fields(p)
	for i, w := range f {
		switch {
		case strings.HasPrefix(w, "/"):
			f[i] = "/…" // a path
		case w == "GET" || w == "PUT" || w == "POST" || w == "DELETE" || w == "PATCH" || w == "HEAD" || w == "OPTIONS" || w == "TRACE":
			f[i] = "METHOD"
		}
	}
	if len(f) > 8 {
		f = append(f[:8], "…")
	}
	return strings.Join(f, " ")
}

// reasonKind groups skip reasons by their first words.
func reasonKind(r string) string {
	f := strings.Fields(r)
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Trim(strings.Join(f, " "), ":")
}

// printGroup prints a titled group: its first n items, one line each and
// bounded, then how many more there are.
func printGroup(w io.Writer, title string, items []string, n int) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: %d\n", title, len(items))
	for i, it := range items {
		if i == n {
			fmt.Fprintf(w, "  ... and %d more\n", len(items)-n)
			break
		}
		fmt.Fprintf(w, "  - %s\n", boundLine(it))
	}
}

// boundLine is s on one line, at most maxProblemBytes long.
func boundLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxProblemBytes {
		return s
	}
	cut := s[:maxProblemBytes]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return fmt.Sprintf("%s… (%d bytes in all)", cut, len(s))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// initWhitelist prints a commented whitelist.yaml for the spec: every
// operation grouped by its first tag, the read-only ones enabled and the
// others commented out.
func (a *app) initWhitelist(ctx context.Context) error {
	data, loc, err := specloader.Read(ctx, a.cfg.Spec, a.loaderOptions())
	if err != nil {
		return err
	}
	res, err := specloader.LoadData(ctx, data, loc, a.loaderOptions())
	if err != nil {
		return err
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		return err
	}
	// An operationId entry selects every operation that carries it: where
	// the spec repeats one (GET and DELETE of a path both "thing"), the
	// enabled entry of the read-only one would serve the others too.
	holders := map[string]int{}
	for _, op := range ops {
		holders[op.Op.OperationID]++
	}
	groups := map[string][]whitelist.Operation{}
	for _, op := range ops {
		tag := "(untagged)"
		if len(op.Op.Tags) > 0 {
			tag = op.Op.Tags[0]
		}
		groups[tag] = append(groups[tag], op)
	}
	tags := make([]string, 0, len(groups))
	for t := range groups {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	var b bytes.Buffer
	title := ""
	if res.Doc.Info != nil {
		title = res.Doc.Info.Title
	}
	fmt.Fprintf(&b, "# whitelist.yaml for %s (%s): which operations become MCP tools.\n", oneLine(title), specloader.RedactURL(a.cfg.Spec))
	fmt.Fprintf(&b, "# Generated by mcpbridge init: read-only operations (GET, HEAD) are enabled,\n")
	fmt.Fprintf(&b, "# every other one is commented out. Uncomment what the agent may do.\n")
	fmt.Fprintf(&b, "# Check it with: mcpbridge validate --spec %s --whitelist whitelist.yaml\n\nversion: 1\n\ntools:\n", specloader.RedactURL(a.cfg.Spec))
	enabled := 0
	for _, tag := range tags {
		fmt.Fprintf(&b, "\n  # %s\n", oneLine(tag)) // the spec's text stays inside the comment
		for _, op := range groups[tag] {
			entry := "- method: " + op.Method + "\n    path: " + yamlString(op.Path)
			if op.Op.OperationID != "" && holders[op.Op.OperationID] == 1 {
				entry = "- operationId: " + yamlString(op.Op.OperationID)
			}
			summary := oneLine(op.Op.Summary)
			comment := "  # " + op.Method + " " + strings.Join(strings.Fields(op.Path), " ")
			if summary != "" {
				comment += ": " + summary
			}
			if op.Method == http.MethodGet || op.Method == http.MethodHead {
				enabled++
				fmt.Fprintf(&b, "  %s%s\n", entry, comment)
			} else {
				// "# " at the entry's column on every line, so that removing
				// it (an editor's toggle) leaves the entry as if enabled.
				fmt.Fprintf(&b, "  # %s%s\n", strings.ReplaceAll(entry, "\n  ", "\n  # "), comment)
			}
		}
	}
	if enabled == 0 {
		fmt.Fprintf(&b, "\n  # No read-only operation: uncomment at least one entry above.\n")
	}
	_, err = a.stdout.Write(b.Bytes())
	return err
}

// yamlString quotes s when YAML would read it as something else, or
// would read a line break in it as the end of the entry.
func yamlString(s string) string {
	if s == "" || strings.ContainsAny(s, ":#{}[],&*!|>'\"%@`") || strings.TrimSpace(s) != s ||
		strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }) {
		q, _ := json.Marshal(s) // a JSON string is a valid YAML double-quoted string
		return string(q)
	}
	return s
}

// clientOptions are the flags of "mcpbridge client".
type clientOptions struct {
	command, url, args *string
	headers            *[]string
}

// clientFlags declares the flags of "mcpbridge client".
func clientFlags() (*pflag.FlagSet, clientOptions) {
	fs := pflag.NewFlagSet("client", pflag.ContinueOnError)
	fs.SortFlags = false
	return fs, clientOptions{
		command: fs.String("command", "", `server command line, split on spaces (stdio), e.g. "mcpbridge demo"`),
		url:     fs.String("url", "", "server URL (streamable HTTP), e.g. http://127.0.0.1:8080/mcp"),
		headers: fs.StringArray("header", nil, `HTTP header sent with every request, "Name: value" (repeatable)`),
		args:    fs.String("args", "", "call: the arguments as a JSON object"),
	}
}

// runClient is "mcpbridge client": a small MCP client for smoke tests of
// any server, over stdio (--command) or streamable HTTP (--url).
func runClient(ctx context.Context, args []string, stdout, _ io.Writer) (err error) {
	fs, opt := clientFlags()
	c, _ := lookupCommand("client")
	if err := parseFlags(c, fs, args, stdout); err != nil {
		if errors.Is(err, errHelpShown) {
			return nil
		}
		return err
	}
	command, url, headers, argsJSON := opt.command, opt.url, opt.headers, opt.args
	if *url != "" {
		defer func() { err = maskClientURL(err, *url) }()
	}
	rest := fs.Args()
	if len(rest) == 0 || (rest[0] != "list" && rest[0] != "call") || (rest[0] == "call") != (len(rest) == 2) || len(rest) > 2 {
		return usageErrorf(`client: want "list" or "call TOOL"`)
	}
	if (*command == "") == (*url == "") {
		return usageErrorf("client: give exactly one of --command and --url")
	}
	var tr mcp.Transport
	if *command != "" {
		f := strings.Fields(*command)
		if len(f) == 0 {
			return usageErrorf("client: --command is empty")
		}
		// The server's stdin and stdout as an IOTransport without go-sdk's
		// 16 MiB message cap (mcp.CommandTransport has no way to lift it),
		// so that a big API's tools/list can be read.
		cmd := exec.CommandContext(ctx, f[0], f[1:]...)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return fmt.Errorf("client: %w", err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return fmt.Errorf("client: %w", err)
		}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("client: starting %s: %w", f[0], err)
		}
		defer stopServer(cmd, stdin)
		tr = &mcp.IOTransport{Reader: stdout, Writer: stdin, MaxLineLength: -1}
	} else {
		h := http.Header{}
		for k, v := range parseHeaders(*headers) {
			h.Set(k, v)
		}
		tr = &mcp.StreamableClientTransport{Endpoint: *url, HTTPClient: &http.Client{Transport: headerTransport{h, http.DefaultTransport}}}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpbridge-client", Version: version}, nil).Connect(ctx, tr, nil)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer cs.Close()
	if rest[0] == "list" {
		tw := []*mcp.Tool{}
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				return fmt.Errorf("listing tools: %w", err)
			}
			tw = append(tw, t)
		}
		for _, t := range tw {
			fmt.Fprintf(stdout, "%s\t%s\n", t.Name, oneLine(t.Title))
		}
		return nil
	}
	raw, err := callArgs(*argsJSON)
	if err != nil {
		return err
	}
	var argv map[string]any
	if err := json.Unmarshal(raw, &argv); err != nil {
		return fmt.Errorf("--args: %w", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: rest[1], Arguments: argv})
	if err != nil {
		return fmt.Errorf("calling %s: %w", rest[1], err)
	}
	if err := printJSON(stdout, res); err != nil {
		return err
	}
	if res.IsError {
		return errToolFailed
	}
	return nil
}

// maskClientURL masks the credentials of the client's --url (user
// information, query values) where err quotes it: net/http's errors quote
// the request URL with only a password masked.
func maskClientURL(err error, raw string) error {
	if err == nil {
		return nil
	}
	u, perr := neturl.Parse(raw)
	if perr != nil || (u.User == nil && u.RawQuery == "") {
		return err
	}
	msg := err.Error()
	masked := specloader.RedactURL(raw)
	forms := []string{raw, u.String()}
	if _, ok := u.User.Password(); ok {
		forms = append(forms, strings.Replace(u.String(), u.User.String()+"@", u.User.Username()+":***@", 1))
	}
	for _, f := range forms {
		msg = strings.ReplaceAll(msg, f, masked)
	}
	if msg == err.Error() {
		return err
	}
	return maskedError{msg: msg, err: err}
}

// maskedError is err with its text masked; errors.Is and As still see err.
type maskedError struct {
	msg string
	err error
}

func (e maskedError) Error() string { return e.msg }
func (e maskedError) Unwrap() error { return e.err }

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	h    http.Header
	next http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.next.RoundTrip(r)
}

// stopServer ends a server the client started: its stdin is closed (an
// MCP stdio server then exits), and it is killed if it has not exited
// within 5 seconds.
func stopServer(cmd *exec.Cmd, stdin io.Closer) {
	stdin.Close() //nolint:errcheck // the server may be gone already
	done := make(chan struct{})
	go func() {
		cmd.Wait() //nolint:errcheck // its exit status is not the client's result
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill() //nolint:errcheck // it may have exited meanwhile
		<-done
	}
}
