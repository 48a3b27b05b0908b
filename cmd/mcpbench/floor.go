package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The floor is the least an MCP server built on go-sdk can do for a REST
// call: one tool per endpoint whose handler makes the same HTTP GET and
// returns the body verbatim as text. No validation, no sanitizer, no
// output schema. mcpbench runs it as a child process ("mcpbench floor"),
// so it pays for the same process boundary and pipes as mcpbridge.

// runFloor is the hidden "floor" subcommand. Over HTTP it prints the bound
// address as the first line of stdout, then serves until ctx is done.
func runFloor(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.WriteCloser) error {
	fs := flag.NewFlagSet("floor", flag.ContinueOnError)
	upstreamURL := fs.String("upstream", "", "upstream base URL")
	transport := fs.String("transport", "stdio", "stdio or http")
	listen := fs.String("listen", "127.0.0.1:0", "HTTP listen address")
	structured := fs.Bool("structured", false, "declare an output schema and send the body as structuredContent too (the same work as mcpbridge's default, without validation)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *upstreamURL == "" {
		return errors.New("floor: --upstream is required")
	}
	s := newFloorServer(*upstreamURL, endpoints(), *structured)
	switch *transport {
	case "stdio":
		err := s.Run(ctx, &mcp.IOTransport{Reader: stdin, Writer: stdout})
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("floor: serving stdio: %w", err)
	case "http":
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			return fmt.Errorf("floor: listening: %w", err)
		}
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
		mux := http.NewServeMux()
		mux.Handle("/mcp", h)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		if _, err := fmt.Fprintln(stdout, ln.Addr().String()); err != nil {
			return fmt.Errorf("floor: announcing the address: %w", err)
		}
		go func() {
			<-ctx.Done()
			srv.Close() //nolint:errcheck // exiting anyway
		}()
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("floor: serving http: %w", err)
		}
		return nil
	default:
		return fmt.Errorf("floor: unknown transport %q", *transport)
	}
}

// newFloorServer registers one verbatim-forwarding tool per endpoint;
// structured makes each declare an output schema ({"type":"object"}) and
// return the body as structuredContent next to the text, unchecked.
func newFloorServer(upstreamURL string, eps []*endpoint, structured bool) *mcp.Server {
	client := floorClient()
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpbench-floor", Version: "1"}, nil)
	for _, e := range eps {
		tool := &mcp.Tool{
			Name:        e.Tool,
			Description: "GET " + e.CallPath + " verbatim",
			InputSchema: json.RawMessage(`{"type":"object"}`),
		}
		if structured {
			tool.OutputSchema = json.RawMessage(`{"type":"object"}`)
		}
		call := floorHandler(client, upstreamURL+e.CallPath, structured)
		s.AddTool(tool, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return call(ctx) })
	}
	return s
}

// floorClient has the same keep-alive pool size as mcpbridge's upstream
// client.
func floorClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: tr}
}

// floorHandler is the floor's tool: GET url, the body verbatim as text
// (and as structuredContent with structured).
func floorHandler(client *http.Client, url string, structured bool) func(context.Context) (*mcp.CallToolResult, error) {
	return func(ctx context.Context) (*mcp.CallToolResult, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, fmt.Errorf("building the request: %w", err)
		}
		resp, err := client.Do(req)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
		}
		res := &mcp.CallToolResult{
			IsError: resp.StatusCode >= 400,
			Content: []mcp.Content{&mcp.TextContent{Text: string(body)}},
		}
		if structured && !res.IsError {
			res.StructuredContent = json.RawMessage(body)
		}
		return res, nil
	}
}
