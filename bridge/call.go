package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge/request"
	"github.com/mcpbridge/mcpbridge/bridge/result"
	"github.com/mcpbridge/mcpbridge/bridge/schema"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

// call runs one upstream tool call: validate, build the request, send it,
// shape the answer, redact. Every failure an agent could fix or retry comes
// back as an IsError result with a safe message and its kind; the detail
// goes to the outcome (for logs) and the log.
//
// go-sdk runs every call on a new goroutine, whose stack starts small
// (2 KB) and is copied whole each time it doubles. call keeps its own frame
// small, the rare paths (failures, truncation) and each step in a function
// of its own, so that the deepest point of a call (decoding the arguments,
// the HTTP transport) stays within the 8 KB that go-sdk's own work grows
// the stack to: one more doubling cost more CPU than the rest of the
// bridge's own work on a small call.
func (c *Catalog) call(ctx context.Context, t *Tool, call *Call) *Outcome {
	out := &Outcome{}
	args, err := c.arguments(t, call.Args)
	if err != nil {
		return c.fail(out, t, err)
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	var attempts atomic.Int32
	ctx = upstream.WithAttempts(ctx, &attempts)
	if t.retry {
		ctx = upstream.WithRetry(ctx)
	}
	creds := c.creds
	if t.creds != nil {
		creds = t.creds // the operation's security schemes (security.go)
		ctx = context.WithValue(ctx, authKey{}, t.auth)
	}
	req, err := t.plan.BuildLimit(ctx, args, creds, c.userAgent, c.encodedLimit(len(call.Args)), c.opts.MaxURLBytes)
	if err != nil {
		return c.fail(out, t, err)
	}
	if call.Progress != nil {
		call.Progress.Step(ctx, 1, callSteps, "calling "+t.plan.Label)
	}
	sent := time.Now()
	resp, err := c.client.Do(req)
	out.Attempts = max(1, int(attempts.Load()))
	if err != nil {
		out.Upstream = time.Since(sent)
		return c.fail(out, t, c.sendError(ctx, t, err, out))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 599 {
		// 101 Switching Protocols hands the connection over as the body,
		// which the call's deadline no longer covers: reading it could
		// hold the call (and its slot, and shutdown) for as long as the
		// upstream likes. The bridge never asks to switch, and a status
		// HTTP does not define is no answer either: close, and say so.
		resp.Body.Close()
		out.Upstream, out.Status = time.Since(sent), resp.StatusCode
		return c.fail(out, t, fmt.Errorf("%w: %s", ErrUpstreamUnavailable, oddStatus(resp.StatusCode)))
	}
	defer resp.Body.Close()
	c.answer(ctx, t, call, resp, sent, out)
	return out
}

// oddStatus says what is wrong with a final status outside 200-599.
func oddStatus(code int) string {
	switch {
	case code == http.StatusSwitchingProtocols:
		return "the upstream answered 101 Switching Protocols, a switch the bridge did not ask for (a tool call is one request and one answer)"
	case code >= 100 && code < 200:
		return fmt.Sprintf("the upstream answered with the interim status %d and no final answer", code)
	}
	return fmt.Sprintf("the upstream answered with status %d, which HTTP does not define", code)
}

// encodedLimit caps the query string and the body that arguments of n
// bytes may make (request.Plan.BuildLimit): 64 KiB, and 32 bytes more for
// each byte of arguments, up to twice MaxArgumentBytes or 16 MiB,
// whichever is more. Honest encodings stay well inside it (escaping triples
// a byte at most, base64 shrinks to binary, deep nesting repeats short
// keys), while a long object key over a long array, which a nested style
// writes again for every item, is refused before it is written out whole.
func (c *Catalog) encodedLimit(n int) int {
	ceiling := max(request.DefaultMaxEncodedBytes, 2*int(c.opts.MaxArgumentBytes))
	return min(64<<10+32*n, ceiling)
}

// arguments checks the raw arguments (size, depth, the schema) and
// decodes them.
func (c *Catalog) arguments(t *Tool, raw json.RawMessage) (map[string]any, error) {
	if int64(len(raw)) > c.opts.MaxArgumentBytes {
		return nil, &ArgumentError{Reason: fmt.Sprintf("arguments are %d bytes, more than the %d allowed", len(raw), c.opts.MaxArgumentBytes)}
	}
	depth := schema.Depth(raw)
	if depth > c.opts.MaxArgumentDepth {
		return nil, &ArgumentError{Reason: fmt.Sprintf("arguments nest %d levels deep, more than the %d allowed", depth, c.opts.MaxArgumentDepth)}
	}
	args, err := decodeArgs(raw)
	if err != nil {
		return nil, err
	}
	// Arguments that pass the one-pass checker need no validator (it
	// accepts only what the validator accepts); the rest get the
	// validator, coercion and an explanation.
	if depth > result.MaxRecursiveChoiceDepth && t.input.RecursiveChoice() {
		// Checking it (the one-pass checker as much as the validator)
		// could take time exponential in the nesting.
		return nil, &ArgumentError{Reason: fmt.Sprintf("arguments nest %d levels deep; this tool's schema refers to itself through alternatives (oneOf/anyOf), which costs the validator twice as much for every level, so at most %d levels are accepted", depth, result.MaxRecursiveChoiceDepth)}
	}
	if !t.input.FastArgs().Valid(argBytes(raw)) {
		input, err := t.input.Resolved()
		if err != nil {
			return nil, fmt.Errorf("input schema of %s: %w", t.plan.Label, err)
		}
		if args, err = checkArgs(input, t.input.UsesIntFormat(), args); err != nil { // argerrors.go
			return nil, err
		}
	}
	return args, nil
}

// sendError is the error a failed send becomes; the Kind goes to out.
func (c *Catalog) sendError(ctx context.Context, t *Tool, err error, out *Outcome) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded:
		out.Kind = Timeout
		return fmt.Errorf("%w: no answer within %s", ErrUpstreamUnavailable, t.timeout)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%w: the call was cancelled", ErrUpstreamUnavailable)
	}
	// A *url.Error quotes the request's URL, whose path and query carry
	// the call's arguments: logged without it (--log-arguments governs
	// argument values), the operation standing for the URL.
	detail := err
	var ue *url.Error
	if errors.As(err, &ue) {
		detail = ue.Err
	}
	c.log.Warn("upstream request failed", zap.String("tool", t.def.Name), zap.String("op", t.plan.Label), zap.String("error", c.redactor.RedactString(detail.Error())))
	return fmt.Errorf("%w: %s", ErrUpstreamUnavailable, upstream.FailureKind(err))
}

