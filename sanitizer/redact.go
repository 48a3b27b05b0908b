package sanitizer

import "strings"

// Redact returns a redacted copy of v, a value as encoding/json decodes it
// into an any: maps and slices are copied (v is never modified), strings go
// through [Redactor.RedactString], the values of sensitive keys become
// [Mask], and every other value is returned as is. Object keys are redacted
// like any string; should two keys of one map redact to the same text, one
// of their values is kept.
func (r *Redactor) Redact(v any) any {
	switch x := v.(type) {
	case string:
		return r.RedactString(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if isSensitiveKey(r, k) {
				out[r.RedactString(k)] = maskValue(e)
			} else {
				out[r.RedactString(k)] = r.Redact(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = r.Redact(e)
		}
		return out
	default:
		return v
	}
}

// maskValue is what becomes of the value of a sensitive key.
func maskValue(v any) any {
	if s, ok := v.(string); ok && strings.HasPrefix(s, maskedPrefix) {
		return s
	}
	return Mask
}
