package sanitizer

import (
	"bytes"
	"unicode/utf8"
)

// maxPopSearch bounds how far down the element stack an end tag looks for
// its start tag, so that a run of stray end tags stays linear.
const maxPopSearch = 64

// xmlElem is an open element: its name, b[lo:hi], and whether it or one
// of its ancestors is sensitive.
type xmlElem struct {
	lo, hi int
	sens   bool
}

// xmlAttr is an attribute: its name b[nlo:nhi] and value b[vlo:vhi] (val
// false when it has none).
type xmlAttr struct {
	nlo, nhi, vlo, vhi int
	val                bool
}

// markup is one redactMarkup run.
type markup struct {
	r    *Redactor
	b    []byte
	html bool
	iv   []span
	// quoted are the non-string JSON values the lenient JSON rule masks
	// in text (see json), each written as "[REDACTED]" in quotes.
	quoted []span
	stack  []xmlElem
	attrs  []xmlAttr
	buf    []byte
}

// redactMarkup redacts an XML document or, with html, an HTML one, keeping
// its bytes: see RedactBody. The scanner is tolerant: it never rejects its
// input, and an end tag closes the nearest open element of its name.
func (r *Redactor) redactMarkup(body []byte, html bool) ([]byte, int) {
	m := &markup{r: r, b: body, html: html}
	m.iv = valueSpans(r, body, nil, false)
	b := body
	for i := 0; i < len(b); {
		lt := bytes.IndexByte(b[i:], '<')
		if lt < 0 {
			m.text(i, len(b), true)
			break
		}
		lt += i
		m.text(i, lt, true)
		i = m.tag(lt)
	}
	return replaceQuoted(body, m.iv, m.quoted)
}

// sensitive reports whether the current element's content is masked.
func (m *markup) sensitive() bool {
	return len(m.stack) > 0 && m.stack[len(m.stack)-1].sens
}

// text handles the character data b[lo:hi]: masked when inside a sensitive
// element (white space around it kept), masked whole when it matches a
// value rule once entities are decoded.
func (m *markup) text(lo, hi int, entities bool) {
	for lo < hi && isXMLSpace(m.b[lo]) {
		lo++
	}
	for hi > lo && isXMLSpace(m.b[hi-1]) {
		hi--
	}
	if lo == hi {
		return
	}
	if sens := m.sensitive(); sens {
		m.value(lo, hi, sens, entities)
		return
	}
	m.value(lo, hi, false, entities)
	m.json(lo, hi)
}

// json masks what the lenient JSON rule (as for text/plain) finds in the
// text b[lo:hi]: the JSON an element, a CDATA section or a script holds (a
// SOAP field carrying a JSON document, Next.js's __NEXT_DATA__, a page's
// inline configuration), whose member names the element and attribute
// rules do not read.
func (m *markup) json(lo, hi int) {
	seg := m.b[lo:hi]
	if bytes.IndexByte(seg, '"') < 0 {
		return // no JSON string, so no member name
	}
	iv, quoted := m.r.lenientSpans(seg)
	for _, s := range iv {
		m.iv = append(m.iv, span{lo + s.lo, lo + s.hi})
	}
	for _, s := range quoted {
		m.quoted = append(m.quoted, span{lo + s.lo, lo + s.hi})
	}
}

// value masks b[lo:hi], a text or attribute value: all of it when sens
// (unless it is a clean "MASKED:" value), or when entities decode it into
// something a value rule matches.
func (m *markup) value(lo, hi int, sens, entities bool) {
	v := m.b[lo:hi]
	if entities && bytes.IndexByte(v, '&') >= 0 {
		m.buf = decodeEntities(m.buf[:0], v)
		v = m.buf
		if !sens && matches(m.r, v) {
			m.iv = append(m.iv, span{lo, hi})
			return
		}
	}
	if sens && !keepMasked(m.r, v) {
		m.iv = append(m.iv, span{lo, hi})
	}
}

