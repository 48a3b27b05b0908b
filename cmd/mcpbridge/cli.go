package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/mcpbridge/mcpbridge/bridge/schema"
)

// command is one mcpbridge command as help, suggestions and completion
// present it.
type command struct {
	name     string
	synopsis string   // what follows "mcpbridge NAME" in the usage line
	summary  string   // one line for the command list
	about    string   // a paragraph for the command's own help
	sections []string // flag sections shown, in order (see sectionTitle)
	omit     []string // flags of those sections the command has no use for
}

// Flag sections: every flag belongs to one (flagSection), and a command's
// help lists the sections it uses.
const (
	secOwn   = "own"   // the command's own flags (ownerOf)
	secSpec  = "spec"  // where the spec and the whitelist come from
	secTools = "tools" // how operations become tools (the default)
	secCalls = "calls" // upstream calls: limits, retries, quotas, tracing
	secServe = "serve" // serving: stdio limits, HTTP, inbound auth, reloads
	secLog   = "log"   // logging
)

// sectionTitle is the heading of a flag section in help.
func sectionTitle(sec string) string {
	switch sec {
	case secSpec:
		return "Spec and whitelist"
	case secTools:
		return "Tools: how operations become tools, upstream and credentials"
	case secCalls:
		return "Calls: timeouts, retries, limits, quotas, tracing"
	case secServe:
		return "Serving: transports, HTTP, inbound auth, reloads"
	case secLog:
		return "Logging"
	}
	return "Flags"
}

// ownerOf is the command a flag belongs to alone ("" for serve's shared
// flags); its help shows it first.
func ownerOf(name string) string {
	switch name {
	case "args":
		return "call"
	case "json", "stats", "verbose", "tag", "path":
		return "tools"
	case "max-problems":
		return "validate"
	}
	return ""
}

// flagSection is the section of a serve flag; a flag no list names is a
// tool-building one, so that a flag added later shows up in serve, tools
// and call help without touching this file.
func flagSection(name string) string {
	if ownerOf(name) != "" {
		return secOwn
	}
	switch name {
	case "config", "spec", "spec-header", "spec-timeout", "spec-allow-origin", "spec-max-bytes", "strict",
		"whitelist", "all-operations", "server-variables":
		return secSpec
	case "timeout", "retries", "max-response-bytes", "truncate", "max-argument-bytes", "max-url-bytes", "max-concurrency", "max-queue",
		"log-arguments", "quota", "quota-fail", "redis-url", "redis-prefix", "otel":
		return secCalls
	case "spec-refresh", "metrics-listen", "rest", "max-message-bytes", "max-json-depth", "read-timeout", "idle-timeout",
		"max-sessions", "max-sessions-per-identity", "max-sse-streams", "max-sse-streams-per-identity", "transport",
		"listen", "stateful", "session-timeout", "api-key", "api-key-file", "allow-x-api-key", "allowed-origin", "allowed-host", "trusted-proxy",
		"jwks-url", "jwt-issuer", "jwt-audience", "resource-url", "authorization-server", "no-auth", "max-body-bytes",
		"keepalive", "shutdown-timeout", "shutdown-delay":
		return secServe
	case "log-level", "log-format":
		return secLog
	}
	return secTools
}

