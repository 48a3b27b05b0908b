package transport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.uber.org/zap"
)

var utf8BOM = []byte("\xef\xbb\xbf")

const (
	// idPeek is how much of a refused line is kept to recover its id.
	idPeek = 4 << 10
	// stdinBuffer is the read buffer on stdin.
	stdinBuffer = 64 << 10
	// keepLineBuffer is the largest line buffer kept for reuse: a buffer
	// grown by one huge message is dropped, not held for the session.
	keepLineBuffer = 1 << 20
)

// frameReader reads stdin for stdioConn and hands go-sdk only lines that
// are one valid JSON-RPC message each, decoded once. go-sdk ends the
// session on the first input it cannot decode (a line that is not JSON, an
// invalid id, a batch after 2025-06-18, a line over its size cap), and its
// streaming decoder reads a truncated line on into the next one. Here each
// line is a frame, checked before go-sdk sees it; a bad one is answered on
// stdout with a JSON-RPC error and dropped, and the session goes on:
//
//   - over maxBytes: discarded as it streams in (only its first idPeek bytes
//     are kept, to recover its id), then -32600;
//   - nested deeper than maxDepth (a byte scan, before any decoder): -32600;
//   - not JSON, or a truncated message: -32700;
//   - a batch (a JSON array): -32600 for each call in it. MCP removed
//     batching in 2025-06-18, and go-sdk's support for older revisions
//     depends on a protocol version the reader cannot see in time;
//   - JSON that is not a JSON-RPC message (go-sdk's own decoder decides):
//     -32600. So is a request whose id is null (go-sdk would take it for a
//     notification) and an id with neither a method nor a result or error
//     (go-sdk would drop it as an unexpected response).
//
// The error carries the message's id when the line's first keys show it
// (an "id" that is a number or a string, and a "method"), null otherwise.
// A last line without a newline before EOF is checked like any other.
type frameReader struct {
	in       *bufio.Reader
	src      io.Closer
	maxBytes int
	maxDepth int
	out      io.Writer // protocol output, shared with go-sdk's writes
	drain    *drain
	log      *zap.Logger

	line    []byte          // the line being read
	queued  jsonrpc.Message // a checked message not yet read by go-sdk
	inited  bool            // an initialize was handed to go-sdk
	err     error           // sticky: returned once queued is taken
	drained bool
}

func newFrameReader(in io.ReadCloser, out io.Writer, d *drain, o StdioOptions, log *zap.Logger) *frameReader {
	return &frameReader{
		in: bufio.NewReaderSize(in, stdinBuffer), src: in,
		maxBytes: o.MaxMessageBytes, maxDepth: o.MaxJSONDepth,
		out: out, drain: d, log: log,
	}
}

// nextMessage returns the next checked message, answering and dropping
// the lines it refuses on the way. At the end of input it first waits for
// the answers to the requests already handed over, then returns io.EOF.
func (f *frameReader) nextMessage() (jsonrpc.Message, error) {
	for f.queued == nil {
		if f.err != nil {
			if errors.Is(f.err, io.EOF) && !f.drained {
				f.drained = true
				f.drain.wait(maxDrain) // answer what was asked before the client left
			}
			return nil, f.err
		}
		f.next()
	}
	m := f.queued
	f.queued = nil
	return m, nil
}

func (f *frameReader) Close() error { return f.src.Close() }

