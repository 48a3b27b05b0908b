package sanitizer

import "bytes"

// str reads the string starting at src[i] ('"'), masking what the value
// rules match, and records in s.masked and s.key what it is. key says the
// string is a member name. It returns the offset after the closing quote,
// or -1.
//
// One loop finds the closing quote and rejects control bytes; where the
// first three bytes of a token appear, it asks matchAt whether a token
// starts there, reading on past the string's end if need be. Only when one
// does are the matchers run again, bounded by the string, from that point.
// A string with escapes continues in escaped.
func (s *jsonState) str(i int, key bool) int {
	r, src := s.r, s.src
	start := i + 1
	from := -1
	probe := scanState{probe: true}
	j := start
	// The main loop branches only where a special byte or a token's first
	// two bytes appear (then it checks the third); the tail loop covers the
	// last two bytes of src.
	for n2 := len(src) - 2; j < n2; j++ {
		f := r.first[src[j]]
		g := f & r.follow[src[j+1]]
		if g|f&(fQuote|fCtl|fEsc) == 0 {
			continue
		}
		if g &= r.third[src[j+2]]; g != 0 && from < 0 {
			if iv := matchAt(r, &probe, src, j, g, s.iv[:0]); len(iv) > 0 {
				from = j - start
			}
		}
		if f&(fQuote|fCtl|fEsc) == 0 {
			continue
		}
		if f&fQuote != 0 {
			goto found
		}
		if f&fEsc != 0 {
			return s.escaped(i, j, key)
		}
		return s.fail(j, "invalid character "+quoteByte(src[j])+" in string literal")
	}
	for ; j < len(src); j++ {
		switch f := r.first[src[j]]; {
		case f&fQuote != 0:
			goto found
		case f&fEsc != 0:
			return s.escaped(i, j, key)
		case f&fCtl != 0:
			return s.fail(j, "invalid character "+quoteByte(src[j])+" in string literal")
		}
	}
	return s.eof()
found:
	body, end := src[start:j], j+1
	s.esc = false
	s.masked = hasAt(body, 0, maskedPrefix)
	if key {
		s.key = (r.words && mayEnd(body) || r.keyMax != 0) && sensitiveKey(r, body) // isSensitiveKey, its first test inlined
		s.kv = kvKindBytes(body)
	}
	iv := s.iv[:0]
	if !key {
		if mayBeEnv(body) {
			iv = envValue(r, body, iv)
		}
	}
	if from < 0 && len(r.patterns) == 0 && len(iv) == 0 {
		return end
	}
	if from >= 0 {
		iv = scanMasks(r, body, from, iv)
	}
	iv = patternSpans(r.patterns, body, iv)
	if len(iv) > 0 {
		iv = mergeSpans(iv)
		s.flush(start)
		s.dst = appendMasked(s.dst, body, iv, false)
		s.pend = j
		s.masked = false
		s.n += len(iv)
	}
	s.iv = iv
	return end
}

