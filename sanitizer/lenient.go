package sanitizer

// redactJSONLenient redacts a body announced as JSON that is not valid JSON
// (cut short, several documents, a stray byte), keeping its bytes: the
// value rules run over the whole text, every string holding escapes is
// also checked decoded (and masked whole when something matches), and the
// value after a sensitive "name": is masked: a string's contents, or the
// whole of any other value, up to its end or the end of the body. Should
// the result be valid JSON, it goes through RedactJSON, so that redacting
// twice changes nothing.
func (r *Redactor) redactJSONLenient(body []byte) ([]byte, int) {
	iv := valueSpans(r, body, nil, false)
	var buf []byte
	for i := 0; i < len(body); {
		if body[i] != '"' {
			i++
			continue
		}
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
		if j >= len(body) || body[j] != ':' || !isSensitiveKey(r, content) {
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
		if ve > v {
			iv = append(iv, span{v, ve})
		}
		i = ve
	}
	out, n := replaceSpans(body, iv)
	if n > 0 {
		if again, m, err := r.redactJSON(nil, out); err == nil {
			return again, n + m
		}
	}
	return out, n
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
