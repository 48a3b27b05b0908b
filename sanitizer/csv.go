package sanitizer

import "bytes"

// maxCSVColumns bounds the header fields read for sensitive column names:
// a wider header is some other text, not a table anyone exports.
const maxCSVColumns = 4096

// redactCSV redacts a delimited table (text/csv, text/tab-separated-values)
// in place: the text rules (redactText), and every value in a column whose
// header names a sensitive key (a users export's "password_hash" or
// "api_key" column), quoted or not, embedded line breaks and doubled
// quotes understood. sep is the delimiter; a comma-separated header that
// holds no comma but semicolons (a spreadsheet's export in a decimal-comma
// locale) is read with ';'. The first line is taken for a header: a table
// without one whose first row holds a sensitive word loses that column.
func (r *Redactor) redactCSV(body []byte, sep byte) ([]byte, int) {
	iv, quoted := r.lenientSpans(body)
	iv = r.csvSpans(body, sep, iv)
	return replaceQuoted(body, iv, quoted)
}

// csvSpans appends the spans of the values in the sensitive columns of the
// table b.
func (r *Redactor) csvSpans(b []byte, sep byte, iv []span) []span {
	if sep == ',' {
		if first := b[:lineEnd(b, 0)]; bytes.IndexByte(first, ',') < 0 && bytes.IndexByte(first, ';') >= 0 {
			sep = ';'
		}
	}
	var sens []bool // by column: the header names a sensitive key
	named := false
	col := 0
	header := true
	for i := 0; i <= len(b); {
		lo, hi, next, end := csvField(b, i, sep)
		if header {
			if col < maxCSVColumns {
				name := bytes.TrimSpace(b[lo:hi])
				s := len(name) > 0 && isSensitiveKey(r, name)
				sens = append(sens, s)
				named = named || s
			}
		} else if col < len(sens) && sens[col] && lo < hi && !keepMasked(r, b[lo:hi]) {
			iv = append(iv, span{lo, hi})
		}
		col++
		if end {
			if header && !named {
				return iv // no sensitive column: nothing more to read
			}
			header, col = false, 0
		}
		if next >= len(b) {
			break
		}
		i = next
	}
	return iv
}

// csvField reads the field starting at b[i]: its contents b[lo:hi] (inside
// the quotes of a quoted field; without a line end's CR), the offset after
// its delimiter or line break, and whether it ends its record. A stray
// quote or a quoted field never closed is read as far as it goes, never
// refused.
func csvField(b []byte, i int, sep byte) (lo, hi, next int, end bool) {
	if i < len(b) && b[i] == '"' {
		lo = i + 1
		j := lo
		for j < len(b) {
			q := bytes.IndexByte(b[j:], '"')
			if q < 0 {
				return lo, len(b), len(b), true
			}
			j += q
			if j+1 < len(b) && b[j+1] == '"' {
				j += 2 // a doubled quote inside the field
				continue
			}
			break
		}
		hi = min(j, len(b))
		// Skip to the delimiter or the line end after the closing quote.
		k := min(j+1, len(b))
		for k < len(b) && b[k] != sep && b[k] != '\n' {
			k++
		}
		if k >= len(b) {
			return lo, hi, len(b), true
		}
		return lo, hi, k + 1, b[k] == '\n'
	}
	lo = i
	k := i
	for k < len(b) && b[k] != sep && b[k] != '\n' {
		k++
	}
	hi = k
	if hi > lo && b[hi-1] == '\r' && (k >= len(b) || b[k] == '\n') {
		hi--
	}
	if k >= len(b) {
		return lo, hi, len(b), true
	}
	return lo, hi, k + 1, b[k] == '\n'
}
