package sanitizer

import "bytes"

// redactConfig redacts configuration text (YAML, TOML, .env, properties,
// INI) in place: the text rules (redactText), and the value of every line
// "key: value", "key = value" or "export KEY=value" whose key is sensitive.
func (r *Redactor) redactConfig(body []byte) ([]byte, int) {
	iv, quoted := r.lenientSpans(body)
	iv = r.configSpans(body, iv)
	return replaceQuoted(body, iv, quoted)
}

// configSpans appends the spans of the values of sensitive keys, line by
// line.
func (r *Redactor) configSpans(b []byte, iv []span) []span {
	for lo := 0; lo < len(b); {
		hi := lineEnd(b, lo)
		next := min(hi+1, len(b))
		j := skipBlanks(b, lo, hi)
		indent := j - lo
		if hasAt(b, j, "- ") { // a YAML sequence item holding a mapping
			j = skipBlanks(b, j+2, hi)
		}
		if hasAt(b, j, "export ") {
			j = skipBlanks(b, j+7, hi)
		}
		klo, khi, k := configKey(b, j, hi)
		if k < 0 || !isSensitiveKey(r, b[klo:khi]) {
			lo = next
			continue
		}
		vlo := skipBlanks(b, k, hi)
		vhi := hi
		for vhi > vlo && (b[vhi-1] == ' ' || b[vhi-1] == '\t' || b[vhi-1] == '\r') {
			vhi--
		}
		if vlo == vhi {
			lo = next
			continue
		}
		switch c := b[vlo]; {
		case c == '"' || c == '\'':
			if e := bytes.IndexByte(b[vlo+1:vhi], c); e >= 0 {
				vhi = vlo + 1 + e
			}
			vlo++
		case c == '|' || c == '>':
			// A YAML block scalar: the lines indented deeper than the key.
			end := next
			for end < len(b) {
				e := lineEnd(b, end)
				if k := skipBlanks(b, end, e); k < e && k-end <= indent {
					break
				}
				end = min(e+1, len(b))
			}
			if end > next {
				iv = append(iv, span{next, end})
			}
			lo = end
			continue
		default:
			// A trailing comment is not part of the value.
			for k := vlo; k < vhi; k++ {
				if b[k] == '#' && (b[k-1] == ' ' || b[k-1] == '\t') {
					vhi = k
					for vhi > vlo && (b[vhi-1] == ' ' || b[vhi-1] == '\t') {
						vhi--
					}
					break
				}
			}
		}
		if vhi > vlo && !keepMasked(r, b[vlo:vhi]) {
			iv = append(iv, span{vlo, vhi})
		}
		lo = next
	}
	return iv
}

// configKey reads the key at b[j:hi]: bare (up to white space, ':' or '=')
// or quoted. k is the offset after its separator (':' followed by a blank or
// the end of the line, or '='), or -1 when the line is no key-value pair.
func configKey(b []byte, j, hi int) (klo, khi, k int) {
	if j >= hi || b[j] == '#' || b[j] == ';' || b[j] == '!' || b[j] == '[' {
		return 0, 0, -1
	}
	if q := b[j]; q == '"' || q == '\'' {
		e := bytes.IndexByte(b[j+1:hi], q)
		if e < 0 {
			return 0, 0, -1
		}
		klo, khi, k = j+1, j+1+e, j+2+e
	} else {
		klo, k = j, j
		for k < hi && b[k] != ':' && b[k] != '=' && b[k] != ' ' && b[k] != '\t' {
			k++
		}
		khi = k
	}
	k = skipBlanks(b, k, hi)
	switch {
	case khi == klo || k >= hi:
		return 0, 0, -1
	case b[k] == '=':
		return klo, khi, k + 1
	case b[k] == ':' && (k+1 == hi || b[k+1] == ' ' || b[k+1] == '\t' || b[k+1] == '\r'):
		return klo, khi, k + 1
	}
	return 0, 0, -1
}

// lineEnd returns the offset of the '\n' ending the line at b[lo], or len(b).
func lineEnd(b []byte, lo int) int {
	if e := bytes.IndexByte(b[lo:], '\n'); e >= 0 {
		return lo + e
	}
	return len(b)
}

// skipBlanks skips spaces and tabs in b[j:hi].
func skipBlanks(b []byte, j, hi int) int {
	for j < hi && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	return j
}
