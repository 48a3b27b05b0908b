package specloader

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"
)

// This file reads JSON text into the yaml.Node trees that kin-openapi's
// native decoder consumes, node for node what go-yaml builds when it parses
// the same JSON (a JSON document is YAML in flow style), but an order of
// magnitude faster: go-yaml's scanner spends most of a 13 MB load moving
// its token queue. node expects text that the moves of jsoncheck.go
// checked, and still fails cleanly, never panics, on anything else.

// span locates a JSON value in the document text, with the line and the
// offset of that line's first byte, so that nodes carry document positions.
type span struct {
	start, end int
	line       int
	lineStart  int
}

// member is one member of a JSON object.
type member struct {
	key string
	val span
}

// cursor walks JSON text, tracking the line for positions.
type cursor struct {
	data      []byte
	pos       int
	line      int
	lineStart int
	slab      []yaml.Node // nodes are carved from here, fewer allocations
	// depth counts the objects and arrays object and array are inside of,
	// for the nesting limit skip checks.
	depth int
}

func newCursor(data []byte, s span) *cursor {
	return &cursor{data: data[:s.end], pos: s.start, line: s.line, lineStart: s.lineStart}
}

func (c *cursor) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d, column %d: %s", c.line, c.pos-c.lineStart+1, fmt.Sprintf(format, args...))
}

// ws moves past JSON whitespace, counting lines. Indentation, most of a
// pretty-printed document, goes eight spaces at a time.
func (c *cursor) ws() {
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ' ':
			c.pos++
			for c.pos+8 <= len(c.data) && binary.LittleEndian.Uint64(c.data[c.pos:]) == eightSpaces {
				c.pos += 8
			}
		case '\n':
			c.newline()
		case '\r':
			if c.pos+1 < len(c.data) && c.data[c.pos+1] == '\n' {
				c.pos++ // CRLF: one line break, counted at the LF
			} else {
				c.newline() // a lone CR breaks the line in YAML
			}
		case '\t':
			c.pos++
		default:
			return
		}
	}
}

// newline moves past the line break at the cursor.
func (c *cursor) newline() {
	c.pos++
	c.line++
	c.lineStart = c.pos
}

// peek skips whitespace and returns the next byte, 0 at the end.
func (c *cursor) peek() byte {
	c.ws()
	if c.pos >= len(c.data) {
		return 0
	}
	return c.data[c.pos]
}

func (c *cursor) expect(b byte) error {
	if c.peek() != b {
		return c.errorf("expected %q", b)
	}
	c.pos++
	return nil
}

// members splits the object at the cursor into its members, skipping over
// their values. A JSON null gives no members and ok false.
func (c *cursor) members() (ms []member, ok bool, err error) {
	switch c.peek() {
	case 'n':
		return nil, false, c.literal("null")
	case '{':
	default:
		return nil, false, c.errorf("expected an object")
	}
	c.pos++
	if c.peek() == '}' {
		c.pos++
		return nil, true, nil
	}
	for {
		if c.peek() != '"' {
			return nil, false, c.errorf("expected a member name")
		}
		key, err := c.str()
		if err != nil {
			return nil, false, err
		}
		if err := c.expect(':'); err != nil {
			return nil, false, err
		}
		c.ws()
		v := span{start: c.pos, line: c.line, lineStart: c.lineStart}
		if err := c.skip(); err != nil {
			return nil, false, err
		}
		v.end = c.pos
		ms = append(ms, member{key: key, val: v})
		switch c.peek() {
		case ',':
			c.pos++
		case '}':
			c.pos++
			return ms, true, nil
		default:
			return nil, false, c.errorf("expected ',' or '}'")
		}
	}
}

// str reads the string at the cursor.
func (c *cursor) str() (string, error) {
	start, end, escaped, err := c.strBounds()
	if err != nil {
		return "", err
	}
	if !escaped {
		return string(c.data[start:end]), nil
	}
	s, ok := unescape(c.data[start:end])
	if !ok {
		return "", c.errorf("invalid escape in string")
	}
	return s, nil
}

// scalarText moves past a number or literal and returns its text.
func (c *cursor) scalarText() (string, error) {
	start := c.pos
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ',', '}', ']', ' ', '\t', '\r', '\n', ':':
			goto done
		}
		c.pos++
	}
done:
	if c.pos == start {
		return "", c.errorf("expected a value")
	}
	return string(c.data[start:c.pos]), nil
}

func (c *cursor) literal(want string) error {
	got, err := c.scalarText()
	if err == nil && got != want {
		err = c.errorf("unexpected %q", got)
	}
	return err
}