// tag handles the markup starting at b[i] ('<') and returns the offset
// after it.
func (m *markup) tag(i int) int {
	b := m.b
	switch {
	case hasAt(b, i, "<!--"):
		return endAfter(b, i+4, "-->")
	case hasAt(b, i, "<![CDATA["):
		lo := i + 9
		hi := indexAt(b, lo, "]]>")
		if hi < 0 {
			m.text(lo, len(b), false)
			return len(b)
		}
		m.text(lo, hi, false)
		return hi + 3
	case hasAt(b, i, "<?"):
		return endAfter(b, i+2, "?>")
	case hasAt(b, i, "<!"):
		return declEnd(b, i+2)
	case i+1 < len(b) && b[i+1] == '/':
		lo := i + 2
		hi := lo
		for hi < len(b) && isXMLNameByte(b[hi]) {
			hi++
		}
		m.pop(b[lo:hi])
		return endAfter(b, hi, ">")
	case i+1 < len(b) && isXMLNameStart(b[i+1]):
		return m.startTag(i)
	}
	return i + 1 // a '<' in text
}

// startTag handles the start tag at b[i] and returns the offset after it.
func (m *markup) startTag(i int) int {
	r, b := m.r, m.b
	lo := i + 1
	hi := lo
	for hi < len(b) && isXMLNameByte(b[hi]) {
		hi++
	}
	name := b[lo:hi]
	sens := m.sensitive() || !m.html && isSensitiveKey(r, name)
	m.attrs = m.attrs[:0]
	j, self := hi, false
	for j < len(b) {
		c := b[j]
		if isXMLSpace(c) {
			j++
			continue
		}
		if c == '>' {
			j++
			break
		}
		if c == '/' {
			if j+1 < len(b) && b[j+1] == '>' {
				j, self = j+2, true
				break
			}
			j++
			continue
		}
		a := xmlAttr{nlo: j}
		for j < len(b) && !isXMLSpace(b[j]) && b[j] != '=' && b[j] != '>' && b[j] != '/' {
			j++
		}
		a.nhi = j
		if a.nhi == a.nlo { // a stray '='
			j++
			continue
		}
		k := j
		for k < len(b) && isXMLSpace(b[k]) {
			k++
		}
		if k < len(b) && b[k] == '=' {
			k++
			for k < len(b) && isXMLSpace(b[k]) {
				k++
			}
			a.val = true
			if k < len(b) && (b[k] == '"' || b[k] == '\'') {
				q := b[k]
				a.vlo = k + 1
				e := bytes.IndexByte(b[a.vlo:], q)
				if e < 0 {
					a.vhi, j = len(b), len(b)
				} else {
					a.vhi, j = a.vlo+e, a.vlo+e+1
				}
			} else {
				a.vlo = k
				for k < len(b) && !isXMLSpace(b[k]) && b[k] != '>' {
					k++
				}
				a.vhi, j = k, k
			}
		}
		m.attrs = append(m.attrs, a)
	}
	// A name or key attribute naming a sensitive key makes the element's
	// other values sensitive: <add key="ApiKey" value="..."/>.
	label := -1
	for k, a := range m.attrs {
		if a.val && isLabelAttr(b[a.nlo:a.nhi]) && isSensitiveKey(r, b[a.vlo:a.vhi]) {
			label = k
			break
		}
	}
	if label >= 0 {
		sens = true
	}
	for k, a := range m.attrs {
		if !a.val || k == label || hasFoldPrefix(b[a.nlo:a.nhi], "xmlns") {
			continue
		}
		m.value(a.vlo, a.vhi, sens || isSensitiveKey(r, b[a.nlo:a.nhi]), true)
	}
	if self {
		return j
	}
	if m.html {
		// HTML elements need no end tag: nothing is pushed. The contents
		// of script and style are text up to their end tag.
		for _, raw := range []string{"script", "style"} {
			if len(name) != len(raw) || !hasFoldPrefix(name, raw) {
				continue
			}
			for k := j; k < len(b); k++ {
				if b[k] == '<' && k+1 < len(b) && b[k+1] == '/' && hasFoldAt(b, k+2, raw) {
					m.json(j, k)
					return k
				}
			}
			m.json(j, len(b))
			return len(b)
		}
		return j
	}
	m.stack = append(m.stack, xmlElem{lo, hi, sens})
	return j
}