// commands lists every command, in the order help shows them.
func commands() []command {
	return []command{
		{name: "demo", synopsis: "[--transport stdio|http] [flags]", summary: "bridge the embedded example API (start here)",
			about:    "Starts a small in-memory notes API on a free loopback port and serves it through the bridge with its built-in spec and whitelist, over stdio (default) or HTTP. It says on stderr which tools it serves and how to try them.",
			sections: []string{secSpec, secTools, secCalls, secServe, secLog},
			omit: []string{"spec", "spec-header", "spec-timeout", "spec-allow-origin", "spec-max-bytes", "server-variables", "spec-refresh",
				"upstream", "upstream-token", "upstream-header", "upstream-ca-file", "upstream-client-cert", "upstream-client-key", "no-cache", "cache-dir"}},
		{name: "serve", synopsis: "--spec PATH|URL [--upstream URL] [--whitelist PATH | --all-operations] [--config PATH] [flags]",
			summary:  "serve the selected operations as MCP tools (stdio, or --transport http)",
			about:    "Loads the OpenAPI document, keeps the operations the whitelist selects, and serves them as MCP tools over stdio (default; stdout carries only the protocol) or streamable HTTP and legacy SSE (--transport http).",
			sections: []string{secSpec, secTools, secCalls, secServe, secLog}},
		{name: "tools", synopsis: "--spec PATH|URL [--whitelist PATH | --all-operations] [--tag TAG] [--path PREFIX] [--json [--verbose] | --stats] [flags]",
			summary:  "print the tools serve would expose",
			about:    "Prints the tools serve would expose: a table (name, method, path, operationId, tags, description), --json the exact tools array of tools/list, --json --verbose each tool with its operation, --stats sizes and skipped operations. --tag and --path preview a selection before writing it into the whitelist.",
			sections: []string{secOwn, secSpec, secTools, secLog}},
		{name: "call", synopsis: "TOOL [--args JSON] --spec PATH|URL [--whitelist PATH | --all-operations] [flags]",
			summary:  "call one tool without an MCP client",
			about:    "Calls one tool through the same call path as serve (validation, limits, quotas, sanitizer) and prints the CallToolResult as JSON. The exit status is 1 when the result is an error.",
			sections: []string{secOwn, secSpec, secTools, secCalls, secLog}},
		{name: "validate", synopsis: "--spec PATH|URL [--whitelist PATH] [--strict] [--max-problems N] [flags]",
			summary:  "check the spec and the whitelist as serve would",
			about:    "Checks the spec and the whitelist as serve would and prints a report grouped by kind of problem, each group bounded by --max-problems. Exit status: 0 when serve would start, 1 when it would not (with --strict, also on warnings and skipped operations), 2 for a command line it does not understand.",
			sections: []string{secOwn, secSpec, secTools, secLog}},
		{name: "init", synopsis: "--spec PATH|URL > whitelist.yaml",
			summary:  "write a starting whitelist.yaml for a spec",
			about:    "Prints a commented whitelist.yaml: every operation grouped by its first tag, the read-only ones (GET, HEAD) enabled and the others commented out.",
			sections: []string{secSpec, secLog}, omit: []string{"strict", "whitelist", "all-operations", "server-variables"}},
		{name: "client", synopsis: `list|call [TOOL] (--command "CMD ARGS" | --url URL) [--args JSON] [--header "Name: value"]`,
			summary:  "a small MCP client for smoke tests of any server",
			about:    "Connects to an MCP server over stdio (--command) or streamable HTTP (--url), then lists its tools or calls one.",
			sections: []string{secOwn}},
		{name: "completion", synopsis: "bash|zsh|fish", summary: "print a shell completion script",
			about: `Prints a completion script for the commands and their flags.
  bash:  source <(mcpbridge completion bash)        # or save it in /etc/bash_completion.d/mcpbridge
  zsh:   mcpbridge completion zsh > "${fpath[1]}/_mcpbridge"
  fish:  mcpbridge completion fish > ~/.config/fish/completions/mcpbridge.fish`},
		{name: "version", summary: "print the version, VCS revision and Go version"},
		{name: "help", synopsis: "[COMMAND]", summary: "print the usage of mcpbridge or of one command"},
	}
}

func lookupCommand(name string) (command, bool) {
	i := slices.IndexFunc(commands(), func(c command) bool { return c.name == name })
	if i < 0 {
		return command{}, false
	}
	return commands()[i], true
}

func commandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// usageError is a command line the program does not understand: an
// unknown command or flag, a missing or extra argument. main exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitCode is the process status for run's error: 0 for none, 2 for a
// command line not understood, 1 for anything else.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

// errHelpShown reports that --help printed the help: run returns nil.
var errHelpShown = errors.New("help shown")

