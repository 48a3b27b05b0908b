package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// completion is "mcpbridge completion bash|zsh|fish": a script completing
// the commands, each command's flags (those its help lists), file names
// for path flags and the values of enumerated flags. It is generated from
// the same flag sets the commands parse, so it cannot drift from them.
func completion(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return usageErrorf("completion: name a shell: mcpbridge completion bash|zsh|fish")
	}
	var script string
	switch args[0] {
	case "bash":
		script = bashCompletion()
	case "zsh":
		script = zshCompletion()
	case "fish":
		script = fishCompletion()
	default:
		msg := fmt.Sprintf("completion: no script for shell %q", args[0])
		if hint := nearest(args[0], []string{"bash", "zsh", "fish"}); hint != "" {
			msg += "; did you mean " + hint + "?"
		}
		return usageErrorf("%s (bash, zsh or fish)", msg)
	}
	_, err := io.WriteString(stdout, script)
	return err
}

// completedFlag is a flag as completion scripts offer it.
type completedFlag struct {
	name   string
	usage  string
	value  bool     // takes a value
	files  bool     // the value is a file name
	dir    bool     // the value is a directory
	values []string // the value is one of these
}

// flagValues are the values of enumerated flags.
func flagValues(name string) []string {
	switch name {
	case "transport":
		return []string{"stdio", "http"}
	case "tools":
		return []string{"all", "dynamic", "hybrid"}
	case "output-schema":
		return []string{"tolerant", "strict", "off"}
	case "schema-detail":
		return []string{"full", "compact"}
	case "nested-style":
		return []string{"brackets", "brackets-empty", "dots", "json"}
	case "log-level":
		return []string{"debug", "info", "warn", "error"}
	case "log-format":
		return []string{"console", "json"}
	case "quota-fail":
		return []string{"closed", "open"}
	case "result-text":
		return []string{"always", "auto"}
	}
	return nil
}

// fileFlag reports whether a flag's value is a file name.
func fileFlag(name string) bool {
	switch name {
	case "config", "spec", "whitelist", "api-key-file", "upstream-ca-file", "upstream-client-cert", "upstream-client-key":
		return true
	}
	return false
}

// completedCommands are the commands with their flags, in help order.
func completedCommands() []struct {
	c     command
	flags []completedFlag
} {
	var out []struct {
		c     command
		flags []completedFlag
	}
	for _, c := range commands() {
		var flags []completedFlag
		if fs := helpFlags(c.name); fs != nil {
			for _, f := range commandFlags(c, fs) {
				flags = append(flags, completedFlag{
					name: f.Name, usage: f.Usage, value: f.NoOptDefVal == "",
					files: fileFlag(f.Name), dir: f.Name == "cache-dir", values: flagValues(f.Name),
				})
			}
		}
		out = append(out, struct {
			c     command
			flags []completedFlag
		}{c, flags})
	}
	return out
}

// commandArgs are the words a command takes besides flags.
func commandArgs(name string) []string {
	switch name {
	case "completion":
		return []string{"bash", "zsh", "fish"}
	case "help":
		return commandNames()
	case "client":
		return []string{"list", "call"}
	}
	return nil
}

func bashCompletion() string {
	var b strings.Builder
	b.WriteString(`# bash completion for mcpbridge; load it with: source <(mcpbridge completion bash)
_mcpbridge() {
    local cur prev cmd words
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [[ ${COMP_CWORD} -eq 1 ]]; then
        COMPREPLY=( $(compgen -W "` + strings.Join(commandNames(), " ") + `" -- "${cur}") )
        return 0
    fi
    cmd="${COMP_WORDS[1]}"
    case "${prev}" in
`)
	// Values of the flags that take one, whatever the command.
	seen := map[string]bool{}
	var files, dirs, free []string
	enums := map[string][]string{}
	for _, cc := range completedCommands() {
		for _, f := range cc.flags {
			if seen[f.name] || !f.value {
				continue
			}
			seen[f.name] = true
			switch {
			case f.files:
				files = append(files, "--"+f.name)
			case f.dir:
				dirs = append(dirs, "--"+f.name)
			case f.values != nil:
				enums[strings.Join(f.values, " ")] = append(enums[strings.Join(f.values, " ")], "--"+f.name)
			default:
				free = append(free, "--"+f.name)
			}
		}
	}
	if len(files) > 0 {
		fmt.Fprintf(&b, "        %s)\n            COMPREPLY=( $(compgen -f -- \"${cur}\") )\n            return 0 ;;\n", strings.Join(files, "|"))
	}
	if len(dirs) > 0 {
		fmt.Fprintf(&b, "        %s)\n            COMPREPLY=( $(compgen -d -- \"${cur}\") )\n            return 0 ;;\n", strings.Join(dirs, "|"))
	}
	vals := make([]string, 0, len(enums))
	for v := range enums {
		vals = append(vals, v)
	}
	sort.Strings(vals)
	for _, v := range vals {
		fmt.Fprintf(&b, "        %s)\n            COMPREPLY=( $(compgen -W %q -- \"${cur}\") )\n            return 0 ;;\n", strings.Join(enums[v], "|"), v)
	}
	if len(free) > 0 {
		fmt.Fprintf(&b, "        %s)\n            return 0 ;;\n", strings.Join(free, "|"))
	}
	b.WriteString("    esac\n    case \"${cmd}\" in\n")
	for _, cc := range completedCommands() {
		var words []string
		words = append(words, commandArgs(cc.c.name)...)
		for _, f := range cc.flags {
			words = append(words, "--"+f.name)
		}
		if cc.c.name != "help" && cc.c.name != "completion" && cc.c.name != "version" {
			words = append(words, "--help")
		}
		fmt.Fprintf(&b, "        %s)\n            words=%q ;;\n", cc.c.name, strings.Join(words, " "))
	}
	b.WriteString(`        *)
            words="" ;;
    esac
    COMPREPLY=( $(compgen -W "${words}" -- "${cur}") )
    return 0
}
complete -o default -F _mcpbridge mcpbridge
`)
	return b.String()
}