// answer reads the upstream's answer within the size limit (or cuts it,
// with Truncate) and shapes it into out.
func (c *Catalog) answer(ctx context.Context, t *Tool, call *Call, resp *http.Response, sent time.Time, out *Outcome) {
	out.Status = resp.StatusCode
	if call.Progress != nil {
		call.Progress.Step(ctx, 2, callSteps, stepMessage(t.plan.Label, ": upstream answered HTTP ", resp.StatusCode, ""))
	}
	var body []byte
	src, length, err := upstream.Decoded(resp)
	if err != nil {
		out.Upstream = time.Since(sent)
		c.fail(out, t, fmt.Errorf("%w: %w", ErrUpstreamUnavailable, err))
		return
	}
	if resp.Request != nil && resp.Request.Method == "HEAD" {
		// A HEAD answer's Content-Length is the GET body's; it has none.
		length = 0
	}
	if c.opts.Truncate && resp.StatusCode < 300 {
		var cut bool
		body, cut, err = upstream.ReadPrefix(src, length, c.opts.MaxResponseBytes)
		if err == nil && cut {
			c.truncatedAnswer(t, call, resp, body, sent, out)
			return
		}
	} else {
		body, err = upstream.ReadLimited(src, length, c.opts.MaxResponseBytes)
	}
	out.Upstream = time.Since(sent)
	if err != nil {
		c.fail(out, t, c.readError(ctx, t, err, out))
		return
	}
	out.BytesOut = int64(len(body))
	if call.Progress != nil {
		call.Progress.Step(ctx, 3, callSteps, stepMessage(t.plan.Label, ": received ", len(body), " bytes"))
	}
	rt := result.Tool{Name: t.def.Name, Output: &t.output, Headers: t.plan.Headers}
	if call.Unstructured {
		rt.Output = nil
	}
	if t.shape != nil {
		rt.Reshape = t.shape.reshape
	}
	out.Result = c.shaperFor(t).Shape(rt, resp.StatusCode, resp.Header, body)
	out.Kind = KindOfStatus(resp.StatusCode)
	if out.Kind != OK {
		out.Detail = "upstream answered HTTP " + strconv.Itoa(resp.StatusCode)
	}
	if ce := c.log.Check(zap.DebugLevel, "tool call"); ce != nil {
		ce.Write(zap.String("tool", t.def.Name), zap.Int("status", resp.StatusCode), zap.Int("bytes", len(body)))
	}
}

// truncatedAnswer completes out with the prefix of an answer cut at the
// size limit.
func (c *Catalog) truncatedAnswer(t *Tool, call *Call, resp *http.Response, body []byte, sent time.Time, out *Outcome) {
	out.Upstream = time.Since(sent)
	out.BytesOut = int64(len(body))
	out.Result = c.truncated(t, resp, body, !call.Unstructured)
	out.Detail = fmt.Sprintf("answer truncated at %d bytes", len(body))
}

