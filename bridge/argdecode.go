package bridge

import "unicode/utf8"

// decodeFlat decodes raw when it is one JSON object whose members are all
// strings without escapes, numbers, booleans or null, which is what most
// tool calls send. The result is the one decodeArgs' general path
// (encoding/json with UseNumber, then normalizeNumbers) gives, without
// reflection, a decoder and its buffer, or encoding/json's deep stack
// frames (see Catalog.call). ok is false for anything else: nested values,
// escapes, invalid UTF-8, malformed JSON or something after the object,
// all left to the general path, which decodes them or says what is wrong.
func decodeFlat(raw []byte) (args map[string]any, ok bool) {
	i := skipWS(raw, 0)
	if i == len(raw) || raw[i] != '{' {
		return nil, false
	}
	args = make(map[string]any)
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return args, skipWS(raw, i+1) == len(raw)
	}
	for {
		key, j, ok := plainString(raw, i)
		if !ok {
			return nil, false
		}
		i = skipWS(raw, j)
		if i == len(raw) || raw[i] != ':' {
			return nil, false
		}
		v, j, ok := flatScalar(raw, skipWS(raw, i+1))
		if !ok {
			return nil, false
		}
		args[key] = v
		i = skipWS(raw, j)
		if i == len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipWS(raw, i+1)
			continue
		case '}':
			return args, skipWS(raw, i+1) == len(raw)
		}
		return nil, false
	}
}

func skipWS(raw []byte, i int) int {
	for i < len(raw) {
		switch raw[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// plainString is the string at raw[i] when it has no escape and is valid
// UTF-8 (so that it decodes to its own bytes), and the index past it.
func plainString(raw []byte, i int) (string, int, bool) {
	if i == len(raw) || raw[i] != '"' {
		return "", i, false
	}
	ascii := true
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '"':
			s := raw[i+1 : j]
			if !ascii && !utf8.Valid(s) {
				return "", i, false
			}
			return string(s), j + 1, true
		case c == '\\' || c < 0x20:
			return "", i, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", i, false
}

// flatScalar is the string, number, boolean or null at raw[i], as
// decodeArgs represents it, and the index past it.
func flatScalar(raw []byte, i int) (any, int, bool) {
	if i == len(raw) {
		return nil, i, false
	}
	switch c := raw[i]; {
	case c == '"':
		s, j, ok := plainString(raw, i)
		return s, j, ok
	case c == 't':
		return true, i + 4, hasLiteral(raw, i, "true")
	case c == 'f':
		return false, i + 5, hasLiteral(raw, i, "false")
	case c == 'n':
		return nil, i + 4, hasLiteral(raw, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return flatNumber(raw, i)
	}
	return nil, i, false
}

func hasLiteral(raw []byte, i int, lit string) bool {
	return len(raw)-i >= len(lit) && string(raw[i:i+len(lit)]) == lit
}

// flatNumber scans the JSON number at raw[i] (strictly by the grammar) and
// converts it as normalizeNumbers does (exactNumber).
func flatNumber(raw []byte, i int) (any, int, bool) {
	j := i
	neg := raw[j] == '-'
	if neg {
		j++
	}
	digits := j
	switch {
	case j == len(raw):
		return nil, i, false
	case raw[j] == '0':
		j++
	case raw[j] >= '1' && raw[j] <= '9':
		for j < len(raw) && raw[j] >= '0' && raw[j] <= '9' {
			j++
		}
	default:
		return nil, i, false
	}
	integer := true
	if j < len(raw) && raw[j] == '.' {
		integer = false
		j++
		start := j
		for j < len(raw) && raw[j] >= '0' && raw[j] <= '9' {
			j++
		}
		if j == start {
			return nil, i, false
		}
	}
	if j < len(raw) && (raw[j] == 'e' || raw[j] == 'E') {
		integer = false
		j++
		if j < len(raw) && (raw[j] == '+' || raw[j] == '-') {
			j++
		}
		start := j
		for j < len(raw) && raw[j] >= '0' && raw[j] <= '9' {
			j++
		}
		if j == start {
			return nil, i, false
		}
	}
	if integer && j-digits <= 18 {
		// At most 18 digits always fit in an int64.
		var n int64
		for _, d := range raw[digits:j] {
			n = n*10 + int64(d-'0')
		}
		if neg {
			n = -n
		}
		return n, j, true
	}
	return exactNumber(string(raw[i:j])), j, true
}
