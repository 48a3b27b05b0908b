package whitelist

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// maxPolicyBytes bounds what Parse reads; a whitelist is a short hand-written
// file, so anything larger is a mistake (or an attack), not a policy.
const maxPolicyBytes = 4 << 20

// topKeys, entryKeys and annotationKeys list the keys a whitelist.yaml may
// contain, per level.
func topKeys() []string { return []string{"version", "tools"} }

func entryKeys() []string {
	return []string{"method", "path", "operationId", "tag", "name", "description", "title", "annotations", "timeout", "nestedStyle", "allowSlashes", "pinned", "allow", "fields", "maxItems", "redact", "resource"}
}

func annotationKeys() []string {
	return []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
}

// Parse reads a whitelist.yaml (format in the package documentation) and
// returns its policy. Parsing is strict: unknown or repeated keys, values of
// the wrong type, invalid methods, paths and durations, and entries without
// exactly one selector are errors. Every problem is reported at once: the
// error is an [errors.Join] of one error per problem, in line order, each
// starting with "line N: " so the caller can prefix the file name.
func Parse(r io.Reader) (*Policy, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPolicyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading whitelist: %w", err)
	}
	if len(data) > maxPolicyBytes {
		return nil, fmt.Errorf("whitelist is larger than %d bytes", maxPolicyBytes)
	}
	root, err := decodeDocument(data)
	if err != nil {
		return nil, err
	}
	p := &parser{}
	pol := p.policy(root)
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b problem) int { return cmp.Compare(a.order, b.order) })
		errs := make([]error, len(p.errs))
		for i, e := range p.errs {
			errs[i] = e.err
		}
		return nil, errors.Join(errs...)
	}
	return pol, nil
}

// decodeDocument decodes data as exactly one YAML document and returns its
// root content node.
func decodeDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("line 1: whitelist is empty: expected a mapping with a tools list")
		}
		return nil, yamlError(err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		return nil, fmt.Errorf("line %d: only one YAML document is allowed", extra.Line)
	case !errors.Is(err, io.EOF):
		return nil, yamlError(err)
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, fmt.Errorf("line %d: whitelist is empty: expected a mapping with a tools list", max(doc.Line, 1))
	}
	return doc.Content[0], nil
}

// yamlError rewrites a yaml syntax error "yaml: line N: msg" as
// "line N: invalid YAML: msg".
func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, text, ok := strings.Cut(rest, ": "); ok {
			if _, convErr := strconv.Atoi(n); convErr == nil {
				return fmt.Errorf("line %s: invalid YAML: %s", n, text)
			}
		}
	}
	return fmt.Errorf("invalid YAML: %s", msg)
}

// parser walks the YAML node tree, collecting every problem; a problem's
// order is its line.
type parser struct {
	errs []problem
}

func (p *parser) errorf(line int, format string, args ...any) {
	p.errs = append(p.errs, problem{line, fmt.Errorf("line %d: "+format, append([]any{line}, args...)...)})
}

// count returns how many problems have been found so far.
func (p *parser) count() int { return len(p.errs) }

// field is one key/value pair of a mapping.
type field struct {
	key   string
	line  int // line of the key
	value *yaml.Node
}

// fields returns the pairs of mapping n whose keys are in known, reporting
// unknown and repeated keys. what names the mapping in messages.
func (p *parser) fields(n *yaml.Node, what string, known []string) []field {
	var out []field
	seen := make(map[string]int)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		line := n.Content[i].Line
		if k.Kind != yaml.ScalarNode {
			p.errorf(line, "%s keys must be strings", what)
			continue
		}
		if !slices.Contains(known, k.Value) {
			hint := closest(k.Value, known, known)
			p.errorf(line, "unknown key %q in %s (allowed: %s)%s", k.Value, what, strings.Join(known, ", "), didYouMean(hint[:min(len(hint), 1)]))
			continue
		}
		if first, ok := seen[k.Value]; ok {
			p.errorf(line, "key %q repeated in %s (first at line %d)", k.Value, what, first)
			continue
		}
		seen[k.Value] = line
		out = append(out, field{key: k.Value, line: line, value: resolve(v)})
	}
	return out
}

