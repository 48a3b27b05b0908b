package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// handler returns the MCP tool handler for t: a closure over the prepared
// tool, so a call never looks anything up in the spec.
func (b *Bridge) handler(t *tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var raw json.RawMessage
		if req != nil && req.Params != nil {
			raw = req.Params.Arguments
		}
		return b.call(ctx, t, raw, newReporter(req, b.log)), nil
	}
}

// call runs one tool call. Every failure an agent could fix or retry comes
// back as an IsError result with a safe message; details go to the log.
func (b *Bridge) call(ctx context.Context, t *tool, raw json.RawMessage, rep reporter) *mcp.CallToolResult {
	start := time.Now()
	args, err := decodeArgs(raw)
	if err != nil {
		return b.toolError(t, err, start)
	}
	input, err := t.input.resolved()
	if err != nil {
		return b.toolError(t, fmt.Errorf("input schema of %s: %w", t.label, err), start)
	}
	if err := input.Validate(args); err != nil {
		return b.toolError(t, schemaArgumentError(err), start)
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	if t.retry {
		ctx = withRetry(ctx)
	}
	req, err := b.buildRequest(ctx, t, args)
	if err != nil {
		return b.toolError(t, err, start)
	}
	rep.step(ctx, 1, "calling "+t.label)
	resp, err := b.client.Do(req)
	if err != nil {
		switch {
		case errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded:
			err = fmt.Errorf("%w: no answer within %s", ErrUpstreamUnavailable, t.timeout)
		case errors.Is(err, context.Canceled):
			err = fmt.Errorf("%w: the call was cancelled", ErrUpstreamUnavailable)
		default:
			b.log.Warn("upstream request failed", zap.String("tool", t.def.Name), zap.String("error", b.redactor.RedactString(err.Error())))
			err = fmt.Errorf("%w: %s", ErrUpstreamUnavailable, connErrorKind(err))
		}
		return b.toolError(t, err, start)
	}
	defer resp.Body.Close()
	rep.step(ctx, 2, fmt.Sprintf("%s: upstream answered HTTP %d", t.label, resp.StatusCode))
	body, err := readLimited(resp.Body, resp.ContentLength, b.opts.MaxResponseBytes)
	if err != nil {
		if !errors.Is(err, ErrResponseTooLarge) {
			if ctx.Err() != nil {
				err = fmt.Errorf("%w: no complete answer within %s", ErrUpstreamUnavailable, t.timeout)
			} else {
				err = fmt.Errorf("%w: reading the response failed (%s)", ErrUpstreamUnavailable, connErrorKind(err))
			}
		} else {
			err = fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, b.opts.MaxResponseBytes)
		}
		return b.toolError(t, err, start)
	}
	rep.step(ctx, 3, fmt.Sprintf("%s: received %d bytes", t.label, len(body)))
	res := b.result(t, resp, body)
	if ce := b.log.Check(zap.DebugLevel, "tool call"); ce != nil {
		ce.Write(zap.String("tool", t.def.Name), zap.Int("status", resp.StatusCode), zap.Int("bytes", len(body)), zap.Duration("took", time.Since(start)))
	}
	return res
}

// decodeArgs parses the arguments object. Numbers are kept exact: integers
// that fit in int64 become int64, others float64.
func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, &ArgumentError{Reason: "arguments must be a JSON object: " + err.Error()}
	}
	for k, v := range args {
		args[k] = normalizeNumbers(v)
	}
	return args, nil
}

func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	}
	return v
}

// schemaArgumentError turns jsonschema-go's nested "validating <schema
// path>: ..." chain into the argument at fault and the reason, e.g.
// field "body.title", reason "minLength: ...".
func schemaArgumentError(err error) *ArgumentError {
	s := err.Error()
	path := ""
	for {
		rest, ok := strings.CutPrefix(s, "validating ")
		if !ok {
			break
		}
		loc, reason, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		if loc != "root" {
			path = loc
		}
		s = reason
	}
	return &ArgumentError{Field: schemaPathField(path), Reason: s}
}

// schemaPathField renders a schema path such as
// /properties/body/properties/tags/items as "body.tags[]".
func schemaPathField(path string) string {
	if path == "" {
		return ""
	}
	var out []string
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i := 0; i < len(segs); i++ {
		switch segs[i] {
		case "properties", "patternProperties":
			if i+1 < len(segs) {
				out = append(out, segs[i+1])
				i++
			}
		case "items", "prefixItems", "additionalProperties":
			if len(out) > 0 {
				out[len(out)-1] += "[]"
			}
		case "$defs":
			i++ // a shared schema: its name says nothing about the argument
		}
	}
	return strings.Join(out, ".")
}

// readLimited reads at most max bytes; more is ErrResponseTooLarge. A known
// length sizes the buffer once instead of growing it by doubling.
func readLimited(r io.Reader, length, max int64) ([]byte, error) {
	if length > max {
		return nil, ErrResponseTooLarge
	}
	if length < 0 {
		body, err := io.ReadAll(io.LimitReader(r, max+1))
		if err != nil {
			return nil, err
		}
		if int64(len(body)) > max {
			return nil, ErrResponseTooLarge
		}
		return body, nil
	}
	buf := make([]byte, length)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	// The declared length was honoured; anything more is a broken upstream.
	var one [1]byte
	if n, _ := r.Read(one[:]); n > 0 {
		return nil, fmt.Errorf("upstream sent more than its Content-Length")
	}
	return buf, nil
}

// connErrorKind names a transport failure without echoing the URL (which
// may carry a query credential).
func connErrorKind(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "connection reset"):
		return "connection reset by the upstream"
	case strings.Contains(s, "no such host"):
		return "host not found"
	case strings.Contains(s, "EOF"):
		return "the upstream closed the connection"
	case strings.Contains(s, "tls") || strings.Contains(s, "x509"):
		return "TLS handshake failed"
	case strings.Contains(s, "timeout"):
		return "timed out"
	}
	return "transport error"
}