func (c *cursor) newNode(kind yaml.Kind, tag string, style yaml.Style) *yaml.Node {
	if len(c.slab) == 0 {
		c.slab = make([]yaml.Node, 64)
	}
	n := &c.slab[0]
	c.slab = c.slab[1:]
	n.Kind, n.Tag, n.Style = kind, tag, style
	n.Line, n.Column = c.line, c.pos-c.lineStart+1
	return n
}

// node builds the yaml.Node of the value at the cursor. depth bounds the
// recursion (json.Valid allows 10000 levels; so does this).
func (c *cursor) node(depth int) (*yaml.Node, error) {
	if depth > 10000 {
		return nil, c.errorf("nested too deeply")
	}
	switch b := c.peek(); b {
	case '{':
		n := c.newNode(yaml.MappingNode, "!!map", yaml.FlowStyle)
		c.pos++
		if c.peek() == '}' {
			c.pos++
			return n, nil
		}
		for {
			if c.peek() != '"' {
				return nil, c.errorf("expected a member name")
			}
			k, err := c.node(depth + 1)
			if err != nil {
				return nil, err
			}
			if err := c.expect(':'); err != nil {
				return nil, err
			}
			v, err := c.node(depth + 1)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, k, v)
			switch c.peek() {
			case ',':
				c.pos++
			case '}':
				c.pos++
				return n, nil
			default:
				return nil, c.errorf("expected ',' or '}'")
			}
		}
	case '[':
		n := c.newNode(yaml.SequenceNode, "!!seq", yaml.FlowStyle)
		c.pos++
		if c.peek() == ']' {
			c.pos++
			return n, nil
		}
		for {
			v, err := c.node(depth + 1)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, v)
			switch c.peek() {
			case ',':
				c.pos++
			case ']':
				c.pos++
				return n, nil
			default:
				return nil, c.errorf("expected ',' or ']'")
			}
		}
	case '"':
		n := c.newNode(yaml.ScalarNode, "!!str", yaml.DoubleQuotedStyle)
		s, err := c.str()
		n.Value = s
		return n, err
	case 0:
		return nil, c.errorf("unexpected end of input")
	default:
		n := c.newNode(yaml.ScalarNode, "", 0)
		text, err := c.scalarText()
		if err != nil {
			return nil, err
		}
		n.Value = text
		switch text {
		case "true", "false":
			n.Tag = "!!bool"
		case "null":
			n.Tag = "!!null"
		default:
			if n.Tag = numberTag(text); n.Tag == "" {
				return nil, c.errorf("invalid value %q", text)
			}
		}
		return n, nil
	}
}

// nodeWithout builds the node of the object at the cursor as node does,
// leaving out the members whose key is in drop (a pruned path item's
// operations), whose values it only skips.
func (c *cursor) nodeWithout(drop map[string]bool) (*yaml.Node, error) {
	if c.peek() != '{' {
		return c.node(0)
	}
	n := c.newNode(yaml.MappingNode, "!!map", yaml.FlowStyle)
	c.pos++
	if c.peek() == '}' {
		c.pos++
		return n, nil
	}
	for {
		if c.peek() != '"' {
			return nil, c.errorf("expected a member name")
		}
		k, err := c.node(1)
		if err != nil {
			return nil, err
		}
		if err := c.expect(':'); err != nil {
			return nil, err
		}
		if drop[k.Value] {
			if err := c.skip(); err != nil {
				return nil, err
			}
		} else {
			v, err := c.node(1)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, k, v)
		}
		switch c.peek() {
		case ',':
			c.pos++
		case '}':
			c.pos++
			return n, nil
		default:
			return nil, c.errorf("expected ',' or '}'")
		}
	}
}

// numberTag is the tag go-yaml resolves a JSON number to: !!int when it
// parses as a 64-bit integer, !!float otherwise, !!float for -0, which YAML
// reads as negative zero, and !!str for a float out of range. "" for text
// that is no number.
func numberTag(text string) string {
	if text == "-0" {
		return "!!float"
	}
	if _, err := strconv.ParseInt(text, 10, 64); err == nil {
		return "!!int"
	}
	if _, err := strconv.ParseUint(text, 10, 64); err == nil {
		return "!!int"
	}
	_, err := strconv.ParseFloat(text, 64)
	if err == nil {
		return "!!float"
	}
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return "!!str"
	}
	return ""
}

// unescape decodes the contents of a JSON string that holds escapes. An
// unpaired surrogate becomes U+FFFD, as encoding/json does.
func unescape(b []byte) (string, bool) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		if i+1 >= len(b) {
			return "", false
		}
		switch b[i+1] {
		case '"', '\\', '/':
			out = append(out, b[i+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(b, i+2)
			if !ok {
				return "", false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(b, i+2); ok && i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						out = utf8.AppendRune(out, dec)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return "", false
		}
		i += 2
	}
	return string(out), true
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(v), err == nil
}