// policy reads the top-level mapping.
func (p *parser) policy(n *yaml.Node) *Policy {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		hint := ""
		if n.Kind == yaml.SequenceNode {
			hint = ` (put the list under a "tools" key)`
		}
		p.errorf(n.Line, "the top level must be a mapping with a tools list%s", hint)
		return nil
	}
	pol := &Policy{}
	haveTools := false
	for _, f := range p.fields(n, "the top level", topKeys()) {
		switch f.key {
		case "version":
			if f.value.Kind != yaml.ScalarNode || f.value.ShortTag() != "!!int" || f.value.Value != "1" {
				p.errorf(f.line, "unsupported version %q: the only version is 1", f.value.Value)
			}
		case "tools":
			haveTools = true
			pol.Entries = p.tools(f)
		}
	}
	if !haveTools {
		p.errorf(n.Line, "missing the tools list")
	}
	duplicateNames(pol.Entries, func(i int, err error) {
		p.errs = append(p.errs, problem{pol.Entries[i].Line, err})
	})
	duplicateResources(pol.Entries, func(i int, err error) {
		p.errs = append(p.errs, problem{pol.Entries[i].Resource.Line, err})
	})
	return pol
}

// tools reads the tools list.
func (p *parser) tools(f field) []Entry {
	if f.value.Kind != yaml.SequenceNode {
		p.errorf(f.line, "tools must be a list of entries")
		return nil
	}
	if len(f.value.Content) == 0 {
		p.errorf(f.line, "tools is empty: list at least one operation")
		return nil
	}
	entries := make([]Entry, 0, len(f.value.Content))
	for _, item := range f.value.Content {
		line := item.Line
		item = resolve(item)
		if item.Kind != yaml.MappingNode {
			hint := ""
			if item.Kind == yaml.ScalarNode {
				hint = fmt.Sprintf(" (to select by operationId write `- operationId: %s`)", item.Value)
			}
			p.errorf(line, "a tools entry must be a mapping%s", hint)
			continue
		}
		before := p.count()
		e, keyLines := p.entry(item, line)
		// An entry whose keys were already reported (a misspelt operationId,
		// an empty tag) is not also told it has no selector.
		check := checkOptions{keyLine: func(key string) int { return keyLines[key] }, quietNoSelector: p.count() > before}
		p.errs = append(p.errs, e.problems(len(entries), check)...)
		entries = append(entries, e)
	}
	return entries
}

// entry reads one tools entry; it also returns the line of each key it set.
func (p *parser) entry(n *yaml.Node, line int) (Entry, map[string]int) {
	e := Entry{Line: line}
	keyLines := make(map[string]int)
	for _, f := range p.fields(n, "a tools entry", entryKeys()) {
		keyLines[f.key] = f.line
		switch f.key {
		case "annotations":
			e.Annotations = p.annotations(f)
			continue
		case "allowSlashes":
			e.AllowSlashes = p.names(f)
			continue
		case "pinned":
			if b, ok := p.boolean(f); ok {
				e.Pinned = b
			}
			continue
		case "allow":
			e.Allow = p.allow(f)
			continue
		case "fields":
			e.Fields = p.names(f)
			continue
		case "redact":
			e.Redact = p.redact(f)
			continue
		case "resource":
			e.Resource = p.resource(f)
			continue
		case "maxItems":
			n, err := strconv.Atoi(f.value.Value)
			if f.value.Kind != yaml.ScalarNode || f.value.ShortTag() != "!!int" || err != nil || n < 1 {
				p.errorf(f.line, "maxItems must be a positive integer")
				continue
			}
			e.MaxItems = n
			continue
		}
		s, ok := p.str(f)
		if !ok {
			continue
		}
		switch f.key {
		case "method":
			e.Method = strings.ToUpper(s)
		case "path":
			e.Path = s
		case "operationId":
			e.OperationID = s
		case "tag":
			e.Tag = s
		case "name":
			e.Name = s
		case "description":
			e.Description = s
		case "title":
			e.Title = s
		case "timeout":
			e.Timeout = p.timeout(f, s)
		case "nestedStyle":
			e.NestedStyle = s
		}
	}
	return e, keyLines
}

// str returns the value of f as a non-empty string.
func (p *parser) str(f field) (string, bool) {
	switch {
	case f.value.Kind != yaml.ScalarNode:
		p.errorf(f.line, "%s must be a string", f.key)
		return "", false
	case isNull(f.value) || strings.TrimSpace(f.value.Value) == "":
		p.errorf(f.line, "%s is empty", f.key)
		return "", false
	}
	return f.value.Value, true
}

// listItems names what each list key read by names holds, for messages:
// one, and several.
var listItems = map[string][2]string{
	"allowSlashes": {"path parameter", "path parameter names"},
	"fields":       {"field path", "field paths"},
	"keys":         {"caller identity", "caller identities (api-key:0, jwt:ISSUER|SUBJECT)"},
	"subjects":     {"JWT subject", "JWT subjects"},
	"scopes":       {"scope", "scopes"},
}

