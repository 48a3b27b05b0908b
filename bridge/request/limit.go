package request

import (
	"bytes"
	"fmt"
)

// DefaultMaxEncodedBytes is the limit [Plan.Build] puts on the query string
// and on the body that one call's arguments write.
const DefaultMaxEncodedBytes = 16 << 20

// maxQueryBytes caps a query string whatever the limit: a request line
// longer than 1 MiB is refused by common servers (Go's, for one, answers
// 431), so building one only spends memory.
const maxQueryBytes = 1 << 20

// DefaultMaxURLBytes is the longest request target (path and query) and
// header line that [Plan.Build] lets arguments make: nginx and Apache, in
// front of most APIs, answer 414 or 431 past 8 KiB, so a longer one is
// refused before it is sent, with the argument that made it.
const DefaultMaxURLBytes = 8 << 10

// TooLargeError is an encoded query string or body that would pass its
// limit. Encoding stops where it passes it, so memory stays within the
// limit whatever the arguments: a nested value writes its key path again
// for every value below it, so an object key of 100 KB over an array of
// 1,000 items would otherwise write 100 MB from 100 KB of arguments.
type TooLargeError struct {
	What  string // "query string" or "body"
	Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the %s these arguments make would pass %d bytes, the limit for one call (a nested value writes its key path again for every value below it: shorten the keys or send fewer items)", e.What, e.Limit)
}

// overLimit reports whether n passes limit (0: no limit).
func overLimit(n, limit int) bool { return limit > 0 && n > limit }

// capWriter writes to buf until a write would take it past limit (0: no
// limit), and then fails with a TooLargeError.
type capWriter struct {
	buf   *bytes.Buffer
	limit int
	what  string
}

func (w *capWriter) Write(p []byte) (int, error) {
	if overLimit(w.buf.Len()+len(p), w.limit) {
		return 0, &TooLargeError{What: w.what, Limit: w.limit}
	}
	return w.buf.Write(p)
}