// next reads one line and queues it for go-sdk or answers it.
func (f *frameReader) next() {
	line, tooLong, err := f.readLine()
	if err != nil && !errors.Is(err, io.EOF) {
		f.err = err
		return
	}
	// A byte order mark (Windows tools add one to what they pipe) is not
	// part of the message (RFC 8259 §8.1 lets a parser ignore it).
	line = bytes.TrimPrefix(bytes.TrimRight(line, "\r\n"), utf8BOM)
	if !tooLong && len(line) > f.maxBytes {
		tooLong, line = true, line[:min(len(line), idPeek)]
	}
	switch msg := bytes.TrimSpace(line); {
	case tooLong:
		f.refuse(recoverID(line), jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: message exceeds %d bytes", f.maxBytes))
	case len(msg) > 0:
		f.check(msg)
	}
	if err != nil && f.err == nil {
		f.err = err // io.EOF, once the last line is dealt with
	}
}

// readLine reads up to and including the next newline (or to EOF). A line
// longer than maxBytes plus its line terminator is not buffered: reading
// goes on to its newline, keeping only its first idPeek bytes.
func (f *frameReader) readLine() (line []byte, tooLong bool, err error) {
	if cap(f.line) > keepLineBuffer {
		f.line = nil
	}
	f.line = f.line[:0]
	for {
		chunk, err := f.in.ReadSlice('\n')
		switch {
		case tooLong:
		case len(f.line)+len(chunk) > f.maxBytes+len("\r\n"):
			tooLong = true
			if room := idPeek - len(f.line); room > 0 {
				f.line = append(f.line, chunk[:min(room, len(chunk))]...)
			}
			f.line = f.line[:min(len(f.line), idPeek)]
		default:
			f.line = append(f.line, chunk...)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return f.line, tooLong, err
		}
	}
}

// check queues msg for go-sdk, decoded, if it is a valid JSON-RPC message,
// and answers it otherwise. The decoded message may hold slices of the
// bytes it was decoded from (a request's params), so it is decoded from a
// copy: f.line is reused for the next line.
func (f *frameReader) check(msg []byte) {
	m, batch, code, text := inspectMessage(bytes.Clone(msg), f.maxDepth)
	switch {
	case batch:
		f.refuseBatch(msg)
	case code != 0:
		id := recoverID(msg)
		switch m := m.(type) {
		case *jsonrpc.Response:
			id = m.ID.Raw() // an id without a method, result or error
		case *jsonrpc.Request:
			id = callID(m) // a call with bad params
		}
		f.refuse(id, code, text)
	default:
		if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
			if !f.inited && beforeInitialize(req) {
				f.refuse(req.ID.Raw(), jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: %q before initialize: send initialize first (only ping may come before it)", req.Method))
				return
			}
			f.inited = f.inited || req.Method == "initialize"
			switch f.drain.call(idKey(req.ID.Raw())) {
			case callDuplicate:
				f.refuse(req.ID.Raw(), jsonrpc.CodeInvalidRequest, "Invalid Request: request id already in use by a call not yet answered")
				return
			case callStopping:
				f.refuse(req.ID.Raw(), codeShuttingDown, shuttingDown)
				return
			}
		}
		// Only as a notification: with an id, go-sdk refuses it ("unexpected
		// id") and cancels nothing, and the call it names will be answered.
		if req, ok := m.(*jsonrpc.Request); ok && !req.IsCall() && req.Method == methodCancelled {
			f.noteCancel(req.Params)
		}
		f.queued = m
	}
}

// beforeInitialize reports whether req, a call read before any initialize,
// is one go-sdk refuses until the handshake: it answers those with error
// code 0 ("method is invalid during session initialization"). initialize
// and ping pass, as do logging/setLevel and resources/(un)subscribe, which
// go-sdk serves before it (go-sdk issue #1271), and a request declaring
// its revision in params._meta (2026-07-28: no handshake), which go-sdk
// judges itself.
func beforeInitialize(req *jsonrpc.Request) bool {
	switch req.Method {
	case "initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe":
		return false
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(req.Params, &p) == nil && p.Meta["io.modelcontextprotocol/protocolVersion"] != nil {
		return false
	}
	return true
}

// noteCancel tells the drain of a notifications/cancelled, which go-sdk
// also gets (it ends the call's handler): the call's answer is then not
// written. The id is read as for the stateless call table (cancelledID),
// as go-sdk reads it to cancel the call.
func (f *frameReader) noteCancel(params json.RawMessage) {
	if id, ok := cancelledID(params); ok {
		f.drain.cancel(idKey(id.Raw()))
	}
}

// codeShuttingDown is the JSON-RPC error (in the range JSON-RPC 2.0 leaves
// to servers) of a request read after a signal: it will not be served.
const codeShuttingDown = -32000

const shuttingDown = "the server is shutting down: this request was not served"

const batchRefusal = "Invalid Request: JSON-RPC batches are not supported over stdio (MCP removed batching in 2025-06-18): send one message per line"

// refuseBatch answers a batch with an array holding an error for each call
// in it, so that the client's pending calls fail at once; a batch without
// calls gets a single error.
func (f *frameReader) refuseBatch(msg []byte) {
	var elems []json.RawMessage
	_ = json.Unmarshal(msg, &elems) // valid JSON, checked by inspectMessage
	var answers []rpcErrorBody
	for _, e := range elems {
		if m, err := jsonrpc.DecodeMessage(e); err == nil {
			if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
				answers = append(answers, rpcErrorBody{JSONRPC: "2.0", ID: req.ID.Raw(),
					Error: rpcError{Code: jsonrpc.CodeInvalidRequest, Message: batchRefusal}})
			}
		}
	}
	if len(answers) == 0 {
		f.refuse(nil, jsonrpc.CodeInvalidRequest, batchRefusal)
		return
	}
	f.log.Warn("stdio message refused", zap.Int64("code", jsonrpc.CodeInvalidRequest), zap.String("reason", "batch"), zap.Int("calls", len(answers)))
	f.write(answers)
}

// refuse answers a refused line with a JSON-RPC error.
func (f *frameReader) refuse(id any, code int64, text string) {
	f.log.Warn("stdio message refused", zap.Int64("code", code), zap.String("reason", text))
	f.write(rpcErrorBody{JSONRPC: "2.0", ID: id, Error: rpcError{Code: code, Message: text}})
}

// write sends v as one line on the protocol output. If stdout is gone the
// session is too: the error ends go-sdk's read loop.
func (f *frameReader) write(v any) {
	data, err := json.Marshal(v)
	if err != nil { // cannot happen: fixed types, ids from the JSON decoder
		f.err = fmt.Errorf("encoding error response: %w", err)
		return
	}
	if _, err := f.out.Write(append(data, '\n')); err != nil {
		f.err = fmt.Errorf("writing error response: %w", err)
	}
}

// recoverID returns the id of the JSON-RPC request that data (all or the
// start of a line) holds, if its first keys show one: an "id" that is a
// number or a string, and a "method" (so that the error cannot be taken for
// the answer to one of the server's own requests). It returns nil (JSON
// null) otherwise. It reads at most idPeek bytes.
func recoverID(data []byte) any {
	dec := json.NewDecoder(bytes.NewReader(data[:min(len(data), idPeek)]))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var id any
	sawID, sawMethod := false, false
	for {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return nil // the end of the object or of what was kept
		}
		switch {
		case key == "id" && sawID:
			return nil // twice: ambiguous
		case key == "id":
			v, err := dec.Token()
			if err != nil {
				return nil
			}
			switch v := v.(type) {
			case json.Number:
			case string:
				if strings.ContainsRune(v, utf8.RuneError) {
					return nil // perhaps not the id sent (exactString)
				}
			default:
				return nil // null, or not a valid id
			}
			id, sawID = v, true
		case key == "method":
			sawMethod = true
		}
		if sawID && sawMethod {
			return id // the method's value need not even be complete
		}
		if key != "id" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil
			}
		}
	}
}

// syncWriter serializes whole writes to the protocol output: go-sdk writes
// each message in one Write, and so does frameReader, so two messages never
// interleave on stdout.
type syncWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// writeParts writes parts in order under the lock, as one message.
func (s *syncWriter) writeParts(parts ...[]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range parts {
		if _, err := s.w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

func (s *syncWriter) Close() error { return s.w.Close() }