// printUsage writes the program's usage: the commands.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "mcpbridge serves the operations of a REST API's OpenAPI document as MCP tools.\n\nUsage: mcpbridge COMMAND [flags]\n\nCommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run "mcpbridge COMMAND --help" (or "mcpbridge help COMMAND") for a command's flags.
Every flag has an environment variable MCPBRIDGE_<FLAG> (dashes become
underscores; repeatable flags take a plural, comma-separated variable, e.g.
MCPBRIDGE_API_KEYS) and a key of the same name in the --config YAML file,
whose relative paths are read from the file's directory.
`)
}

// printCommandHelp writes one command's usage and the flags it uses, by
// section. fs is the command's flag set (nil for commands without flags).
func printCommandHelp(w io.Writer, c command, fs *pflag.FlagSet) {
	line := "Usage: mcpbridge " + c.name
	if c.synopsis != "" {
		line += " " + c.synopsis
	}
	fmt.Fprintf(w, "%s\n\n", line)
	if c.about != "" {
		fmt.Fprintf(w, "%s\n", wrap(c.about, 78))
	} else {
		fmt.Fprintf(w, "%s.\n", strings.ToUpper(c.summary[:1])+c.summary[1:])
	}
	if fs == nil {
		return
	}
	for _, sec := range c.sections {
		part := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
		part.SortFlags = false
		for _, f := range commandFlags(c, fs) {
			if flagSectionFor(c.name, f.Name) == sec {
				part.AddFlag(f)
			}
		}
		if !part.HasFlags() {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n%s", sectionTitle(sec), part.FlagUsagesWrapped(100))
	}
	if c.name != "client" {
		fmt.Fprint(w, "\nEvery flag is also MCPBRIDGE_<FLAG> in the environment and a key of the --config file.\n")
	}
}

// flagSectionFor is flagSection, with every flag of client its own.
func flagSectionFor(cmd, name string) string {
	if cmd == "client" {
		return secOwn
	}
	if owner := ownerOf(name); owner != "" && owner != cmd {
		return "" // another command's own flag: not shown
	}
	return flagSection(name)
}

// commandFlags are the flags of fs that command c shows (help) and
// completes: those of its sections, less the ones it omits. Every command
// parses all of serve's flags, so one command line can go from serve to
// tools or call, and one environment serves them all.
func commandFlags(c command, fs *pflag.FlagSet) []*pflag.Flag {
	var out []*pflag.Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && slices.Contains(c.sections, flagSectionFor(c.name, f.Name)) && !slices.Contains(c.omit, f.Name) {
			out = append(out, f)
		}
	})
	return out
}

// wrap breaks text into lines of at most width runes, keeping the lines
// that are already short (indented examples) as they are.
func wrap(text string, width int) string {
	var out []string
	for _, para := range strings.Split(text, "\n") {
		if utf8.RuneCountInString(para) <= width {
			out = append(out, para)
			continue
		}
		var line string
		for _, word := range strings.Fields(para) {
			if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) > width {
				out = append(out, line)
				line = ""
			}
			if line != "" {
				line += " "
			}
			line += word
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// parseFlags parses a command's flags. -h or --help prints the command's
// help to stdout and returns errHelpShown; a flag the command does not
// have is a *usageError naming the closest one.
func parseFlags(c command, fs *pflag.FlagSet, args []string, stdout io.Writer) error {
	fs.Usage = func() {} // help and errors are printed here, not by pflag
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pflag.ErrHelp):
		printCommandHelp(stdout, c, fs)
		return errHelpShown
	}
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedName() != "" && ne.GetSpecifiedShortnames() == "" {
		name := ne.GetSpecifiedName()
		var shown, all []string
		for _, f := range commandFlags(c, fs) {
			shown = append(shown, f.Name)
		}
		fs.VisitAll(func(f *pflag.Flag) { all = append(all, f.Name) })
		hint := nearest(name, shown)
		if hint == "" {
			hint = nearest(name, all)
		}
		msg := fmt.Sprintf("%s: unknown flag --%s", c.name, name)
		if hint != "" {
			msg += "; did you mean --" + hint + "?"
		}
		return usageErrorf("%s (mcpbridge %s --help lists the flags)", msg, c.name)
	}
	return usageErrorf("%s: %v (mcpbridge %s --help lists the flags)", c.name, err, c.name)
}

// unknownCommand is the usage error for a command mcpbridge does not have.
func unknownCommand(name string) error {
	msg := fmt.Sprintf("unknown command %q", name)
	if hint := nearest(strings.TrimLeft(name, "-"), commandNames()); hint != "" {
		msg += "; did you mean " + hint + "?"
	}
	return usageErrorf("%s (mcpbridge --help lists the commands)", msg)
}

// nearest is the candidate closest to name by edit distance (transpositions
// count one), when it is close enough to be a typo: at most 2 edits, or a
// third of name's length. Ties go to the earlier candidate.
func nearest(name string, candidates []string) string {
	limit := max(2, utf8.RuneCountInString(name)/3)
	best, bestD := "", limit+1
	for _, c := range candidates {
		d := schema.EditDistance(strings.ToLower(name), strings.ToLower(c))
		if strings.HasPrefix(c, name) && len(name) >= 3 {
			d = min(d, 1) // an abbreviation: --upstr for --upstream
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// dispatch runs what needs no configuration (help, version, completion,
// client) and refuses command lines it cannot run. handled reports whether
// run is done; otherwise args[0] is a command that takes serve's flags.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) (handled bool, err error) {
	if len(args) == 0 {
		printUsage(stderr)
		return true, usageErrorf("no command given")
	}
	switch name := args[0]; name {
	case "serve", "tools", "demo", "call", "validate", "init":
		return false, nil
	case "version", "--version":
		if len(args) > 1 && (args[1] == "-h" || args[1] == "--help") {
			return true, help(args[:1], stdout)
		}
		if len(args) > 1 {
			return true, usageErrorf("version: unexpected argument %q", args[1])
		}
		return true, printVersion(stdout)
	case "-h", "--help":
		printUsage(stdout)
		return true, nil
	case "help":
		return true, help(args[1:], stdout)
	case "completion":
		if len(args) > 1 && (args[1] == "-h" || args[1] == "--help") {
			return true, help(args[:1], stdout)
		}
		return true, completion(args[1:], stdout)
	case "client":
		return true, runClient(ctx, args[1:], stdout, stderr)
	default:
		return true, unknownCommand(name)
	}
}

// help is "mcpbridge help [COMMAND]".
func help(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		printUsage(stdout)
		return nil
	}
	if len(args) > 1 {
		return usageErrorf("help: name one command")
	}
	c, ok := lookupCommand(args[0])
	if !ok {
		return unknownCommand(args[0])
	}
	printCommandHelp(stdout, c, helpFlags(c.name))
	return nil
}

// helpFlags is the flag set of a command for help and completion (nil for
// a command without flags).
func helpFlags(name string) *pflag.FlagSet {
	switch name {
	case "client":
		fs, _ := clientFlags()
		return fs
	case "completion", "version", "help":
		return nil
	}
	return flagSet(name)
}

// parseCommand parses the flags and positional arguments of a command that
// takes serve's flags.
func parseCommand(name string, args []string, stdout io.Writer) (*pflag.FlagSet, []string, error) {
	c, _ := lookupCommand(name)
	fs := flagSet(name)
	if err := parseFlags(c, fs, args, stdout); err != nil {
		return nil, nil, err
	}
	if name == "call" {
		if fs.NArg() != 1 {
			return nil, nil, usageErrorf("call: name exactly one tool: mcpbridge call TOOL [--args JSON]")
		}
		return fs, fs.Args(), nil
	}
	if fs.NArg() > 0 {
		return nil, nil, usageErrorf("%s: unexpected argument %q (mcpbridge %s --help lists the flags)", name, fs.Arg(0), name)
	}
	return fs, nil, nil
}
