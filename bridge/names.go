package bridge

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

// maxToolNameLen is the longest tool name produced. MCP allows 128, but
// several clients (and model APIs) reject names over 64 characters.
const maxToolNameLen = 64

// toolName derives the tool name for an operation: the whitelist override,
// else the operationId, else "method_path". The result matches
// [A-Za-z0-9_-]{1,64}; longer names keep their head and end with a short
// hash of the full name, so they stay unique and deterministic.
func toolName(override, operationID, method, path string) string {
	raw := override
	if raw == "" {
		raw = operationID
	}
	if raw == "" {
		raw = strings.ToLower(method) + "_" + path
	}
	return sanitizeName(raw)
}

func sanitizeName(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	lastUnderscore := false
	for _, r := range raw {
		ok := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '_'
		if !ok {
			r = '_'
		}
		if r == '_' {
			if lastUnderscore {
				continue
			}
			lastUnderscore = true
		} else {
			lastUnderscore = false
		}
		b.WriteRune(r)
	}
	name := strings.Trim(b.String(), "_")
	if name == "" {
		name = "op"
	}
	if len(name) <= maxToolNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(raw))
	suffix := hex.EncodeToString(sum[:])[:8]
	head := strings.TrimRight(name[:maxToolNameLen-len(suffix)-1], "_-")
	return head + "_" + suffix
}

// uniqueNames makes the tool names of built unique. A name the whitelist
// sets is the user's choice: two such names that collide are an error. A
// derived name (from the operationId, or the method and path) that is
// already taken gets the first free suffix _2, _3...: "/jobs" and "/jobs/",
// "/users" and "/users/~", or an operationId the spec repeats, would
// otherwise stop --all-operations from serving the spec at all. Which one
// keeps the plain name follows the operations' order, so a restart or a
// replica names them alike; the rename is logged with both operations.
func (c *Catalog) uniqueNames(ops []whitelist.Operation, built []buildResult) error {
	names := map[string]string{} // tool name → operation
	var errs []error
	for i, op := range ops {
		if t := built[i].tool; t != nil && op.Name != "" {
			if prev, dup := names[t.def.Name]; dup {
				errs = append(errs, fmt.Errorf("tool name %q is used by both %s and %s: set a distinct name for one of them in the whitelist", t.def.Name, prev, t.plan.Label))
				continue
			}
			names[t.def.Name] = t.plan.Label
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	// Every derived name that is free keeps it, then the repeats get a
	// suffix that no name above uses (an operationId "get_jobs_2" keeps
	// its name; the second "get_jobs" becomes "get_jobs_3").
	var repeats []int
	for i, op := range ops {
		t := built[i].tool
		if t == nil || op.Name != "" {
			continue
		}
		if _, dup := names[t.def.Name]; dup {
			repeats = append(repeats, i)
			continue
		}
		names[t.def.Name] = t.plan.Label
	}
	for _, i := range repeats {
		t := built[i].tool
		name, dup := t.def.Name, true
		for n := 2; dup; n++ {
			suffix := "_" + strconv.Itoa(n)
			name = strings.TrimRight(t.def.Name[:min(len(t.def.Name), maxToolNameLen-len(suffix))], "_-") + suffix
			_, dup = names[name]
		}
		c.log.Warn("tool name taken: the operation gets another (name it in the whitelist to choose)",
			zap.String("name", t.def.Name), zap.String("taken_by", names[t.def.Name]), zap.String("op", t.plan.Label), zap.String("served_as", name))
		t.def.Name = name
		names[name] = t.plan.Label
	}
	return nil
}

// maxArgNameLen is the longest argument name produced, like tool names.
const maxArgNameLen = 64

// legalArgName reports whether name may be a top-level input-schema
// property key as Anthropic's Messages API demands of every tool it is
// given (Claude Code, Claude Desktop and the API itself):
// ^[a-zA-Z0-9_.-]{1,64}$. One key outside it fails every request of the
// session with a 400, whatever tool the model meant to call.
func legalArgName(name string) bool {
	if name == "" || len(name) > maxArgNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// argName is the argument name of the parameter named name: the name
// itself when it is legal (legalArgName), else a legal spelling of it:
// "<" and ">" become "_lt" and "_gt" (Twilio's StartTime< and StartTime>,
// bounds of one range), every other run of characters outside the set one
// "_" ("filter[status]" → "filter_status", "ids[]" → "ids", "$top" →
// "top"), "param" when nothing is left, and a name over 64 characters
// keeps its head and ends with a hash of the whole name. The caller makes
// it unique.
func argName(name string) string {
	if legalArgName(name) {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 4)
	under := func() {
		if s := b.String(); s != "" && !strings.HasSuffix(s, "_") {
			b.WriteByte('_')
		}
	}
	for _, r := range name {
		switch {
		case r < 0x80 && legalArgName(string(r)):
			b.WriteRune(r)
		case r == '<':
			under()
			b.WriteString("lt")
		case r == '>':
			under()
			b.WriteString("gt")
		default:
			under()
		}
	}
	arg := strings.TrimRight(b.String(), "_")
	if arg == "" {
		arg = "param"
	}
	if len(arg) <= maxArgNameLen {
		return arg
	}
	sum := sha256.Sum256([]byte(name))
	suffix := hex.EncodeToString(sum[:])[:8]
	return strings.TrimRight(arg[:maxArgNameLen-len(suffix)-1], "_.-") + "_" + suffix
}

// uniqueArgName returns arg, or when taken holds it a legal variant it
// does not: "arg__in" first (the documented spelling for two parameters
// of one name), then "arg_2", "arg_3"...
func uniqueArgName(arg, in string, taken func(string) bool) string {
	if !taken(arg) {
		return arg
	}
	if alt := argName(arg + "__" + in); !taken(alt) {
		return alt
	}
	for n := 2; ; n++ {
		suffix := "_" + strconv.Itoa(n)
		alt := strings.TrimRight(arg[:min(len(arg), maxArgNameLen-len(suffix))], "_") + suffix
		if !taken(alt) {
			return alt
		}
	}
}
