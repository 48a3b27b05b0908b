package whitelist

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Redact relaxes redaction for the answers of one tool whose job is to
// return a secret (a tool that creates an API token, say).
type Redact struct {
	// AllowKeys are member names (JSON members, XML elements and
	// attributes, form fields) whose values are not masked by the key-name
	// rules in this tool's answers. They are compared as the sanitizer
	// compares key names: ASCII case folded, '-' and '_' dropped. The
	// configured upstream credentials and the secret value patterns (JWTs,
	// sk-… keys, PEM keys…) are still masked wherever they appear.
	AllowKeys []string
}

// maxAllowKey bounds an allowKeys name: the sanitizer compares names of up
// to 63 bytes.
const maxAllowKey = 63

// redactKeys are the keys of a redact mapping.
func redactKeys() []string { return []string{"allowKeys"} }

// redact reads an entry's redact mapping.
func (p *parser) redact(f field) *Redact {
	if f.value.Kind != yaml.MappingNode {
		p.errorf(f.line, "redact must be a mapping: redact: {allowKeys: [token]}")
		return nil
	}
	r := &Redact{}
	for _, rf := range p.fields(f.value, "redact", redactKeys()) {
		// The only key: allowKeys.
		if rf.value.Kind != yaml.SequenceNode || len(rf.value.Content) == 0 {
			p.errorf(rf.line, "redact.allowKeys must be a non-empty list of key names, e.g. [token]")
			continue
		}
		for _, item := range rf.value.Content {
			item = resolve(item)
			name := strings.TrimSpace(item.Value)
			switch {
			case item.Kind != yaml.ScalarNode || isNull(item) || name == "":
				p.errorf(item.Line, "redact.allowKeys items must be non-empty key names")
			case len(name) > maxAllowKey:
				p.errorf(item.Line, "redact.allowKeys: %q is longer than %d bytes", name, maxAllowKey)
			case slices.Contains(r.AllowKeys, name):
				p.errorf(item.Line, "redact.allowKeys lists %q twice", name)
			default:
				r.AllowKeys = append(r.AllowKeys, name)
			}
		}
	}
	if len(r.AllowKeys) == 0 {
		return nil
	}
	return r
}
