package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge/result"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

// call runs one upstream tool call: validate, build the request, send it,
// shape the answer, redact. Every failure an agent could fix or retry comes
// back as an IsError result with a safe message and its kind; the detail
// goes to the outcome (for logs) and the log.
func (c *Catalog) call(ctx context.Context, t *Tool, call *Call) *Outcome {
	out := &Outcome{}
	if int64(len(call.Args)) > c.opts.MaxArgumentBytes {
		return c.fail(out, t, &ArgumentError{Reason: fmt.Sprintf("arguments are %d bytes, more than the %d allowed", len(call.Args), c.opts.MaxArgumentBytes)})
	}
	if d := jsonDepth(call.Args); d > c.opts.MaxArgumentDepth {
		return c.fail(out, t, &ArgumentError{Reason: fmt.Sprintf("arguments nest %d levels deep, more than the %d allowed", d, c.opts.MaxArgumentDepth)})
	}
	args, err := decodeArgs(call.Args)
	if err != nil {
		return c.fail(out, t, err)
	}
	input, err := t.input.Resolved()
	if err != nil {
		return c.fail(out, t, fmt.Errorf("input schema of %s: %w", t.plan.Label, err))
	}
	// Arguments that pass the one-pass checker need no validator (it
	// accepts only what the validator accepts); the rest get the
	// validator, coercion and an explanation.
	if !t.input.FastArgs().Valid(argBytes(call.Args)) {
		if err := checkArgs(input, args); err != nil { // argerrors.go
			return c.fail(out, t, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	var attempts atomic.Int32
	ctx = upstream.WithAttempts(ctx, &attempts)
	if t.retry {
		ctx = upstream.WithRetry(ctx)
	}
	req, err := t.plan.Build(ctx, args, c.creds, c.userAgent)
	if err != nil {
		return c.fail(out, t, err)
	}
	step(ctx, call.Progress, 1, "calling "+t.plan.Label)
	sent := time.Now()
	resp, err := c.client.Do(req)
	out.Attempts = max(1, int(attempts.Load()))
	if err != nil {
		out.Upstream = time.Since(sent)
		switch {
		case errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded:
			out.Kind = Timeout
			err = fmt.Errorf("%w: no answer within %s", ErrUpstreamUnavailable, t.timeout)
		case errors.Is(err, context.Canceled):
			err = fmt.Errorf("%w: the call was cancelled", ErrUpstreamUnavailable)
		default:
			c.log.Warn("upstream request failed", zap.String("tool", t.def.Name), zap.String("error", c.redactor.RedactString(err.Error())))
			err = fmt.Errorf("%w: %s", ErrUpstreamUnavailable, upstream.FailureKind(err))
		}
		return c.fail(out, t, err)
	}
	defer resp.Body.Close()
	out.Status = resp.StatusCode
	step(ctx, call.Progress, 2, fmt.Sprintf("%s: upstream answered HTTP %d", t.plan.Label, resp.StatusCode))
	var body []byte
	if c.opts.Truncate && resp.StatusCode < 300 {
		var cut bool
		body, cut, err = upstream.ReadPrefix(resp.Body, c.opts.MaxResponseBytes)
		if err == nil && cut {
			out.Upstream = time.Since(sent)
			out.BytesOut = int64(len(body))
			out.Result = c.truncated(t, resp, body)
			out.Detail = fmt.Sprintf("answer truncated at %d bytes", len(body))
			return out
		}
	} else {
		length := resp.ContentLength
		if resp.Request != nil && resp.Request.Method == "HEAD" {
			// A HEAD answer's Content-Length is the GET body's; it has none.
			length = 0
		}
		body, err = upstream.ReadLimited(resp.Body, length, c.opts.MaxResponseBytes)
	}
	out.Upstream = time.Since(sent)
	if err != nil {
		if !errors.Is(err, ErrResponseTooLarge) {
			if ctx.Err() != nil {
				out.Kind = Timeout
				err = fmt.Errorf("%w: no complete answer within %s", ErrUpstreamUnavailable, t.timeout)
			} else {
				err = fmt.Errorf("%w: reading the response failed (%s)", ErrUpstreamUnavailable, upstream.FailureKind(err))
			}
		} else {
			err = fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, c.opts.MaxResponseBytes)
		}
		return c.fail(out, t, err)
	}
	out.BytesOut = int64(len(body))
	step(ctx, call.Progress, 3, fmt.Sprintf("%s: received %d bytes", t.plan.Label, len(body)))
	rt := result.Tool{Name: t.def.Name, Output: &t.output}
	if t.shape != nil {
		rt.Reshape = t.shape.reshape
	}
	out.Result = c.shaperFor(t).Shape(rt, resp.StatusCode, resp.Header, body)
	out.Kind = KindOfStatus(resp.StatusCode)
	if out.Kind != OK {
		out.Detail = fmt.Sprintf("upstream answered HTTP %d", resp.StatusCode)
	}
	if ce := c.log.Check(zap.DebugLevel, "tool call"); ce != nil {
		ce.Write(zap.String("tool", t.def.Name), zap.Int("status", resp.StatusCode), zap.Int("bytes", len(body)))
	}
	return out
}

// callSteps is the number of progress steps a call reports: request sent,
// response headers received, response body read.
const callSteps = 3

func step(ctx context.Context, p Progress, n int, msg string) {
	if p != nil {
		p.Step(ctx, n, callSteps, msg)
	}
}

// fail completes out for a call that failed with err: an IsError result
// with a safe message, the kind, and the redacted detail.
func (c *Catalog) fail(out *Outcome, t *Tool, err error) *Outcome {
	detail := c.redactor.RedactString(err.Error())
	out.Detail = detail
	var argErr *ArgumentError
	switch {
	case errors.As(err, &argErr):
		out.Kind = BadArguments
		c.log.Debug("bad tool arguments", zap.String("tool", t.def.Name), zap.String("reason", detail))
		out.Result = result.Error(detail)
	case errors.Is(err, ErrResponseTooLarge):
		out.Kind = TooLarge
		c.log.Warn("tool call failed", zap.String("tool", t.def.Name), zap.String("reason", detail))
		out.Result = result.Error(detail)
	case errors.Is(err, ErrUpstreamUnavailable):
		if out.Kind != Timeout {
			out.Kind = Unavailable
		}
		c.log.Warn("tool call failed", zap.String("tool", t.def.Name), zap.String("reason", detail))
		out.Result = result.Error(detail)
	default:
		out.Kind = ToolError
		c.log.Error("tool call failed", zap.String("tool", t.def.Name), zap.String("error", detail))
		out.Result = result.Error("internal error while calling " + t.plan.Label)
	}
	return out
}

// jsonDepth is the deepest nesting of arrays and objects in raw, found by a
// byte scan (brackets inside strings skipped) before anything is decoded.
func jsonDepth(raw []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
			deepest = max(deepest, depth)
		case b == '}' || b == ']':
			depth--
		}
	}
	return deepest
}

// argBytes is raw as the checker reads it: absent and null arguments are
// the empty object, as decodeArgs makes them.
func argBytes(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return []byte("{}")
	}
	return raw
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
