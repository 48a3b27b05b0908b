package sanitizer

import "bytes"

// redactForm redacts an application/x-www-form-urlencoded body, keeping its
// bytes: the value of every field whose decoded name is a sensitive key is
// masked (unless a clean "MASKED:" value), a name or value that matches a
// value rule once decoded is masked whole, and the value rules run over
// the raw body too.
func (r *Redactor) redactForm(body []byte) ([]byte, int) {
	iv := valueSpans(r, body, nil, false)
	var nbuf, vbuf []byte
	for lo := 0; lo < len(body); {
		hi := bytes.IndexByte(body[lo:], '&')
		if hi < 0 {
			hi = len(body)
		} else {
			hi += lo
		}
		pair := body[lo:hi]
		nameEnd := bytes.IndexByte(pair, '=')
		vlo := hi
		if nameEnd < 0 {
			nameEnd = len(pair)
		} else {
			vlo = lo + nameEnd + 1
		}
		// Components without escapes were scanned with the body.
		name, nesc := formComponent(&nbuf, pair[:nameEnd])
		if nesc && matches(r, name) {
			iv = append(iv, span{lo, lo + nameEnd})
		}
		val, vesc := formComponent(&vbuf, body[vlo:hi])
		switch {
		case vlo == hi:
		case isSensitiveKey(r, name):
			if !keepMasked(r, val) {
				iv = append(iv, span{vlo, hi})
			}
		case vesc && matches(r, val):
			iv = append(iv, span{vlo, hi})
		}
		lo = hi + 1
	}
	return replaceSpans(body, iv)
}

// formComponent returns s decoded (into *buf) and whether it held escapes.
func formComponent(buf *[]byte, s []byte) ([]byte, bool) {
	if bytes.IndexByte(s, '%') < 0 && bytes.IndexByte(s, '+') < 0 {
		return s, false
	}
	*buf = formDecode((*buf)[:0], s)
	return *buf, true
}

// formDecode appends s decoded as a form component ('+' is a space, %XX a
// byte) to buf; a '%' not followed by two hex digits is kept.
func formDecode(buf, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			buf = append(buf, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			buf = append(buf, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			buf = append(buf, c)
		}
	}
	return buf
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}
