package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/transport/handoff"
)

// stdioTransport is the mcp.Transport of a stdio session: one connection
// that reads its messages from a frameReader, already checked and decoded,
// and writes each message as one line.
//
// It replaces go-sdk's mcp.IOTransport, which would decode every line
// again: its reader runs encoding/json's streaming decoder over the bytes
// and then jsonrpc.DecodeMessage, whose decoder fills a fresh 32 KB buffer
// twice per message. For a small tools/call that was most of the bytes the
// server allocated per call (and so most of its collections). What
// IOTransport does beyond decoding is JSON-RPC batching, for revisions
// before 2025-06-18; frameReader refuses batches before go-sdk sees them,
// so nothing of it is lost.
type stdioTransport struct {
	in    *frameReader
	out   io.WriteCloser // the drain's writer over the synchronised stdout
	taker *handoff.Taker // results handed off past go-sdk's encoding (nil: none)
	// stop, once closed, ends the session as end-of-input does: no more
	// requests are read, those read are answered (for at most grace).
	stop  <-chan struct{}
	grace time.Duration
}

func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{in: t.in, out: t.out, taker: t.taker, stop: t.stop, grace: t.grace, incoming: make(chan readResult), closed: make(chan struct{})}
	go c.readLoop()
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

// stdioConn is the mcp.Connection of a stdio session. Reads come from a
// goroutine, so that Close unblocks a Read waiting on stdin (as go-sdk
// requires); stdin itself may not unblock until the client closes it.
type stdioConn struct {
	in       *frameReader
	out      io.WriteCloser
	taker    *handoff.Taker
	stop     <-chan struct{}
	grace    time.Duration
	incoming chan readResult

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error
}

func (c *stdioConn) readLoop() {
	for {
		msg, err := c.in.nextMessage()
		select {
		case c.incoming <- readResult{msg, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	case <-c.stop:
		c.shutDown()
		return nil, io.EOF
	}
}

// shutDown ends the session on a signal: calls read from now on are
// refused (frameReader answers them), the calls go-sdk has are answered
// (each has its own deadline; grace bounds the wait), and a call read but
// not yet handed over is answered with an error here, so that nothing
// waits for an answer that will not come.
func (c *stdioConn) shutDown() {
	d := c.in.drain
	d.stop()
	deadline := time.NewTimer(c.grace)
	defer deadline.Stop()
	for {
		pending, changed := d.state()
		if pending <= 0 {
			return
		}
		select {
		case r := <-c.incoming:
			if req, ok := r.msg.(*jsonrpc.Request); ok && req.IsCall() {
				line, err := json.Marshal(rpcErrorBody{JSONRPC: "2.0", ID: req.ID.Raw(), Error: rpcError{Code: codeShuttingDown, Message: shuttingDown}})
				if err == nil {
					c.out.Write(append(line, '\n')) // counted as its answer
				}
			}
		case <-changed:
		case <-deadline.C:
			return
		}
	}
}

// Write sends msg as one line, in a single write (syncWriter keeps lines
// whole; the drain counts the answers in them), or, for a result of
// inPlaceResult bytes or more, as the envelope's pieces written in one
// locked sequence around go-sdk's bytes, which are not copied again.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	// A handed-off result is taken first, so that it is not kept when the
	// write does not happen.
	var handed [][]byte
	if r, ok := msg.(*jsonrpc.Response); ok && r.Error == nil {
		handed, _ = c.taker.Take(r.Result)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if r, ok := msg.(*jsonrpc.Response); ok && c.in != nil && c.in.drain.dropAnswer(r.ID) {
		// The client cancelled this call (notifications/cancelled): MCP's
		// cancellation utility says the receiver should not answer it, and
		// a client that has forgotten the id reports an answer to it as an
		// error (the TypeScript SDK: "unknown message ID").
		return nil
	}
	if handed != nil {
		return c.writeHanded(msg.(*jsonrpc.Response), handed)
	}
	_, pieces := c.out.(partsWriter)
	if r, ok := msg.(*jsonrpc.Response); !ok || len(r.Result) < inPlaceResult {
		pieces = false
	}
	head, result, tail, err := encodeParts(msg, !pieces)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	if result != nil {
		err = c.out.(partsWriter).writeParts(head, result, tail)
	} else {
		_, err = c.out.Write(head)
	}
	if err != nil {
		return fmt.Errorf("writing to stdout: %w", err)
	}
	return nil
}

// writeHanded writes a response whose result was handed off: the
// envelope around the result's parts, in one locked sequence.
func (c *stdioConn) writeHanded(r *jsonrpc.Response, result [][]byte) error {
	head, err := appendResponseHead(make([]byte, 0, 64), r.ID)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	parts := make([][]byte, 0, len(result)+2)
	parts = coalesce(append(append(append(parts, head), result...), lineEnd))
	if pw, ok := c.out.(partsWriter); ok && len(parts) > 1 {
		err = pw.writeParts(parts...)
	} else {
		_, err = c.out.Write(bytes.Join(parts, nil))
	}
	if err != nil {
		return fmt.Errorf("writing to stdout: %w", err)
	}
	return nil
}

// coalesce joins runs of parts shorter than inPlaceResult, so that a
// message is written in as few calls as it can be without copying a large
// part: each write to a pipe may wake the reader on a partial line.
func coalesce(parts [][]byte) [][]byte {
	out := parts[:0:0]
	var run []byte
	for _, p := range parts {
		if len(p) >= inPlaceResult {
			if run != nil {
				out, run = append(out, run), nil
			}
			out = append(out, p)
			continue
		}
		run = append(run, p...)
		if len(run) >= inPlaceResult {
			out, run = append(out, run), nil
		}
	}
	if run != nil {
		out = append(out, run)
	}
	return out
}

// inPlaceResult is the result size from which a response is written in
// pieces: below it, one copy into a line buffer costs less than two more
// write calls. A 1 MiB answer's result is ~2.3 MB (its text block and
// its structuredContent), and each call in flight held one more copy of it.
const inPlaceResult = 64 << 10

// partsWriter writes one message given in pieces, in order, with nothing
// written between them: syncWriter and the drain's writer.
type partsWriter interface {
	writeParts(parts ...[]byte) error
}

// Close closes stdin and stdout, once.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.closeErr = errors.Join(c.in.Close(), c.out.Close())
		c.taker.Drop()
		close(c.closed)
	})
	return c.closeErr
}

