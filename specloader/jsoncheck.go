package specloader

import (
	"bytes"
	"encoding/binary"
)

// The cursor's moves that pass over JSON text without building anything
// (skip, strBounds, object, array) check it as strictly as json.Valid does,
// so that splitting a document (split.go) is also its validation: one pass
// over GitHub's 13 MB instead of two, 20 ms instead of 50. FuzzSplitJSON
// holds the two to the same verdict.

// maxDepth is the deepest nesting of objects and arrays encoding/json
// accepts, and so json.Valid.
const maxDepth = 10000

// Eight bytes at once (SWAR): eightSpaces is eight ' '; ones and highs
// have 0x01 and 0x80 in each byte.
const (
	eightSpaces = 0x2020202020202020
	ones        = 0x0101010101010101
	highs       = 0x8080808080808080
)

// plainString reports whether none of the eight bytes of x ends or escapes
// a string or is a control character, which a string cannot hold: no '"',
// no '\\', none below 0x20. (A byte equal to b makes x^(b*ones) hold a
// zero byte; zero bytes and bytes below n show in (v - n*ones) &^ v &
// highs, exactly when there is one.)
func plainString(x uint64) bool {
	quote := x ^ ('"' * ones)
	backslash := x ^ ('\\' * ones)
	found := (quote-ones)&^quote | (backslash-ones)&^backslash | (x-0x20*ones)&^x
	return found&highs == 0
}

// here is the span of a value starting at the cursor, its end not yet known.
func (c *cursor) here() span {
	return span{start: c.pos, line: c.line, lineStart: c.lineStart}
}

// object calls fn for each member of the object at the cursor, with the
// cursor at the start of the member's value, which fn must move past. A
// value that is not an object is skipped, and object reports false.
func (c *cursor) object(fn func(key string) error) (bool, error) {
	if c.peek() != '{' {
		return false, c.skip()
	}
	if c.depth >= maxDepth {
		return false, c.errorf("nested too deeply")
	}
	c.depth++
	defer func() { c.depth-- }()
	c.pos++
	if c.peek() == '}' {
		c.pos++
		return true, nil
	}
	for {
		if c.peek() != '"' {
			return false, c.errorf("expected a member name")
		}
		key, err := c.str()
		if err != nil {
			return false, err
		}
		if err := c.expect(':'); err != nil {
			return false, err
		}
		c.ws()
		if err := fn(key); err != nil {
			return false, err
		}
		switch c.peek() {
		case ',':
			c.pos++
		case '}':
			c.pos++
			return true, nil
		default:
			return false, c.errorf("expected ',' or '}'")
		}
	}
}

// array calls fn for each element of the array at the cursor, with the
// cursor at the element, which fn must move past. A value that is not an
// array is skipped, and array reports false.
func (c *cursor) array(fn func() error) (bool, error) {
	if c.peek() != '[' {
		return false, c.skip()
	}
	if c.depth >= maxDepth {
		return false, c.errorf("nested too deeply")
	}
	c.depth++
	defer func() { c.depth-- }()
	c.pos++
	if c.peek() == ']' {
		c.pos++
		return true, nil
	}
	for {
		c.ws()
		if err := fn(); err != nil {
			return false, err
		}
		switch c.peek() {
		case ',':
			c.pos++
		case ']':
			c.pos++
			return true, nil
		default:
			return false, c.errorf("expected ',' or ']'")
		}
	}
}

// scalarString moves past the value at the cursor and returns it as the
// YAML decoder reads a scalar into a string: a string's contents, the text
// of a number or boolean, "" for null, an object or an array.
func (c *cursor) scalarString() (string, error) {
	switch c.peek() {
	case '"':
		return c.str()
	case '{', '[':
		return "", c.skip()
	}
	start := c.pos
	if err := c.skip(); err != nil {
		return "", err
	}
	if text := string(c.data[start:c.pos]); text != "null" {
		return text, nil
	}
	return "", nil
}

// skip moves past one value, checking that it is JSON.
func (c *cursor) skip() error {
	var buf [64]bool
	open := buf[:0] // the containers the value opened: true for an object
value:
	for {
		c.ws()
		if c.pos >= len(c.data) {
			return c.errorf("unexpected end of input")
		}
		switch b := c.data[c.pos]; b {
		case '{', '[':
			if c.depth+len(open) >= maxDepth {
				return c.errorf("nested too deeply")
			}
			c.pos++
			c.ws()
			if c.pos < len(c.data) && c.data[c.pos] == b+2 { // '}' or ']'
				c.pos++
				break
			}
			open = append(open, b == '{')
			if b == '{' {
				if err := c.memberName(); err != nil {
					return err
				}
			}
			continue value
		case '"':
			if _, _, _, err := c.strBounds(); err != nil {
				return err
			}
		default:
			if err := c.scalar(); err != nil {
				return err
			}
		}
		// After a value: close what it ends, then on to the next.
		for len(open) > 0 {
			c.ws()
			if c.pos >= len(c.data) {
				return c.errorf("unexpected end of input")
			}
			inObject := open[len(open)-1]
			switch b := c.data[c.pos]; {
			case b == ',':
				c.pos++
				if inObject {
					if err := c.memberName(); err != nil {
						return err
					}
				}
				continue value
			case inObject && b == '}', !inObject && b == ']':
				c.pos++
				open = open[:len(open)-1]
			case inObject:
				return c.errorf("expected ',' or '}'")
			default:
				return c.errorf("expected ',' or ']'")
			}
		}
		return nil
	}
}

// memberName moves past a member name and the colon after it.
func (c *cursor) memberName() error {
	if c.peek() != '"' {
		return c.errorf("expected a member name")
	}
	if _, _, _, err := c.strBounds(); err != nil {
		return err
	}
	return c.expect(':')
}

// scalar moves past the number or literal at the cursor, checking its
// form. What follows it is for the caller to check.
func (c *cursor) scalar() error {
	d, i := c.data, c.pos
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(d[i:], []byte(lit)) {
			c.pos += len(lit)
			return nil
		}
	}
	digits := func() bool {
		start := i
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case !digits():
		return c.errorf("expected a value")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if !digits() {
			c.pos = i
			return c.errorf("expected a digit after the decimal point")
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !digits() {
			c.pos = i
			return c.errorf("expected a digit in the exponent")
		}
	}
	c.pos = i
	return nil
}

// strBounds moves past the string at the cursor, checking it, and returns
// the bounds of its contents and whether they hold escapes.
func (c *cursor) strBounds() (start, end int, escaped bool, err error) {
	d := c.data
	start = c.pos + 1
	i := start
	for {
		for i+8 <= len(d) && plainString(binary.LittleEndian.Uint64(d[i:])) {
			i += 8
		}
		if i >= len(d) {
			return 0, 0, false, c.errorf("unterminated string")
		}
		switch b := d[i]; {
		case b == '"':
			c.pos = i + 1
			return start, i, escaped, nil
		case b == '\\':
			escaped = true
			if i+1 >= len(d) {
				return 0, 0, false, c.errorf("unterminated string")
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if _, ok := hex4(d, i+2); !ok {
					return 0, 0, false, c.errorf("invalid escape in string")
				}
				i += 6
			default:
				return 0, 0, false, c.errorf("invalid escape in string")
			}
		case b < 0x20:
			return 0, 0, false, c.errorf("control character in string")
		default:
			i++
		}
	}
}