// readError is the error a failed read of the answer becomes; a timeout's
// Kind goes to out.
func (c *Catalog) readError(ctx context.Context, t *Tool, err error, out *Outcome) error {
	if errors.Is(err, ErrResponseTooLarge) {
		return fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, c.opts.MaxResponseBytes)
	}
	if ctx.Err() != nil {
		out.Kind = Timeout
		return fmt.Errorf("%w: no complete answer within %s", ErrUpstreamUnavailable, t.timeout)
	}
	return fmt.Errorf("%w: reading the response failed (%s)", ErrUpstreamUnavailable, upstream.FailureKind(err))
}

// stepMessage is label+mid+n+tail, in one allocation.
func stepMessage(label, mid string, n int, tail string) string {
	var buf [96]byte
	b := append(buf[:0], label...)
	b = append(b, mid...)
	b = strconv.AppendInt(b, int64(n), 10)
	return string(append(b, tail...))
}

// callSteps is the number of progress steps a call reports: request sent,
// response headers received, response body read.
const callSteps = 3

// fail completes out for a call that failed with err: an IsError result
// with a safe message, the kind, and the redacted detail.
func (c *Catalog) fail(out *Outcome, t *Tool, err error) *Outcome {
	detail := c.redactor.RedactString(err.Error())
	out.Detail = detail
	var argErr *ArgumentError
	switch {
	case errors.As(err, &argErr):
		out.Kind = BadArguments
		detail = cutMiddle(detail, maxArgumentMessage)
		out.Detail = detail
		// Not the reason: it may quote the value sent, and logs carry no
		// argument values (the client is told it; --log-arguments records
		// the arguments, redacted, in the usage record).
		c.log.Debug("bad tool arguments", zap.String("tool", t.def.Name), zap.String("field", argErr.Field))
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

// maxArgumentMessage bounds what a bad-arguments result says: messages
// quote what the agent sent, and a value of megabytes quoted back whole
// would fill the agent's context with its own mistake.
const maxArgumentMessage = 2 << 10

// cutMiddle shortens s to about max bytes by leaving out its middle (on
// rune boundaries), where a quoted value sits between what the message
// says about it and how it ends.
func cutMiddle(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := max*3/4, max/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	tailAt := len(s) - tail
	for tailAt < len(s) && !utf8.RuneStart(s[tailAt]) {
		tailAt++
	}
	return s[:head] + fmt.Sprintf("…[%d bytes left out]…", tailAt-head) + s[tailAt:]
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
	if args, ok := decodeFlat(raw); ok {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// Not the decoder's words: they name Go types.
			return nil, &ArgumentError{Reason: "arguments must be a JSON object, not " + jsonKind(te.Value)}
		}
		return nil, &ArgumentError{Reason: "arguments must be a JSON object: " + err.Error()}
	}
	for k, v := range args {
		args[k] = normalizeNumbers(v)
	}
	return args, nil
}

// jsonKind names the kind of JSON value an UnmarshalTypeError's Value
// describes ("number 1.5" is a number).
func jsonKind(value string) string {
	kind, _, _ := strings.Cut(value, " ")
	switch kind {
	case "array", "object":
		return "an " + kind
	case "string", "number":
		return "a " + kind
	case "bool":
		return "a boolean"
	case "":
		return "that"
	}
	return kind
}

func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		return exactNumber(string(x))
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

// exactNumber is the value a JSON number literal becomes among the
// arguments: an int64 when it is an integer that fits, a float64 when that
// keeps its value, else the literal itself (a json.Number), which every
// encoder writes verbatim, so that 12345678901234567890123 or
// 0.10000000000000000001 reaches the upstream as the client wrote it, not
// as the nearest float64.
func exactNumber(text string) any {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || strings.ContainsAny(text, "eE") {
		if err != nil {
			return json.Number(text) // beyond float64's range
		}
		return f // written with an exponent: the value is what counts
	}
	if !strings.Contains(text, ".") || !sameDecimal(text, strconv.FormatFloat(f, 'f', -1, 64)) {
		return json.Number(text) // an integer beyond int64, or digits a float64 drops
	}
	return f
}

// sameDecimal reports whether the plain decimals a and b (no exponent)
// differ only in trailing fraction zeros.
func sameDecimal(a, b string) bool {
	trim := func(s string) string {
		if strings.Contains(s, ".") {
			s = strings.TrimRight(s, "0")
			s = strings.TrimSuffix(s, ".")
		}
		return s
	}
	return trim(a) == trim(b)
}

// floatArgs is args with every json.Number (see exactNumber) replaced by
// the float64 nearest to it, for the validator, which reads a json.Number
// as a string; ok is false when there is none and args serves as it is.
func floatArgs(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f, true
		}
		return v, false // beyond float64: the validator decides
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if f, ok := floatArgs(e); ok {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = f
			}
		}
		if out != nil {
			return out, true
		}
	case []any:
		var out []any
		for i, e := range x {
			if f, ok := floatArgs(e); ok {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = f
			}
		}
		if out != nil {
			return out, true
		}
	}
	return v, false
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
