package sanitizer

import "bytes"

// redactJSONLenient redacts JSON in place: a body announced as JSON that is
// not valid JSON (cut short, several documents, a stray byte), or text that
// may hold JSON. The value rules run over the whole text, every string
// holding escapes is also checked decoded (and masked whole when something
// matches), and the value after a sensitive "name": is masked: a string's
// contents, or any other value, up to its end or the end of the body, as
// the string "[REDACTED]". With compact, a result that is valid JSON goes
// through RedactJSON, so that redacting a JSON body twice changes nothing.
func (r *Redactor) redactJSONLenient(body []byte, compact bool) ([]byte, int) {
	iv, quoted := r.lenientSpans(body)
	out, n := replaceQuoted(body, iv, quoted)
	if n > 0 && compact {
		if again, m, err := r.redactJSON(nil, out); err == nil {
			return again, n + m
		}
	}
	return out, n
}

// lenientSpans returns the spans redactJSONLenient masks: iv as Mask, quoted
// (non-string values) as Mask in quotes.
func (r *Redactor) lenientSpans(body []byte) (iv, quoted []span) {
	return r.lenientSpansNest(body, 0)
}

// lenientSpansNest is lenientSpans for text nest JSON strings deep: a
// string that is no member name is also masked, whole when it has escapes,
// after the "=" of a sensitive "NAME=" it starts with (envValue), and
// whole when it holds JSON in which something is masked (as RedactJSON
// does for valid JSON).
func (r *Redactor) lenientSpansNest(body []byte, nest int) (iv, quoted []span) {
	iv = valueSpans(r, body, nil, false)
	var buf []byte
	for i := 0; i < len(body); {
		q := bytes.IndexByte(body[i:], '"')
		if q < 0 {
			break
		}
		i += q
		lo, hi, end, esc := lenientString(body, i)
		content := body[lo:hi]
		if esc {
			buf = lenientUnescape(buf[:0], content)
			content = buf
			if matches(r, buf) {
				iv = append(iv, span{lo, hi})
			}
		}
		i = end
		j := skipJSONSpace(body, i)
		if j >= len(body) || body[j] != ':' {
			if env := envValue(r, content, nil); len(env) > 0 {
				if esc {
					env[0] = span{0, hi - lo}
				}
				iv = append(iv, span{lo + env[0].lo, lo + env[0].hi})
			} else if esc && nest < maxNestedJSON && len(content) > 0 && (content[0] == '{' || content[0] == '[') {
				inner := append([]byte(nil), content...)
				if in, inq := r.lenientSpansNest(inner, nest+1); len(in)+len(inq) > 0 {
					iv = append(iv, span{lo, hi})
				}
			}
			continue
		}
		if !isSensitiveKey(r, content) {
			continue
		}
		v := skipJSONSpace(body, j+1)
		if v >= len(body) {
			break
		}
		if body[v] == '"' {
			vlo, vhi, vend, vesc := lenientString(body, v)
			val := body[vlo:vhi]
			if vesc {
				buf = lenientUnescape(buf[:0], val)
				val = buf
			}
			if !keepMasked(r, val) {
				iv = append(iv, span{vlo, vhi})
			}
			i = vend
			continue
		}
		ve := lenientValueEnd(body, v)
		// Compared in place: a copy would be the whole value when it is
		// an object or an array.
		if lit := body[v:ve]; string(lit) == "true" || string(lit) == "false" || string(lit) == "null" {
			i = ve // a boolean or null carries no secret
			continue
		}
		if ve > v {
			quoted = append(quoted, span{v, ve})
		}
		i = ve
	}
	return iv, quoted
}

// replaceQuoted is replaceSpans where the spans in quoted, which overlap
// no other, become Mask as a JSON string.
func replaceQuoted(b []byte, iv, quoted []span) ([]byte, int) {
	if len(quoted) == 0 {
		return replaceSpans(b, iv)
	}
	// A quoted span inside another span is masked by it: drop it.
	iv = mergeSpans(iv)
	var keep []span
	for _, q := range quoted {
		inside := false
		for _, s := range iv {
			if s.lo < q.hi && q.lo < s.hi {
				inside = true
				break
			}
		}
		if inside {
			iv = append(iv, q) // merged with what it overlaps, unquoted
		} else {
			keep = append(keep, q)
		}
	}
	iv = mergeSpans(append(iv, keep...))
	out := make([]byte, 0, len(b)+len(iv)*(len(Mask)+2))
	prev := 0
	for _, s := range iv {
		out = append(out, b[prev:s.lo]...)
		isQuoted := false
		for _, q := range keep {
			if q == s {
				isQuoted = true
				break
			}
		}
		if isQuoted {
			out = append(out, maskJSON...)
		} else {
			out = append(out, Mask...)
		}
		prev = s.hi
	}
	return append(out, b[prev:]...), len(iv)
}

// lenientString reads the string starting at b[i] ('"'): its contents are
// b[lo:hi], end is the offset after it, esc says it holds a backslash. An
// unterminated string runs to the end of b.
func lenientString(b []byte, i int) (lo, hi, end int, esc bool) {
	lo = i + 1
	for j := lo; j < len(b); j++ {
		switch b[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return lo, j, j + 1, esc
		}
	}
	return lo, len(b), len(b), esc
}

// lenientUnescape decodes the JSON string contents s onto buf, keeping
// what does not decode as it is.
func lenientUnescape(buf, s []byte) []byte {
	for j := 0; j < len(s); {
		if s[j] != '\\' {
			buf = append(buf, s[j])
			j++
			continue
		}
		out, next, ok := unescape(buf, s, j)
		if !ok {
			buf = append(buf, s[j])
			j++
			continue
		}
		buf, j = out, next
	}
	return buf
}

// skipJSONSpace skips JSON white space from b[i].
func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// lenientValueEnd returns the end of the value that is not a string
// starting at b[i]: an object or array up to its closing bracket (strings
// inside skipped), or the end of b; a scalar up to the next ',', '}', ']'
// or white space.
func lenientValueEnd(b []byte, i int) int {
	if c := b[i]; c != '{' && c != '[' {
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
			j++
		}
		return j
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			_, _, end, _ := lenientString(b, j)
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	return len(b)
}