// zshQuote makes s safe inside a single-quoted _arguments spec: no
// brackets or colons (they end the description) and no single quotes.
func zshQuote(s string) string {
	return strings.NewReplacer("[", "(", "]", ")", ":", ";", "'", "", "\\", "/", "`", "").Replace(firstClause(s))
}

// firstClause shortens a flag's usage for a completion menu.
func firstClause(s string) string {
	if i := strings.Index(s, " ("); i > 0 {
		s = s[:i]
	}
	if len(s) > 90 {
		s = s[:87] + "..."
	}
	return s
}

func zshCompletion() string {
	var b strings.Builder
	b.WriteString("#compdef mcpbridge\n# zsh completion for mcpbridge; install with: mcpbridge completion zsh > \"${fpath[1]}/_mcpbridge\"\n\n_mcpbridge() {\n  local -a commands\n  commands=(\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "    '%s:%s'\n", c.name, zshQuote(c.summary))
	}
	b.WriteString("  )\n  if (( CURRENT == 2 )); then\n    _describe -t commands 'mcpbridge command' commands\n    return\n  fi\n  local cmd=${words[2]}\n  shift words\n  (( CURRENT-- ))\n  case $cmd in\n")
	for _, cc := range completedCommands() {
		fmt.Fprintf(&b, "    %s)\n      _arguments -s \\\n", cc.c.name)
		for _, f := range cc.flags {
			spec := "'--" + f.name + "[" + zshQuote(f.usage) + "]"
			switch {
			case f.files:
				spec += ":file:_files"
			case f.dir:
				spec += ":directory:_files -/"
			case f.values != nil:
				spec += ":" + f.name + ":(" + strings.Join(f.values, " ") + ")"
			case f.value:
				spec += ":" + f.name + ": "
			}
			spec += "'"
			fmt.Fprintf(&b, "        %s \\\n", spec)
		}
		if args := commandArgs(cc.c.name); args != nil {
			fmt.Fprintf(&b, "        '1:argument:(%s)' \\\n", strings.Join(args, " "))
		}
		b.WriteString("        '(- *)'{-h,--help}'[show the command'\\''s help]'\n      ;;\n")
	}
	b.WriteString("  esac\n}\n\nif [ \"$funcstack[1]\" = \"_mcpbridge\" ]; then\n  _mcpbridge \"$@\"\nelse\n  compdef _mcpbridge mcpbridge\nfi\n")
	return b.String()
}

// fishQuote makes s safe inside a single-quoted fish string.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func fishCompletion() string {
	var b strings.Builder
	b.WriteString("# fish completion for mcpbridge; install with: mcpbridge completion fish > ~/.config/fish/completions/mcpbridge.fish\ncomplete -c mcpbridge -f\n")
	for _, c := range commands() {
		fmt.Fprintf(&b, "complete -c mcpbridge -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	for _, cc := range completedCommands() {
		cond := fishQuote("__fish_seen_subcommand_from " + cc.c.name)
		if args := commandArgs(cc.c.name); args != nil {
			fmt.Fprintf(&b, "complete -c mcpbridge -n %s -a %s\n", cond, fishQuote(strings.Join(args, " ")))
		}
		for _, f := range cc.flags {
			line := fmt.Sprintf("complete -c mcpbridge -n %s -l %s", cond, f.name)
			switch {
			case f.files || f.dir:
				line += " -r -F"
			case f.values != nil:
				line += " -x -a " + fishQuote(strings.Join(f.values, " "))
			case f.value:
				line += " -x"
			}
			fmt.Fprintf(&b, "%s -d %s\n", line, fishQuote(firstClause(f.usage)))
		}
	}
	return b.String()
}
