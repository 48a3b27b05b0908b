// Package handoff carries a response's already-encoded result past
// go-sdk's re-encoding to the transport that writes it.
//
// go-sdk encodes a handler's result with encoding/json, which validates
// and compacts the output of every MarshalJSON it meets, byte by byte, and
// copies it twice on the way (jsonrpc2's jsonMarshal into a bytes.Buffer).
// The bridge's large results are already compact JSON: GitHub's 2.4 MB
// tools/list array comes from the tool cache as it was encoded, and a
// tools/call result is built from the upstream body. For those, the scan
// was the largest single cost of answering: ~15 ms for the list on this
// project's machine, as much for a 1 MiB answer.
//
// A transport that writes results itself (the bridge's stdio transport)
// puts a [Taker] in the context it gives go-sdk's Server.Connect; request
// contexts inherit it. A result's MarshalJSON then hands its bytes to the
// taker ([Taker.Put]) and gives go-sdk a short stand-in, a JSON string
// that no result can be (results are objects); the transport's Write
// exchanges the stand-in for the bytes ([Taker.Take]) and writes them in
// place. Without a taker in the context (streamable HTTP, SSE, tests),
// nothing changes.
package handoff

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"
)

// MinBytes is the size from which a result is handed off. Below it, what
// is saved (~4 µs a KiB) is lost in the noise of a call; 16 KiB takes in
// a 16 KiB answer, whose result (text block and structuredContent) is
// twice that.
const MinBytes = 16 << 10

// Taker holds handed-off results until the transport writes them.
type Taker struct {
	prefix []byte // `"\u0000handoff:<nonce>:`, unique to this taker

	mu      sync.Mutex
	next    uint64
	pending map[uint64][][]byte
}

// NewTaker returns a Taker whose stand-ins carry a nonce no other taker's
// do: the process's random one (what an upstream answer cannot guess, so
// no value from elsewhere can be taken for a stand-in) and a count. One
// is made per HTTP request: no system call per taker.
func NewTaker() *Taker {
	n := takers.Add(1)
	return &Taker{
		prefix:  []byte(`"\u0000handoff:` + processNonce() + "-" + strconv.FormatUint(n, 36) + ":"),
		pending: map[uint64][][]byte{},
	}
}

var (
	takers       atomic.Uint64
	processNonce = sync.OnceValue(func() string {
		var nonce [12]byte
		_, _ = rand.Read(nonce[:]) // never fails (crypto/rand)
		return hex.EncodeToString(nonce[:])
	})
)

type ctxKey struct{}

// WithTaker returns ctx carrying t.
func WithTaker(ctx context.Context, t *Taker) context.Context {
	return context.WithValue(ctx, ctxKey{}, t)
}

// FromContext returns the Taker ctx carries, or nil.
func FromContext(ctx context.Context) *Taker {
	t, _ := ctx.Value(ctxKey{}).(*Taker)
	return t
}

// Put keeps parts, whose concatenation is one compact JSON value, and
// returns the stand-in to give go-sdk in their place. The parts must not
// change until taken.
func (t *Taker) Put(parts ...[]byte) []byte {
	t.mu.Lock()
	t.next++
	id := t.next
	t.pending[id] = parts
	t.mu.Unlock()
	out := make([]byte, 0, len(t.prefix)+21)
	out = append(out, t.prefix...)
	out = strconv.AppendUint(out, id, 10)
	return append(out, '"')
}

// Take returns the parts a stand-in stands for and forgets them; ok is
// false when raw is not one of t's pending stand-ins (t may be nil).
func (t *Taker) Take(raw []byte) (parts [][]byte, ok bool) {
	if t == nil || len(raw) < len(t.prefix)+2 || raw[len(raw)-1] != '"' || !bytes.HasPrefix(raw, t.prefix) {
		return nil, false
	}
	id, err := strconv.ParseUint(string(raw[len(t.prefix):len(raw)-1]), 10, 64)
	if err != nil {
		return nil, false
	}
	t.mu.Lock()
	parts, ok = t.pending[id]
	delete(t.pending, id)
	t.mu.Unlock()
	return parts, ok
}

// Prefix is how every stand-in of t begins.
func (t *Taker) Prefix() []byte { return t.prefix }

// Pending is how many handed-off results wait to be taken.
func (t *Taker) Pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending)
}

// Drop forgets every pending result (the connection closed before they
// were written). t may be nil.
func (t *Taker) Drop() {
	if t == nil {
		return
	}
	t.mu.Lock()
	clear(t.pending)
	t.mu.Unlock()
}

// Compact reports whether b, valid JSON, is as encoding/json's compaction
// leaves it (what go-sdk would write): no whitespace outside strings. A
// handed-off result must be: it is written as it is, and a newline in it
// would end the stdio message. Valid JSON has no control character inside
// a string, so any newline, carriage return or tab fails the check
// outright; spaces are looked for between strings only.
//
// go-sdk's encoding would also have refused invalid JSON. That is not
// checked in full here (the scan is the cost saved), but a value cut
// short is: brackets must balance and the last string must end.
//
// It jumps from quote to quote (bytes.IndexByte), so it costs a fraction
// of the compaction it stands in for.
func Compact(b []byte) bool {
	if bytes.IndexByte(b, '\n') >= 0 || bytes.IndexByte(b, '\r') >= 0 || bytes.IndexByte(b, '\t') >= 0 {
		return false
	}
	depth := 0
	outside := func(seg []byte) bool {
		for _, c := range seg {
			switch c {
			case ' ':
				return false
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth < 0 {
					return false
				}
			}
		}
		return true
	}
	for i := 0; i < len(b); {
		// Outside a string, up to the next quote.
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return outside(b[i:]) && depth == 0
		}
		if !outside(b[i : i+j]) {
			return false
		}
		i += j + 1
		// Inside the string, to its closing quote: one preceded by an
		// even number of backslashes.
		for {
			k := bytes.IndexByte(b[i:], '"')
			if k < 0 {
				return false // unterminated: not valid JSON
			}
			n := 0
			for p := i + k - 1; p >= i && b[p] == '\\'; p-- {
				n++
			}
			i += k + 1
			if n%2 == 0 {
				break
			}
		}
	}
	return depth == 0
}