// names reads a non-empty list of distinct, non-empty strings (parameter
// names, field paths, the keys, subjects and scopes of an access list).
func (p *parser) names(f field) []string {
	what, ok := listItems[f.key]
	if !ok {
		what = [2]string{"string", "strings"}
	}
	if f.value.Kind != yaml.SequenceNode {
		hint := ""
		if f.value.Kind == yaml.ScalarNode && f.value.ShortTag() == "!!str" {
			hint = fmt.Sprintf(" (write %s: [%s])", f.key, f.value.Value)
		}
		p.errorf(f.line, "%s must be a list of %s%s", f.key, what[1], hint)
		return nil
	}
	if len(f.value.Content) == 0 {
		p.errorf(f.line, "%s is empty: list at least one %s (or leave the key out)", f.key, what[0])
		return nil
	}
	var out []string
	// A set, not slices.Contains on out: a long list would make this
	// quadratic (a 4 MiB list took minutes).
	seen := make(map[string]bool)
	for _, item := range f.value.Content {
		item = resolve(item)
		switch {
		case item.Kind != yaml.ScalarNode || isNull(item) || strings.TrimSpace(item.Value) == "":
			p.errorf(item.Line, "%s items must be non-empty %s", f.key, what[1])
		case seen[item.Value]:
			p.errorf(item.Line, "%s lists %q twice", f.key, item.Value)
		default:
			seen[item.Value] = true
			out = append(out, item.Value)
		}
	}
	return out
}

// timeout parses a Go duration such as 10s or 1m30s; it must be positive.
func (p *parser) timeout(f field, s string) time.Duration {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		p.errorf(f.line, "timeout %q is not a duration such as 10s, 1m30s or 500ms", s)
		return 0
	case d <= 0:
		p.errorf(f.line, "timeout %s must be positive (omit it to keep the default)", s)
		return 0
	}
	return d
}

// annotations reads the annotations mapping of booleans.
func (p *parser) annotations(f field) *Annotations {
	if f.value.Kind != yaml.MappingNode {
		p.errorf(f.line, "annotations must be a mapping of %s to true or false", strings.Join(annotationKeys(), ", "))
		return nil
	}
	a := &Annotations{}
	for _, af := range p.fields(f.value, "annotations", annotationKeys()) {
		b, ok := p.boolean(af)
		if !ok {
			continue
		}
		switch af.key {
		case "readOnlyHint":
			a.ReadOnlyHint = &b
		case "destructiveHint":
			a.DestructiveHint = &b
		case "idempotentHint":
			a.IdempotentHint = &b
		case "openWorldHint":
			a.OpenWorldHint = &b
		}
	}
	return a
}

// allowKeys are the keys of an allow mapping.
func allowKeys() []string { return []string{"keys", "subjects", "scopes"} }

// allow reads an entry's access list.
func (p *parser) allow(f field) *Allow {
	if f.value.Kind != yaml.MappingNode {
		p.errorf(f.line, "allow must be a mapping with keys, subjects and/or scopes (lists of strings)")
		return nil
	}
	a := &Allow{}
	before := p.count()
	for _, af := range p.fields(f.value, "allow", allowKeys()) {
		names := p.names(af)
		switch af.key {
		case "keys":
			a.Keys = names
			for _, k := range names {
				// A caller's id is always one of these: anything else
				// matches nobody, and the callers meant are locked out.
				if kind, rest, _ := strings.Cut(k, ":"); (kind != "api-key" && kind != "jwt") || rest == "" {
					p.errorf(af.line, "allow keys: %q is no caller's id: an API key is api-key:NAME (api-key:N, its place, when unnamed), a JWT caller jwt:ISSUER|SUBJECT (a subject alone goes under subjects)", k)
				}
			}
		case "subjects":
			a.Subjects = names
		case "scopes":
			a.Scopes = names
		}
	}
	if len(a.Keys)+len(a.Subjects)+len(a.Scopes) == 0 && p.count() == before {
		// (A list already reported is not also "nobody".)
		p.errorf(f.line, "allow lists nobody: give keys, subjects or scopes (leave allow out to let every caller use the tool)")
	}
	return a
}

// boolean reads f as a YAML boolean (true/false, not "yes" or a string),
// reporting anything else.
func (p *parser) boolean(f field) (bool, bool) {
	b, err := strconv.ParseBool(f.value.Value)
	if f.value.Kind != yaml.ScalarNode || f.value.ShortTag() != "!!bool" || err != nil {
		p.errorf(f.line, "%s must be true or false", f.key)
		return false, false
	}
	return b, true
}

// resolve follows an alias to the node it names.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
