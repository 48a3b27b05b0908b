package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxDrain bounds how long ServeStdio waits, after the client closed its
// end, for answers to the requests it had already sent. Calls carry their
// own deadlines (30 s by default), so this is a backstop.
const maxDrain = 2 * time.Minute

// drain makes end-of-input on stdio wait for the answers to every request
// read so far: a client that writes its requests and closes stdin at once
// (`printf ... | mcpbridge serve`) still gets all its responses, where
// go-sdk would otherwise close the session with calls in flight.
//
// frameReader counts the requests (calls) it hands to go-sdk; the writer
// counts responses on the way out (an id and no method: go-sdk writes
// jsonrpc, id, method, params, result, error in that order). Error answers
// frameReader writes itself bypass the count, as do the lines it refused.
type drain struct {
	mu       sync.Mutex
	changed  chan struct{} // closed and replaced whenever pending drops
	pending  int
	stopping bool                // a signal came: no new call is taken
	ids      map[string]struct{} // ids (JSON text) of the calls not yet answered
	// cancelled holds the ids of unanswered calls the client cancelled
	// (notifications/cancelled), whose answers are not written; ncancelled
	// is its size, read without the lock on every response.
	cancelled  map[string]struct{}
	ncancelled atomic.Int32

	outPrefix []byte // the start of the current output line (up to outPeek bytes)
	outSeen   bool   // the current output line is already classified
}

const outPeek = 256

func newDrain() *drain {
	return &drain{changed: make(chan struct{}), ids: map[string]struct{}{}, cancelled: map[string]struct{}{}}
}

// maxTrackedID is the longest id (JSON text) whose reuse is detected; a
// response's id must fit in outPeek to be read back.
const maxTrackedID = 128

// call records a request handed to go-sdk, which will be answered. It
// reports false, recording nothing, when a call with the same id is still
// unanswered: go-sdk drops such a duplicate without a word ("request ID
// already in use" goes nowhere), so the client would wait forever and
// end-of-input would wait maxDrain for an answer that never comes.
func (d *drain) call(id []byte) callVerdict {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopping {
		return callStopping
	}
	if len(id) > 0 && len(id) <= maxTrackedID {
		if _, dup := d.ids[string(id)]; dup {
			return callDuplicate
		}
		d.ids[string(id)] = struct{}{}
	}
	d.pending++
	return callTaken
}

// callVerdict is what drain.call made of a call.
type callVerdict int

const (
	callTaken     callVerdict = iota
	callDuplicate             // its id is in use by a call not yet answered
	callStopping              // the server is stopping: refuse it
)

// stop makes call refuse every later call; the calls already taken are
// still answered.
func (d *drain) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopping = true
}

// state is the number of calls not yet answered, and a channel closed when
// it next drops.
func (d *drain) state() (int, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.pending, d.changed
}

// writer wraps out.
func (d *drain) writer(out io.WriteCloser) io.WriteCloser { return &drainWriter{d: d, out: out} }

type drainWriter struct {
	d   *drain
	out io.WriteCloser
}

func (w *drainWriter) Write(p []byte) (int, error) {
	// Ids are freed before the write: a client may reuse an id as soon as
	// it has read the answer. The count drops after it, so that wait
	// returns only once the last answer is out.
	answered := w.d.sawOutput(p)
	n, err := w.out.Write(p)
	w.d.answered(answered)
	return n, err
}

// writeParts is Write for one message in pieces: the pieces are
// classified together, then written through out's writeParts (or joined,
// for an out without it).
func (w *drainWriter) writeParts(parts ...[]byte) error {
	answered := w.d.sawOutput(parts...)
	var err error
	if pw, ok := w.out.(partsWriter); ok {
		err = pw.writeParts(parts...)
	} else {
		_, err = w.out.Write(bytes.Join(parts, nil))
	}
	w.d.answered(answered)
	return err
}

func (w *drainWriter) Close() error { return w.out.Close() }

// sawOutput classifies the output lines the pieces end or continue (read
// in order, as one write), frees the ids of the responses among them and
// returns how many there are.
func (d *drain) sawOutput(pieces ...[]byte) (responses int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range pieces {
		responses += d.sawPiece(p)
	}
	return responses
}

// sawPiece is sawOutput for one piece, with d.mu held.
func (d *drain) sawPiece(p []byte) (responses int) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !d.outSeen {
			room := outPeek - len(d.outPrefix)
			d.outPrefix = append(d.outPrefix, chunk[:min(room, len(chunk))]...)
			if len(d.outPrefix) >= outPeek || i >= 0 {
				if id, ok := outputResponseID(d.outPrefix); ok {
					delete(d.ids, string(id))
					d.forget(id)
					responses++
				}
				d.outSeen = true
			}
		}
		if i < 0 {
			return responses
		}
		d.outPrefix = d.outPrefix[:0]
		d.outSeen = false
		p = p[i+1:]
	}
	return responses
}

// cancel records that the client cancelled the call with this id (its
// idKey), if that call is still unanswered: its answer will not be
// written. A call already answered, or an id never seen, is ignored, so
// that a late notification cannot silence a later call reusing the id.
func (d *drain) cancel(id []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, pending := d.ids[string(id)]; !pending {
		return
	}
	if _, seen := d.cancelled[string(id)]; !seen {
		d.cancelled[string(id)] = struct{}{}
		d.ncancelled.Add(1)
	}
}

// forget removes id from the cancelled calls, with d.mu held.
func (d *drain) forget(id []byte) {
	if _, ok := d.cancelled[string(id)]; ok {
		delete(d.cancelled, string(id))
		d.ncancelled.Add(-1)
	}
}

// dropAnswer reports whether the answer to the call with this id is to be
// left unwritten, the client having cancelled the call; if so the call is
// counted as answered and its id freed.
func (d *drain) dropAnswer(id jsonrpc.ID) bool {
	if d == nil || d.ncancelled.Load() == 0 {
		return false
	}
	key := idKey(id.Raw())
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.cancelled[string(key)]; !ok {
		return false
	}
	d.forget(key)
	delete(d.ids, string(key))
	d.pending--
	close(d.changed)
	d.changed = make(chan struct{})
	return true
}

// answered records n responses written.
func (d *drain) answered(n int) {
	if n == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending -= n
	close(d.changed)
	d.changed = make(chan struct{})
}

// wait blocks until every request read has been answered, or max passes.
func (d *drain) wait(max time.Duration) {
	deadline := time.NewTimer(max)
	defer deadline.Stop()
	for {
		d.mu.Lock()
		pending, changed := d.pending, d.changed
		d.mu.Unlock()
		if pending <= 0 {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			return
		}
	}
}

// outputResponseID reads the first keys of an output message: a response has an
// id that is not followed by a method. It returns the id as canonical JSON
// text ([idKey]; nil if it did not fit in the prefix).
func outputResponseID(prefix []byte) (id []byte, ok bool) {
	if id, isResponse, plain := plainResponseID(prefix); plain {
		return id, isResponse
	}
	return decodeResponseID(prefix)
}

// decodeResponseID is outputResponseID for any prefix, with a JSON decoder.
func decodeResponseID(prefix []byte) (id []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	sawID := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, _ := tok.(string)
		switch key {
		case "method":
			return nil, false
		case "result", "error":
			return id, sawID
		case "params":
			return nil, false // a request or notification (method comes first)
		case "id":
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, sawID
			}
			sawID, id = true, idKey(v)
			continue
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, false
		}
	}
	return nil, false
}

// idKey is the JSON text of an id (a string, an int64 or a json.Number),
// the same for a request's id as read and for its response's as written.
func idKey(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
