package transport

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves s as a single MCP session over newline-delimited JSON-RPC
// on in and out (mcp.IOTransport), until the client closes in or ctx is done.
// Both end the session cleanly and return nil; any other failure is returned.
// When the client closes in, requests it already sent are answered first.
//
// out belongs to the protocol: nothing else may write to it while ServeStdio
// runs (log to stderr).
func ServeStdio(ctx context.Context, s *mcp.Server, in io.ReadCloser, out io.WriteCloser) error {
	d := newDrain()
	err := s.Run(ctx, &mcp.IOTransport{Reader: d.reader(in), Writer: d.writer(out)})
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil // cancelled by the caller: a clean stop
	case errors.Is(err, io.EOF), errors.Is(err, mcp.ErrConnectionClosed):
		return nil // the client went away
	default:
		return fmt.Errorf("serving stdio: %w", err)
	}
}
