package specloader

import "bytes"

// The scan for references in a kept value works on the text: it looks for
// the bytes "$ref" followed by ':' and a string, and for discriminator
// mappings, with bytes.Index, which is far faster than tokenizing. A match
// inside a string (text quoting JSON, say) can only add a reference, which
// keeps more than needed but never less. What the search cannot see is a
// "$ref" key spelled with \u escapes; a value holding anything like one
// makes the plan give up.

var (
	refKey           = []byte(`"$ref"`)
	discriminatorKey = []byte(`"discriminator"`)
	unicodeEscape    = []byte(`\u`)
)

// scan follows the references held in the value at s.
func (p *pruner) scan(s span) {
	sub := p.data[s.start:s.end]
	if mayHideRefKey(sub) {
		p.giveUp = true
		return
	}
	for i := 0; ; {
		j := bytes.Index(sub[i:], refKey)
		if j < 0 {
			break
		}
		i += j + len(refKey)
		c := &cursor{data: sub, pos: i}
		if c.peek() != ':' {
			continue
		}
		c.pos++
		if c.peek() != '"' {
			continue // a property named $ref, say
		}
		if ref, err := c.str(); err == nil {
			p.follow(ref)
		}
	}
	for i := 0; ; {
		j := bytes.Index(sub[i:], discriminatorKey)
		if j < 0 {
			break
		}
		i += j + len(discriminatorKey)
		p.mapping(&cursor{data: sub, pos: i})
	}
}

// mapping follows the values of the mapping of the discriminator object
// after the cursor (at the ':' after the key), if there is one.
func (p *pruner) mapping(c *cursor) {
	if c.peek() != ':' {
		return
	}
	c.pos++
	c.ws()
	// Errors only mean that the match was not a discriminator object.
	_, _ = c.object(func(key string) error {
		if key != "mapping" {
			return c.skip()
		}
		_, err := c.object(func(string) error {
			if c.peek() != '"' {
				return c.skip()
			}
			v, err := c.str()
			if err == nil {
				p.followMapping(v)
			}
			return err
		})
		return err
	})
}

// mayHideRefKey reports whether b may hold a "$ref" key written with \u
// escapes: a \u escape of '$', or one right after "$", "$r" or "$re".
func mayHideRefKey(b []byte) bool {
	for i := 0; ; {
		j := bytes.Index(b[i:], unicodeEscape)
		if j < 0 {
			return false
		}
		k := i + j
		if bytes.HasPrefix(b[k:], []byte(`\u0024`)) ||
			bytes.HasSuffix(b[:k], []byte("$")) || bytes.HasSuffix(b[:k], []byte("$r")) || bytes.HasSuffix(b[:k], []byte("$re")) {
			return true
		}
		i = k + len(unicodeEscape)
	}
}