func (c *stdioConn) SessionID() string { return "" }

// encodeLine is jsonrpc.EncodeMessage(msg) followed by a newline, the
// same bytes, with a shortcut for a successful response with an integer
// or a plain string id: the message that carries nearly all the output's
// bytes (results, tools/list). go-sdk has already marshaled its Result
// with encoding/json, so the bytes are valid and compact; EncodeMessage
// would scan and copy them once more to compact them inside the envelope
// (for GitHub's 2.47 MB tools/list, a tenth of a cached restart's CPU).
// Here the envelope is written around them as they are.
func encodeLine(msg jsonrpc.Message) ([]byte, error) {
	line, _, _, err := encodeParts(msg, true)
	return line, err
}

// encodeParts is encodeLine in pieces. For the shortcut with whole false:
// the envelope up to the result, go-sdk's result bytes themselves and the
// end of the line. Otherwise the whole line is in head (result and tail
// nil), built in one buffer.
func encodeParts(msg jsonrpc.Message, whole bool) (head, result, tail []byte, err error) {
	if r, ok := msg.(*jsonrpc.Response); ok && r.Error == nil && len(r.Result) > 0 {
		size := 64
		if whole {
			size += len(r.Result)
		}
		if buf, err := appendResponseHead(make([]byte, 0, size), r.ID); err == nil {
			if whole {
				return append(append(buf, r.Result...), lineEnd...), nil, nil, nil
			}
			return buf, r.Result, lineEnd, nil
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return nil, nil, nil, err
	}
	return append(data, '\n'), nil, nil, nil
}

var lineEnd = []byte("}\n")

// appendResponseHead appends a successful response's envelope up to its
// result, `{"jsonrpc":"2.0","id":ID,"result":`, as EncodeMessage writes
// it: directly for an id appendPlainID takes, from EncodeMessage itself
// for one encoding/json escapes.
func appendResponseHead(buf []byte, id jsonrpc.ID) ([]byte, error) {
	start := len(buf)
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	if b, ok := appendPlainID(buf, id.Raw()); ok {
		return append(b, `,"result":`...), nil
	}
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: json.RawMessage("0")})
	if err != nil {
		return nil, err
	}
	head, ok := bytes.CutSuffix(data, []byte(`0}`))
	if !ok || !bytes.HasSuffix(head, []byte(`,"result":`)) {
		return nil, fmt.Errorf("unexpected response envelope %.80q", data)
	}
	return append(buf[:start], head...), nil
}

// appendPlainID appends id as encoding/json writes it, for an int64 or a
// string of printable ASCII other than '"' and '\\' (which it writes as
// is); ok is false for anything else, left to EncodeMessage.
func appendPlainID(buf []byte, id any) ([]byte, bool) {
	switch v := id.(type) {
	case int64:
		return strconv.AppendInt(buf, v, 10), true
	case string:
		for i := 0; i < len(v); i++ {
			if c := v[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				return buf, false
			}
		}
		buf = append(buf, '"')
		buf = append(buf, v...)
		return append(buf, '"'), true
	}
	return buf, false
}
