package sanitizer

import (
	"bytes"
	"compress/gzip"
	"io"
)

const (
	// maxGunzipRedact is the largest inflated gzip body redacted as a
	// whole (key rules included) and compressed again.
	maxGunzipRedact = 16 << 20
	// maxGunzipScan is how far a larger one is inflated, through a small
	// window, to look for value-rule matches; past it the body is
	// withheld whole, since a secret could sit beyond what was read (a
	// bomb of zeros in front of it costs an upstream a few KiB).
	maxGunzipScan = 64 << 20
	// gunzipWindow and gunzipOverlap size the scan's window: a match
	// shorter than the overlap is seen whole in one window.
	gunzipWindow  = 1 << 20
	gunzipOverlap = 64 << 10
)

// isGzip reports whether b starts like a gzip member (RFC 1952: the magic
// bytes and the deflate method).
func isGzip(b []byte) bool {
	return len(b) >= 10 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8
}

// redactGzip redacts a gzip body (a .gz attachment, or gzip an upstream
// sent without a Content-Encoding): its compressed bytes never hold a
// secret as such, so a scan of the bytes alone let an agent inflate what
// the upstream echoed.
//
// A first pass inflates the body through a fixed window, looking for
// value-rule matches and measuring it, so a bomb costs no memory. A body
// that inflates (as far as it does: a cut or corrupt stream is read up to
// the damage) to at most maxGunzipRedact is then inflated again whole and
// redacted at depth + 1 as a body of mediaType (of no media type for a
// binary body: gzip labelled as JSON, XML or text holds what its label
// says), key rules included; when something is masked, the redacted text
// is compressed again, so the agent still gets a gzip file. A larger body is kept as it is when the
// scan found no match within maxGunzipScan, and otherwise (a match, or
// more than maxGunzipScan) replaced whole by binMask bytes.
//
// ok is false when the body is not gzip after all (its header does not
// parse) or nothing inside it was masked: the caller then scans its bytes
// as those of any binary body (bytes after a damaged or foreign member are
// not inflated, but may hold a secret as such).
func (r *Redactor) redactGzip(mediaType string, body []byte, depth int) (out []byte, n int, ok bool) {
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, 0, false
	}
	found, total := false, 0
	win := make([]byte, gunzipOverlap+gunzipWindow)
	kept := 0
	for total <= maxGunzipScan {
		m, err := io.ReadFull(zr, win[kept:])
		total += m
		if !found && matchesMode(r, win[:kept+m], true) {
			found = true
			if total > maxGunzipRedact {
				break
			}
		}
		if err != nil {
			break // the end, or the damage: what inflated was scanned
		}
		kept = copy(win, win[len(win)-gunzipOverlap:])
	}
	withheld := bytes.Repeat([]byte{binMask}, len(body))
	if total > maxGunzipRedact {
		if found || total > maxGunzipScan {
			return withheld, 1, true
		}
		return nil, 0, false
	}
	zr, err = gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return withheld, 1, true
	}
	plain := make([]byte, 0, total)
	plain, err = readAllInto(zr, plain, total)
	red, n := r.redactBody(mediaType, plain, depth+1)
	if n == 0 {
		if err != nil && found {
			return withheld, 1, true
		}
		return nil, 0, false
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(red); err != nil {
		return withheld, n, true
	}
	if err := zw.Close(); err != nil {
		return withheld, n, true
	}
	return b.Bytes(), n, true
}

// readAllInto appends to buf what rd delivers, at most limit bytes, and
// the error that ended the read (nil at the end).
func readAllInto(rd io.Reader, buf []byte, limit int) ([]byte, error) {
	for len(buf) < limit {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		m, err := rd.Read(buf[len(buf):min(cap(buf), limit)])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}
