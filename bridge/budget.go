package bridge

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

// Schema detail levels of [Options.SchemaDetail].
const (
	// SchemaFull keeps input schemas as converted (the default).
	SchemaFull = "full"
	// SchemaCompact lists less: descriptions, titles and examples are
	// dropped below the first level of input schemas (an argument keeps
	// the first paragraph of its description, at most 160 bytes), a tool's
	// description is its first paragraph (at most 300 bytes), and no output
	// schemas are listed (results are then text only). Types, enums,
	// required lists and constraints stay, so validation is unchanged.
	SchemaCompact = "compact"
)

// toolDescription is the tool's description under the budget settings:
// compact keeps the first paragraph (at most 300 bytes), and
// MaxDescriptionLength trims at a word boundary.
func (c *Catalog) toolDescription(op whitelist.Operation) string {
	d := description(op)
	if c.opts.SchemaDetail == SchemaCompact {
		d = firstParagraph(d, 300)
	}
	return trimDescription(d, c.opts.MaxDescriptionLength)
}

// firstParagraph is d up to its first blank line, trimmed to n bytes.
func firstParagraph(d string, n int) string {
	if i := strings.Index(d, "\n\n"); i > 0 {
		d = d[:i]
	}
	return trimDescription(strings.TrimSpace(d), n)
}

// TrimDescription is the description of an operation's tool under
// Options.MaxDescriptionLength n, given the one it has without a limit:
// the limit changes nothing else of a catalog's tools.
func TrimDescription(d string, n int) string { return trimDescription(d, n) }

// trimDescription cuts d to at most n bytes at a word boundary, marking the
// cut; n <= 0 means no limit.
func trimDescription(d string, n int) string {
	if n <= 0 || len(d) <= n {
		return d
	}
	const mark = "…"
	cut := n - len(mark)
	if cut <= 0 {
		return mark
	}
	for cut > 0 && cut < len(d) && d[cut]&0xC0 == 0x80 {
		cut-- // not inside a UTF-8 sequence
	}
	if !unicode.IsSpace(rune(d[cut])) {
		if i := strings.LastIndexFunc(d[:cut], unicode.IsSpace); i > cut/2 {
			cut = i
		}
	}
	return strings.TrimRightFunc(d[:cut], func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) + mark
}

// prose are the keywords compact mode drops below the first level.
var prose = map[string]bool{"description": true, "title": true, "examples": true, "example": true, "$comment": true}

// compactSchema drops prose below the first level of an input schema (the
// root's own properties keep theirs). It returns raw unchanged when the
// schema does not decode (it always does: the bridge wrote it).
func compactSchema(raw json.RawMessage) json.RawMessage {
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return raw
	}
	if props, ok := root["properties"].(map[string]any); ok {
		for _, p := range props {
			if m, ok := p.(map[string]any); ok {
				for k, v := range m {
					if !prose[k] {
						stripKeyword(k, v)
					}
				}
				// An argument keeps a short description: its first
				// paragraph, at most 160 bytes.
				if d, ok := m["description"].(string); ok {
					m["description"] = firstParagraph(d, 160)
				}
				delete(m, "examples")
				delete(m, "example")
			}
		}
	}
	if defs, ok := root["$defs"].(map[string]any); ok {
		for _, d := range defs {
			stripProse(d)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return raw
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// stripProse removes prose keywords from the schema v and every schema
// inside it.
func stripProse(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if prose[k] {
				delete(x, k)
				continue
			}
			stripKeyword(k, e)
		}
	case []any:
		for _, e := range x {
			stripProse(e)
		}
	}
}

// stripKeyword strips the schemas held by keyword k's value v. The keys of
// "properties" and the like are names, not keywords; enum, const and
// default hold values, not schemas.
func stripKeyword(k string, v any) {
	switch k {
	case "properties", "patternProperties", "$defs", "dependentSchemas":
		if m, ok := v.(map[string]any); ok {
			for _, s := range m {
				stripProse(s)
			}
		}
	case "enum", "const", "default":
	default:
		stripProse(v)
	}
}
