package sanitizer

import (
	"bytes"
	"mime"
	"strings"
)

// redactMultipart redacts a multipart body part by part, keeping its
// delimiters: each part's headers (a sensitive header's value masked, the
// value rules on the others) and its body by its own Content-Type (text/plain
// when it has none). The preamble and epilogue are text. ok is false when
// params name no boundary or the body holds no delimiter.
func (r *Redactor) redactMultipart(params string, body []byte, depth int) (out []byte, n int, ok bool) {
	_, ps, err := mime.ParseMediaType("multipart/mixed;" + params)
	boundary := ps["boundary"]
	if err != nil || boundary == "" {
		return nil, 0, false
	}
	delim := []byte("--" + boundary)
	pos := -1
	if bytes.HasPrefix(body, delim) {
		pos = 0
	} else if k := bytes.Index(body, append([]byte("\n"), delim...)); k >= 0 {
		pos = k + 1
	}
	if pos < 0 {
		return nil, 0, false
	}
	pre, m := r.redactText(body[:pos])
	out = append(out, pre...)
	n += m
	for pos < len(body) {
		// body[pos:] starts with a delimiter line.
		after := pos + len(delim)
		if hasAt(body, after, "--") { // the close delimiter: the epilogue is text
			out = append(out, body[pos:after+2]...)
			epi, m := r.redactText(body[after+2:])
			return append(out, epi...), n + m, true
		}
		// The rest of the delimiter line should be white space; whatever
		// it is, it is text.
		start := len(body)
		if eol := bytes.IndexByte(body[after:], '\n'); eol >= 0 {
			start = after + eol + 1
		}
		line, m := r.redactText(body[after:start])
		out = append(append(out, body[pos:after]...), line...)
		n += m
		if start == len(body) {
			return out, n, true
		}
		end, next := len(body), len(body)
		if k := bytes.Index(body[start:], append([]byte("\n"), delim...)); k >= 0 {
			next = start + k + 1
			end = start + k
			if end > start && body[end-1] == '\r' {
				end--
			}
		}
		part, m := r.redactPart(body[start:end], depth)
		out = append(out, part...)
		out = append(out, body[end:next]...)
		n += m
		pos = next
	}
	return out, n, true
}

// redactPart redacts one part: headers, blank line, body.
func (r *Redactor) redactPart(p []byte, depth int) ([]byte, int) {
	hend, bstart := -1, -1
	switch {
	case bytes.HasPrefix(p, []byte("\r\n")):
		hend, bstart = 0, 2
	case bytes.HasPrefix(p, []byte("\n")):
		hend, bstart = 0, 1
	default:
		if k := bytes.Index(p, []byte("\r\n\r\n")); k >= 0 {
			hend, bstart = k, k+4
		}
		if k := bytes.Index(p, []byte("\n\n")); k >= 0 && (hend < 0 || k < hend) {
			hend, bstart = k, k+2
		}
	}
	if hend < 0 { // no blank line: all headers, or a broken part
		return r.redactText(p)
	}
	var iv []span
	ctype := "text/plain"
	for lo := 0; lo < hend; {
		hi := bytes.IndexByte(p[lo:hend], '\n')
		if hi < 0 {
			hi = hend
		} else {
			hi += lo
		}
		line := p[lo:hi]
		if name, value, found := bytes.Cut(line, []byte(":")); found {
			vlo := lo + len(name) + 1
			vhi := hi
			for vlo < vhi && (p[vlo] == ' ' || p[vlo] == '\t') {
				vlo++
			}
			for vhi > vlo && (p[vhi-1] == '\r' || p[vhi-1] == ' ') {
				vhi--
			}
			name = bytes.TrimSpace(name)
			switch {
			case isSensitiveKey(r, name):
				if vhi > vlo && !keepMasked(r, p[vlo:vhi]) {
					iv = append(iv, span{vlo, vhi})
				}
			case strings.EqualFold(string(name), "Content-Type"):
				ctype = string(bytes.TrimSpace(value))
			}
		}
		lo = hi + 1
	}
	iv = valueSpans(r, p[:hend], iv, false)
	head, n := replaceSpans(p[:hend], iv)
	red, m := r.redactBody(ctype, p[bstart:], depth+1)
	out := make([]byte, 0, len(head)+bstart-hend+len(red))
	out = append(append(append(out, head...), p[hend:bstart]...), red...)
	return out, n + m
}
