package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
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
	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever pending drops
	pending int

	outPrefix []byte // the start of the current output line (up to outPeek bytes)
	outSeen   bool   // the current output line is already classified
}

const outPeek = 256

func newDrain() *drain { return &drain{changed: make(chan struct{})} }

// call records a request handed to go-sdk, which will be answered.
func (d *drain) call() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending++
}

// writer wraps out.
func (d *drain) writer(out io.WriteCloser) io.WriteCloser { return &drainWriter{d: d, out: out} }

type drainWriter struct {
	d   *drain
	out io.WriteCloser
}

func (w *drainWriter) Write(p []byte) (int, error) {
	n, err := w.out.Write(p)
	w.d.sawOutput(p[:n])
	return n, err
}

func (w *drainWriter) Close() error { return w.out.Close() }

func (d *drain) sawOutput(p []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
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
				if isResponse(d.outPrefix) {
					d.pending--
					close(d.changed)
					d.changed = make(chan struct{})
				}
				d.outSeen = true
			}
		}
		if i < 0 {
			return
		}
		d.outPrefix = d.outPrefix[:0]
		d.outSeen = false
		p = p[i+1:]
	}
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

// isResponse reads the first keys of an output message: a response has an
// id that is not followed by a method.
func isResponse(prefix []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	sawID := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		key, _ := tok.(string)
		switch key {
		case "id":
			sawID = true
		case "method":
			return false
		case "result", "error":
			return sawID
		}
		if key == "params" {
			return false // a request or notification (method comes first)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}
