package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/transport/handoff"
)

// DefaultMaxMessageBytes is the zero value of StdioOptions.MaxMessageBytes:
// go-sdk's own line cap (mcp.DefaultMaxLineLength), so that nothing go-sdk
// accepted before is refused.
const DefaultMaxMessageBytes = 16 << 20

// StdioOptions configures ServeStdioWithOptions. Every zero value is a safe
// default, stated on its field.
type StdioOptions struct {
	// MaxMessageBytes caps one inbound line (one JSON-RPC message, without
	// its line terminator); 0 means 16 MiB. A longer line is discarded as it
	// streams in, never buffered whole, and answered with -32600.
	MaxMessageBytes int
	// MaxJSONDepth caps the nesting of arrays and objects in one message;
	// 0 means 64. A deeper message is answered with -32600 before go-sdk
	// decodes it.
	MaxJSONDepth int
	// ShutdownTimeout bounds how long the calls in flight when ctx is done
	// get to finish and be answered; 0 means 15s.
	ShutdownTimeout time.Duration
}

func (o StdioOptions) withDefaults() StdioOptions {
	if o.MaxMessageBytes == 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.MaxJSONDepth == 0 {
		o.MaxJSONDepth = DefaultMaxJSONDepth
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = 15 * time.Second
	}
	return o
}

func (o StdioOptions) validate() error {
	var errs []error
	if o.MaxMessageBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxMessageBytes is negative (%d)", o.MaxMessageBytes))
	}
	if o.MaxJSONDepth < 0 {
		errs = append(errs, fmt.Errorf("MaxJSONDepth is negative (%d)", o.MaxJSONDepth))
	}
	if o.ShutdownTimeout < 0 {
		errs = append(errs, fmt.Errorf("ShutdownTimeout is negative (%s)", o.ShutdownTimeout))
	}
	return errors.Join(errs...)
}

// ServeStdio is ServeStdioWithOptions with the default options and no log.
func ServeStdio(ctx context.Context, s *mcp.Server, in io.ReadCloser, out io.WriteCloser) error {
	return ServeStdioWithOptions(ctx, s, in, out, StdioOptions{}, nil)
}

// ServeStdioWithOptions serves s as a single MCP session over
// newline-delimited JSON-RPC on in and out (stdioTransport), until the
// client closes in or ctx is done. Both end the session cleanly and return
// nil; any other failure is returned. Either way, requests already read are
// answered first (when ctx is done, for at most ShutdownTimeout: a signal
// stops reading, not the calls in flight, whose answers the client waits
// for, and which may have changed something upstream).
//
// Each line is checked before go-sdk decodes it (see frameReader): a line
// that is not a single valid JSON-RPC message (not JSON, truncated, a
// batch, nested deeper than MaxJSONDepth, longer than MaxMessageBytes) is
// answered with a JSON-RPC error on out and the session goes on. log (nil:
// none) receives a warning for each; it must not write to out.
//
// out belongs to the protocol: nothing else may write to it while the
// session runs (log to stderr).
func ServeStdioWithOptions(ctx context.Context, s *mcp.Server, in io.ReadCloser, out io.WriteCloser, opts StdioOptions, log *zap.Logger) error {
	if log == nil {
		log = zap.NewNop()
	}
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return fmt.Errorf("invalid stdio options: %w", err)
	}
	d := newDrain()
	w := &syncWriter{w: out}
	// Results handed off (transport/handoff) are written by stdioConn
	// as they are, without go-sdk's second encoding.
	taker := handoff.NewTaker()
	// The session runs on a context the caller's cancellation does not
	// reach: that only closes stop, and the transport drains.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stopped := context.AfterFunc(ctx, func() {
		// Past the grace period the session is cut, calls and all.
		time.AfterFunc(o.ShutdownTimeout+time.Second, cancel)
	})
	defer stopped()
	err := s.Run(handoff.WithTaker(runCtx, taker), &stdioTransport{in: newFrameReader(in, w, d, o, log), out: d.writer(w), taker: taker,
		stop: ctx.Done(), grace: o.ShutdownTimeout})
	switch {
	case err == nil:
		return nil
	case runCtx.Err() != nil && errors.Is(err, runCtx.Err()):
		return nil // cut after the grace period: a stop all the same
	case errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return nil // the client went away
	default:
		return fmt.Errorf("serving stdio: %w", err)
	}
}
