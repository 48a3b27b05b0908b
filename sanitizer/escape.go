package sanitizer

import (
	"unicode/utf16"
	"unicode/utf8"
)

// unescape decodes the escape at src[j] ('\\') onto buf, as encoding/json
// decodes it: a lone or mismatched surrogate becomes U+FFFD. It returns the
// offset after the escape, or ok false with the offset of the offending
// byte (len(src) when the input ends).
func unescape(buf, src []byte, j int) (_ []byte, next int, ok bool) {
	if j+1 >= len(src) {
		return buf, len(src), false
	}
	switch c := src[j+1]; c {
	case '"', '\\', '/':
		return append(buf, c), j + 2, true
	case 'b':
		return append(buf, '\b'), j + 2, true
	case 'f':
		return append(buf, '\f'), j + 2, true
	case 'n':
		return append(buf, '\n'), j + 2, true
	case 'r':
		return append(buf, '\r'), j + 2, true
	case 't':
		return append(buf, '\t'), j + 2, true
	case 'u':
		rr, bad := hex4(src, j+2)
		if bad >= 0 {
			return buf, bad, false
		}
		j += 6
		if utf16.IsSurrogate(rr) {
			if j+1 < len(src) && src[j] == '\\' && src[j+1] == 'u' {
				if rr1, bad := hex4(src, j+2); bad < 0 {
					if dec := utf16.DecodeRune(rr, rr1); dec != utf8.RuneError {
						return utf8.AppendRune(buf, dec), j + 6, true
					}
				}
			}
			rr = utf8.RuneError
		}
		return utf8.AppendRune(buf, rr), j, true
	default:
		return buf, j + 1, false
	}
}

// hex4 reads the four hex digits at src[j:]. bad is -1, or the offset of
// the first byte that is not a hex digit (len(src) when the input ends).
func hex4(src []byte, j int) (r rune, bad int) {
	for k := j; k < j+4; k++ {
		if k >= len(src) {
			return 0, len(src)
		}
		c := src[k]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, k
		}
		r = r<<4 | rune(c)
	}
	return r, -1
}

// appendEscaped appends the JSON string contents for s (without quotes)
// exactly as encoding/json's Marshal writes them: HTML-sensitive bytes,
// control bytes, U+2028 and U+2029 escaped and invalid UTF-8 replaced by
// \ufffd.
func appendEscaped(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRune(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}