// pop closes the nearest open element named name, if any.
func (m *markup) pop(name []byte) {
	for d := len(m.stack) - 1; d >= 0 && d >= len(m.stack)-maxPopSearch; d-- {
		if e := m.stack[d]; bytes.Equal(m.b[e.lo:e.hi], name) {
			m.stack = m.stack[:d]
			return
		}
	}
}

// endAfter returns the offset after the first lit at or after b[from], or
// len(b).
func endAfter(b []byte, from int, lit string) int {
	if k := indexAt(b, from, lit); k >= 0 {
		return k + len(lit)
	}
	return len(b)
}

// declEnd returns the offset after the declaration (<!DOCTYPE ...>)
// whose body starts at b[j], internal subset and quotes included.
func declEnd(b []byte, j int) int {
	depth, quote := 0, byte(0)
	for ; j < len(b); j++ {
		switch c := b[j]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == '>' && depth <= 0:
			return j + 1
		}
	}
	return len(b)
}

func isXMLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isXMLNameStart(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || c == '_' || c == ':' || c >= 0x80
}

func isXMLNameByte(c byte) bool {
	return isXMLNameStart(c) || '0' <= c && c <= '9' || c == '-' || c == '.'
}

// isLabelAttr reports whether an attribute named n names its element's
// value: name or key, any case.
func isLabelAttr(n []byte) bool {
	return len(n) == 4 && hasFoldPrefix(n, "name") || len(n) == 3 && hasFoldPrefix(n, "key")
}

// hasFoldPrefix reports whether b starts with the lower-case ASCII lit,
// ignoring case.
func hasFoldPrefix(b []byte, lit string) bool {
	return hasFoldAt(b, 0, lit)
}

// decodeEntities appends v to buf with the XML predefined entities and
// character references decoded; others are kept as they are.
func decodeEntities(buf, v []byte) []byte {
	for i := 0; i < len(v); {
		if v[i] != '&' {
			buf = append(buf, v[i])
			i++
			continue
		}
		semi := bytes.IndexByte(v[i:min(len(v), i+12)], ';')
		if semi < 0 {
			buf = append(buf, '&')
			i++
			continue
		}
		ent := v[i+1 : i+semi]
		switch string(ent) {
		case "lt":
			buf = append(buf, '<')
		case "gt":
			buf = append(buf, '>')
		case "amp":
			buf = append(buf, '&')
		case "quot":
			buf = append(buf, '"')
		case "apos":
			buf = append(buf, '\'')
		default:
			c, ok := charRef(ent)
			if !ok {
				buf = append(buf, v[i:i+semi+1]...)
			} else {
				buf = utf8.AppendRune(buf, c)
			}
		}
		i += semi + 1
	}
	return buf
}

// charRef decodes the character reference ent ("#65", "#x41").
func charRef(ent []byte) (rune, bool) {
	if len(ent) < 2 || ent[0] != '#' {
		return 0, false
	}
	var c rune
	if ent[1] == 'x' || ent[1] == 'X' {
		if len(ent) == 2 {
			return 0, false
		}
		for _, d := range ent[2:] {
			switch {
			case '0' <= d && d <= '9':
				c = c<<4 | rune(d-'0')
			case 'a' <= d|0x20 && d|0x20 <= 'f':
				c = c<<4 | rune(d|0x20-'a'+10)
			default:
				return 0, false
			}
		}
	} else {
		for _, d := range ent[1:] {
			if d < '0' || d > '9' {
				return 0, false
			}
			c = c*10 + rune(d-'0')
		}
	}
	return c, c <= utf8.MaxRune
}
