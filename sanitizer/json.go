package sanitizer

import (
	"encoding/binary"
	"strconv"
)

// maxDepth is encoding/json's nesting limit; deeper documents are invalid.
const maxDepth = 10000

// maskJSON is Mask as a JSON string.
const maskJSON = `"` + Mask + `"`

// SyntaxError reports why [Redactor.RedactJSON] rejected its input.
type SyntaxError struct {
	// Offset is the byte offset in the input at which the problem was
	// found; the input's length when it ends too early.
	Offset int
	// Msg describes the problem.
	Msg string
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return "invalid JSON at offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// jsonState is one RedactJSON run. States are pooled so that the scratch
// buffers survive between calls.
//
// Output is lazy: src[pend:] up to the current offset is owed to dst and
// copied only when something must differ (white space to drop, a string
// to mask) or at the end, so a compact document without secrets is copied
// with a single append.
type jsonState struct {
	r      *Redactor
	src    []byte
	dst    []byte
	pend   int    // start of the part of src not yet copied to dst
	buf    []byte // a decoded string
	iv     []span
	depth  int
	err    *SyntaxError
	masked bool  // the last string read starts with "MASKED:" and had nothing masked
	key    bool  // the last string read is a sensitive member name
	kv     uint8 // the last member name read is a label or value name (kv*)
	esc    bool  // the last string read had escapes: s.buf holds it decoded
	n      int   // masks so far
	vals   []valPos
	nest   int // how many JSON documents quoted in a string this one is inside
}

// valPos is a "value" member's value already written, dst[lo:hi], with
// the masks counted inside it: masked whole should a sensitive label
// follow it in its object.
type valPos struct{ lo, hi, n int }

// RedactJSON appends to dst a compact copy of the JSON document src with
// every secret masked, and returns the extended buffer. It reads src once,
// without decoding it into Go values. When src is not valid JSON (by the
// rules of encoding/json's Valid) it returns dst unchanged and a
// *[SyntaxError]. dst must not overlap src: the output can be longer than
// the input.
func (r *Redactor) RedactJSON(dst, src []byte) ([]byte, error) {
	r = r.current()
	out, n, err := r.redactJSON(dst, src)
	r.counted(n)
	return out, err
}

// redactJSON is RedactJSON, returning the number of masks.
func (r *Redactor) redactJSON(dst, src []byte) ([]byte, int, error) {
	return r.redactJSONNest(dst, src, 0)
}

// maxNestedJSON bounds how deep JSON quoted in a JSON string (quoted in
// a JSON string...) is redacted as JSON.
const maxNestedJSON = 4

// redactJSONNest is redactJSON for a document nest strings deep.
func (r *Redactor) redactJSONNest(dst, src []byte, nest int) ([]byte, int, error) {
	st := r.states.Get().(*jsonState)
	st.r, st.src, st.dst, st.pend, st.depth, st.err, st.n, st.vals, st.nest = r, src, dst, 0, 0, nil, 0, st.vals[:0], nest
	st.pend = st.space(0)
	i := st.value(st.pend)
	if i >= 0 {
		st.flush(i)
		if j := st.space(i); j < len(src) {
			i = st.fail(j, "invalid character "+quoteByte(src[j])+" after top-level value")
		}
	}
	out, err, n := st.dst, st.err, st.n
	st.r, st.src, st.dst, st.err = nil, nil, nil, nil
	if cap(st.buf) > 64<<10 {
		st.buf = nil
	}
	r.states.Put(st)
	if i < 0 {
		return dst, 0, err
	}
	return out, n, nil
}

// flush copies what is owed up to src[i] to dst.
func (s *jsonState) flush(i int) {
	s.dst = append(s.dst, s.src[s.pend:i]...)
	s.pend = i
}

// fail records a syntax error at offset i and returns -1.
func (s *jsonState) fail(i int, msg string) int {
	s.err = &SyntaxError{Offset: i, Msg: msg}
	return -1
}

// eof records an unexpected end of input and returns -1.
func (s *jsonState) eof() int {
	return s.fail(len(s.src), "unexpected end of JSON input")
}

// quoteByte formats c for an error message, as encoding/json does.
func quoteByte(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

// space skips white space from src[i], dropping it from the output.
func (s *jsonState) space(i int) int {
	if i >= len(s.src) || s.src[i] > ' ' {
		return i // compact input: no space here
	}
	return s.skipSpace(i)
}

// skipSpace is space past its fast path. Indentation goes eight spaces at
// a time.
func (s *jsonState) skipSpace(i int) int {
	src := s.src
	j := i
	for j < len(src) {
		switch src[j] {
		case ' ':
			if j+8 <= len(src) && binary.LittleEndian.Uint64(src[j:]) == 0x2020202020202020 {
				j += 8
				continue
			}
			j++
			continue
		case '\t', '\n', '\r':
			j++
			continue
		}
		break
	}
	if j > i {
		s.flush(i)
		s.pend = j
	}
	return j
}

// value reads the value at src[i] (no leading space) and returns the
// offset after it, or -1.
func (s *jsonState) value(i int) int {
	if i >= len(s.src) {
		return s.eof()
	}
	switch c := s.src[i]; c {
	case '"':
		return s.str(i, false)
	case '{':
		return s.object(i)
	case '[':
		return s.array(i)
	case 't':
		return s.literal(i, "true")
	case 'f':
		return s.literal(i, "false")
	case 'n':
		return s.literal(i, "null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return s.number(i)
		}
		return s.fail(i, "invalid character "+quoteByte(c)+" looking for beginning of value")
	}
}

func (s *jsonState) object(i int) int {
	if s.depth++; s.depth > maxDepth {
		return s.fail(i, "exceeded max depth")
	}
	src := s.src
	if i = s.space(i + 1); i < len(src) && src[i] == '}' {
		s.depth--
		return i + 1
	}
	// labelled: a "name" or "key" member names a sensitive key, so the
	// "value" members are sensitive ({"name":"DB_PASSWORD","value":"..."});
	// s.vals[base:] are those written before it was known.
	labelled, base := false, len(s.vals)
	for {
		if i >= len(src) {
			return s.eof()
		}
		if src[i] != '"' {
			return s.fail(i, "invalid character "+quoteByte(src[i])+" looking for beginning of object key string")
		}
		if i = s.str(i, true); i < 0 {
			return -1
		}
		sensitive, kv := s.key, s.kv
		if kv == kvValue && labelled {
			sensitive = true
		}
		if i = s.space(i); i >= len(src) {
			return s.eof()
		}
		if src[i] != ':' {
			return s.fail(i, "invalid character "+quoteByte(src[i])+" after object key")
		}
		start := s.space(i + 1)
		if sensitive || kv == kvValue {
			s.flush(start)
		}
		mark, nmark := len(s.dst), s.n
		if i = s.value(start); i < 0 {
			return -1
		}
		// A boolean or null carries no secret: it stays, keeping the
		// answer's types ({"secret": false}, {"api_key": null}), as a
		// strict output schema and an agent's logic expect.
		clean := src[start] == '"' && s.masked || isLiteral(src[start])
		switch {
		case sensitive && !clean:
			s.dst = append(s.dst[:mark], maskJSON...)
			s.pend = i
			s.n = nmark + 1
		case kv == kvValue && !clean:
			s.flush(i)
			s.vals = append(s.vals, valPos{mark, len(s.dst), s.n - nmark})
		case kv == kvLabel && !labelled && src[start] == '"' && s.labelNamesSecret(start, i):
			labelled = true
			s.maskValues(base)
		}
		if i = s.space(i); i >= len(src) {
			return s.eof()
		}
		switch src[i] {
		case ',':
			i = s.space(i + 1)
		case '}':
			s.depth--
			s.vals = s.vals[:base]
			return i + 1
		default:
			return s.fail(i, "invalid character "+quoteByte(src[i])+" after object key:value pair")
		}
	}
}

// labelNamesSecret reports whether the string src[start:end], the value
// str just read, is a sensitive key name.
func (s *jsonState) labelNamesSecret(start, end int) bool {
	v := s.src[start+1 : end-1]
	if s.esc {
		v = s.buf
	}
	r := s.r
	return (r.words && mayEnd(v) || r.keyMax != 0) && sensitiveKey(r, v)
}

// maskValues masks the values recorded in s.vals[base:], last first so
// that the earlier offsets hold.
func (s *jsonState) maskValues(base int) {
	for k := len(s.vals) - 1; k >= base; k-- {
		v := s.vals[k]
		d := s.dst
		tail := d[v.hi:]
		nl := v.lo + len(maskJSON)
		if nl > v.hi {
			d = append(d, make([]byte, nl-v.hi)...)
		}
		copy(d[nl:], tail)
		copy(d[v.lo:], maskJSON)
		s.dst = d[:nl+len(tail)]
		s.n += 1 - v.n
	}
	s.vals = s.vals[:base]
}

func (s *jsonState) array(i int) int {
	if s.depth++; s.depth > maxDepth {
		return s.fail(i, "exceeded max depth")
	}
	src := s.src
	if i = s.space(i + 1); i < len(src) && src[i] == ']' {
		s.depth--
		return i + 1
	}
	for {
		if i = s.value(i); i < 0 {
			return -1
		}
		if i = s.space(i); i >= len(src) {
			return s.eof()
		}
		switch src[i] {
		case ',':
			i = s.space(i + 1)
		case ']':
			s.depth--
			return i + 1
		default:
			return s.fail(i, "invalid character "+quoteByte(src[i])+" after array element")
		}
	}
}

// isLiteral reports whether c starts a JSON literal (true, false, null).
func isLiteral(c byte) bool {
	return c == 't' || c == 'f' || c == 'n'
}

func (s *jsonState) literal(i int, lit string) int {
	src := s.src
	for k := 0; k < len(lit); k++ {
		if i+k >= len(src) {
			return s.eof()
		}
		if src[i+k] != lit[k] {
			return s.fail(i+k, "invalid character "+quoteByte(src[i+k])+" in literal "+lit+" (expecting "+quoteByte(lit[k])+")")
		}
	}
	return i + len(lit)
}

// number reads the number at src[i], checking its grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *jsonState) number(i int) int {
	src := s.src
	if src[i] == '-' {
		i++
	}
	switch {
	case i >= len(src):
		return s.eof()
	case src[i] == '0':
		i++
	case '1' <= src[i] && src[i] <= '9':
		i = digits(src, i+1)
	default:
		return s.fail(i, "invalid character "+quoteByte(src[i])+" in numeric literal")
	}
	if i < len(src) && src[i] == '.' {
		if i++; i >= len(src) {
			return s.eof()
		}
		if src[i] < '0' || src[i] > '9' {
			return s.fail(i, "invalid character "+quoteByte(src[i])+" after decimal point in numeric literal")
		}
		i = digits(src, i+1)
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		if i++; i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if i >= len(src) {
			return s.eof()
		}
		if src[i] < '0' || src[i] > '9' {
			return s.fail(i, "invalid character "+quoteByte(src[i])+" in exponent of numeric literal")
		}
		i = digits(src, i+1)
	}
	return i
}

// digits skips the decimal digits from src[i].
func digits(src []byte, i int) int {
	for i < len(src) && '0' <= src[i] && src[i] <= '9' {
		i++
	}
	return i
}