// escaped is str for a string holding escapes, the first at src[j]: it
// decodes the string into s.buf, matches the decoded text and, when
// something is masked, writes the string re-encoded.
func (s *jsonState) escaped(i, j int, key bool) int {
	r, src := s.r, s.src
	buf := append(s.buf[:0], src[i+1:j]...)
	for {
		if j >= len(src) {
			return s.eof()
		}
		c := src[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			var ok bool
			if buf, j, ok = unescape(buf, src, j); !ok {
				if j >= len(src) {
					return s.eof()
				}
				return s.fail(j, "invalid character "+quoteByte(src[j])+" in string escape code")
			}
			continue
		}
		if c < 0x20 {
			return s.fail(j, "invalid character "+quoteByte(c)+" in string literal")
		}
		k := j + 1
		for k < len(src) && r.first[src[k]]&(fQuote|fCtl|fEsc) == 0 {
			k++
		}
		buf = append(buf, src[j:k]...)
		j = k
	}
	s.buf, s.esc = buf, true
	s.masked = hasAt(buf, 0, maskedPrefix)
	if key {
		s.key = (r.words && mayEnd(buf) || r.keyMax != 0) && sensitiveKey(r, buf)
		s.kv = kvKindBytes(buf)
	} else if red, n := r.quotedJSON(buf, s.nest); n > 0 {
		// A JSON document quoted in the string (a queued message, a log
		// line): its sensitive members are masked too.
		s.flush(i)
		s.dst = append(s.dst, '"')
		s.dst = appendEscaped(s.dst, red)
		s.dst = append(s.dst, '"')
		s.pend = j + 1
		s.masked = false
		s.n += n
		return j + 1
	}
	iv := s.iv[:0]
	if !key {
		if mayBeEnv(buf) {
			iv = envValue(r, buf, iv)
		}
	}
	iv = scanMasks(r, buf, 0, iv)
	iv = patternSpans(r.patterns, buf, iv)
	if len(iv) > 0 {
		iv = mergeSpans(iv)
		s.flush(i)
		s.dst = append(s.dst, '"')
		s.dst = appendMasked(s.dst, buf, iv, true)
		s.dst = append(s.dst, '"')
		s.pend = j + 1
		s.masked = false
		s.n += len(iv)
	}
	s.iv = iv
	return j + 1
}

// appendMasked appends s with the spans in iv replaced by Mask, escaping
// the rest as encoding/json does when escape is set and verbatim otherwise.
func appendMasked(dst, s []byte, iv []span, escape bool) []byte {
	prev := 0
	for _, m := range iv {
		if escape {
			dst = appendEscaped(dst, s[prev:m.lo])
		} else {
			dst = append(dst, s[prev:m.lo]...)
		}
		dst = append(dst, Mask...)
		prev = m.hi
	}
	if escape {
		return appendEscaped(dst, s[prev:])
	}
	return append(dst, s[prev:]...)
}

// mayBeEnv says whether a string may be "NAME=value": it holds an '='
// within the bytes a name (and two dashes) can take. Most strings hold
// none, and one IndexByte is cheaper than envValue's walk.
func mayBeEnv(b []byte) bool {
	if len(b) > maxKeyLen+3 {
		b = b[:maxKeyLen+3]
	}
	return bytes.IndexByte(b, '=') > 0
}

// envValue appends the span of the value of a string "NAME=value" whose
// NAME is sensitive: an environment entry as Docker's API lists them
// ("Env": ["DB_PASSWORD=..."]) or a "--client-secret=..." argument. Only
// the string's first maxKeyLen bytes are read to find the name.
func envValue[T text](r *Redactor, s T, iv []span) []span {
	i := 0
	for i < len(s) && i < 2 && s[i] == '-' {
		i++
	}
	j := i
	for j < len(s) && j-i <= maxKeyLen && r.cls[s[j]]&cTok != 0 {
		j++
	}
	if j == i || j+1 >= len(s) || s[j] != '=' || !isSensitiveKey(r, s[i:j]) || keepMasked(r, s[j+1:]) {
		return iv
	}
	if len(r.patterns) > 0 {
		// Should a configured pattern match the name followed by the
		// mask, a second pass would mask more: the whole string goes.
		probe := append([]byte(string(s[:j+1])), Mask...)
		for _, re := range r.patterns {
			if re.Match(probe) {
				return append(iv, span{0, len(s)})
			}
		}
	}
	return append(iv, span{j + 1, len(s)})
}

// quotedJSON is s, a string value nest documents deep, redacted as JSON
// when it holds an object or array (compact), and the number of masks; 0
// when it holds none, nothing was masked, or it is too deep.
func (r *Redactor) quotedJSON(s []byte, nest int) ([]byte, int) {
	k := 0
	for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r') {
		k++
	}
	if nest >= maxNestedJSON || k == len(s) || s[k] != '{' && s[k] != '[' {
		return nil, 0
	}
	red, n, err := r.redactJSONNest(nil, s, nest+1)
	if err != nil {
		return nil, 0
	}
	return red, n
}
