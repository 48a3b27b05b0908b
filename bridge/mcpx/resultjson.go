package mcpx

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/transport/handoff"
)

// callResult is a tools/call result that marshals to the bytes go-sdk's
// own CallToolResult.MarshalJSON gives, without compacting its blocks once
// more on the way.
//
// Why: go-sdk's MarshalJSON is json.Marshal of a wrapper struct, and
// encoding/json validates and compacts the output of every MarshalJSON it
// meets, so the text block (TextContent's MarshalJSON) and a json.RawMessage
// structuredContent are each scanned once more there, before jsonrpc2
// compacts the whole result again (and, over streamable HTTP, EncodeMessage
// a third time). With 1 MiB answers appendCompact was 43-49% of the
// bridge's CPU (perf). Here the blocks' encodings are appended as they are
// and only go-sdk's outer passes remain.
//
// It embeds go-sdk's result, so it is an [mcp.Result] and what go-sdk sets
// on it after the middleware (resultType, _meta's server info) lands on the
// embedded value, which MarshalJSON reads when jsonrpc2 encodes it.
type callResult struct {
	*mcp.CallToolResult
	taker  *handoff.Taker // from the request's context (nil: none)
	limit  int            // the largest encoding sent whole (0: fitLimit)
	fitted bool           // made to fit limit (fit): encoded as it is
}

// encodeCall wraps every tools/call result in a callResult. It is the
// outermost middleware: the ones inside see go-sdk's type.
func (s *Server) encodeCall(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/call" || err != nil {
			return res, err
		}
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
			return &callResult{CallToolResult: r, taker: handoff.FromContext(ctx), limit: resultLimit(s.rt.Catalog().MaxResponseBytes())}, nil
		}
		return res, nil
	}
}

// resultLead is how go-sdk's encoding of a CallToolResult without _meta,
// content and structuredContent begins; the rest of it (isError,
// requestState, resultType, inputRequests...) is kept as it is.
const resultLead = `{"content":null`

// MarshalJSON writes _meta, content and structuredContent itself and takes
// the remaining fields from go-sdk's MarshalJSON of a copy without them, so
// that a field go-sdk adds is still written. Anything it does not expect
// (a structuredContent that is not a json.RawMessage, a go-sdk whose
// encoding begins otherwise) goes to go-sdk's MarshalJSON whole.
// TestCallResultMatchesSDK holds the two byte for byte. A result whose
// encoding would pass its limit is made to fit first (fit).
func (r *callResult) MarshalJSON() ([]byte, error) {
	res := r.CallToolResult
	raw, isRaw := res.StructuredContent.(json.RawMessage)
	if res.StructuredContent != nil && (!isRaw || len(raw) == 0) {
		return r.whole()
	}
	rest := *res
	rest.Meta, rest.Content, rest.StructuredContent = nil, nil, nil
	tail, err := rest.MarshalJSON()
	if err != nil || !bytes.HasPrefix(tail, []byte(resultLead)) {
		return r.whole()
	}
	// The result in parts, the large ones (text blocks, structuredContent)
	// as they are: joined once below, or handed off without being joined.
	parts := make([][]byte, 0, 2*len(res.Content)+8)
	parts = append(parts, []byte("{"))
	if len(res.Meta) > 0 {
		meta, err := json.Marshal(res.Meta)
		if err != nil {
			return nil, err
		}
		parts = append(parts, []byte(`"_meta":`), meta, []byte(","))
	}
	if res.Content == nil {
		parts = append(parts, []byte(`"content":null`))
	} else {
		parts = append(parts, []byte(`"content":[`))
		for i, c := range res.Content {
			if i > 0 {
				parts = append(parts, []byte(","))
			}
			b, err := marshalContent(c)
			if err != nil {
				return nil, err
			}
			parts = append(parts, b)
		}
		parts = append(parts, []byte("]"))
	}
	if isRaw {
		parts = append(parts, []byte(`,"structuredContent":`), htmlEscaped(raw))
	}
	parts = append(parts, tail[len(resultLead):])
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	if size > r.maxBytes() && !r.fitted {
		return r.fit(size).MarshalJSON()
	}
	// Handed off, the parts are written as they are (transport/handoff):
	// only when they are what jsonrpc2's compaction would leave. Every
	// other part is encoding/json's output; an upstream answer may be
	// pretty-printed.
	if r.taker != nil && size >= handoff.MinBytes && (!isRaw || handoff.Compact(raw)) {
		return r.taker.Put(parts...), nil
	}
	return bytes.Join(parts, nil), nil
}

// whole is go-sdk's own encoding of the result, made to fit its limit
// first when it would not.
func (r *callResult) whole() ([]byte, error) {
	b, err := r.CallToolResult.MarshalJSON()
	if err == nil && len(b) > r.maxBytes() && !r.fitted {
		return r.fit(len(b)).MarshalJSON()
	}
	return b, err
}

// marshalContent is json.Marshal of one content block, without the second
// compaction of a text block's own encoding (already compact: it is
// json.Marshal's).
func marshalContent(c mcp.Content) ([]byte, error) {
	if tc, ok := c.(*mcp.TextContent); ok && tc != nil {
		return tc.MarshalJSON()
	}
	return json.Marshal(c)
}

// htmlEscaped is raw as json.Marshal writes a json.RawMessage: with <, >,
// & and the line separators U+2028 and U+2029 escaped (\u003c...,
// \u2028); raw itself when it has none of them. Whitespace is left to
// the compaction jsonrpc2 runs over the whole result (a handed-off result
// has none: handoff.Compact).
func htmlEscaped(raw []byte) []byte {
	if bytes.IndexByte(raw, '<') < 0 && bytes.IndexByte(raw, '>') < 0 && bytes.IndexByte(raw, '&') < 0 &&
		!bytes.Contains(raw, []byte("\u2028")) && !bytes.Contains(raw, []byte("\u2029")) {
		return raw
	}
	var b bytes.Buffer
	b.Grow(len(raw) + len(raw)/16)
	json.HTMLEscape(&b, raw)
	return b.Bytes()
}
