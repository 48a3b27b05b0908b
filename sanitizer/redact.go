package sanitizer

// Redact returns a redacted copy of v, a value as encoding/json decodes it
// into an any: maps and slices are copied (v is never modified), strings go
// through [Redactor.RedactString] (and a value "NAME=..." whose NAME is
// sensitive is masked after its "=", and one holding a JSON object or
// array is redacted as JSON), the values of sensitive keys (and the
// "value" of an object whose "name" or "key" names a sensitive key) become
// [Mask] (unless a boolean, null, or a string starting with "MASKED:" in
// which no value rule matches), and every other value is returned as is. Object keys are
// redacted like any string; should two keys of one map redact to the same
// text, one of their values is kept.
func (r *Redactor) Redact(v any) any {
	r = r.current()
	out, n := r.redact(v)
	r.counted(n)
	return out
}

// redact is Redact, returning the number of masks.
func (r *Redactor) redact(v any) (any, int) {
	switch x := v.(type) {
	case string:
		if red, n := r.quotedJSON([]byte(x), 0); n > 0 {
			return string(red), n
		}
		return r.redactSpans(x, envValue(r, x, nil))
	case map[string]any:
		out := make(map[string]any, len(x))
		total := 0
		labelled := false // a name or key member names a sensitive key
		for k, e := range x {
			if s, ok := e.(string); ok && kvKind(k) == kvLabel && isSensitiveKey(r, s) {
				labelled = true
				break
			}
		}
		for k, e := range x {
			rk, n := r.redactString(k)
			total += n
			if isSensitiveKey(r, k) || labelled && kvKind(k) == kvValue {
				switch s := e.(type) {
				case string:
					if keepMasked(r, s) {
						out[rk] = s
						continue
					}
				case bool, nil:
					out[rk] = e // a boolean or null carries no secret
					continue
				}
				out[rk] = Mask
				total++
				continue
			}
			out[rk], n = r.redact(e)
			total += n
		}
		return out, total
	case []any:
		out := make([]any, len(x))
		total := 0
		for i, e := range x {
			var n int
			out[i], n = r.redact(e)
			total += n
		}
		return out, total
	default:
		return v, 0
	}
}
