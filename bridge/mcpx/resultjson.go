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
	taker *handoff.Taker // from the request's context (nil: none)
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
			return &callResult{r, handoff.FromContext(ctx)}, nil
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
// TestCallResultMatchesSDK holds the two byte for byte.
func (r *callResult) MarshalJSON() ([]byte, error) {
	res := r.CallToolResult
	raw, isRaw := res.StructuredContent.(json.RawMessage)
	if res.StructuredContent != nil && (!isRaw || len(raw) == 0) {
		return res.MarshalJSON()
	}
	rest := *res
	rest.Meta, rest.Content, rest.StructuredContent = nil, nil, nil
	tail, err := rest.MarshalJSON()
	if err != nil || !bytes.HasPrefix(tail, []byte(resultLead)) {
		return res.MarshalJSON()
	}
	size := len(tail) + len(raw) + 64
	blocks := make([][]byte, len(res.Content))
	for i, c := range res.Content {
		if blocks[i], err = marshalContent(c); err != nil {
			return nil, err
		}
		size += len(blocks[i]) + 1
	}
	var meta []byte
	if len(res.Meta) > 0 {
		if meta, err = json.Marshal(res.Meta); err != nil {
			return nil, err
		}
		size += len(meta)
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '{')
	if meta != nil {
		buf = append(buf, `"_meta":`...)
		buf = append(buf, meta...)
		buf = append(buf, ',')
	}
	buf = append(buf, `"content":`...)
	if res.Content == nil {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, '[')
		for i, b := range blocks {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, b...)
		}
		buf = append(buf, ']')
	}
	if isRaw {
		buf = append(buf, `,"structuredContent":`...)
		buf = appendHTMLEscaped(buf, raw)
	}
	buf = append(buf, tail[len(resultLead):]...)
	// Handed off, buf is written as it is (transport/handoff): only when
	// it is what jsonrpc2's compaction would leave. Every other part is
	// encoding/json's output; an upstream answer may be pretty-printed.
	if r.taker != nil && len(buf) >= handoff.MinBytes && (!isRaw || handoff.Compact(raw)) {
		return r.taker.Put(buf), nil
	}
	return buf, nil
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

// appendHTMLEscaped appends raw as json.Marshal writes a json.RawMessage:
// with <, > and & in strings escaped (\u003c...). Whitespace and U+2028/9
// are left to the compaction jsonrpc2 runs over the whole result, which
// removes and escapes them as json.Marshal's would have.
func appendHTMLEscaped(buf, raw []byte) []byte {
	if bytes.IndexByte(raw, '<') < 0 && bytes.IndexByte(raw, '>') < 0 && bytes.IndexByte(raw, '&') < 0 {
		return append(buf, raw...)
	}
	b := bytes.NewBuffer(buf)
	json.HTMLEscape(b, raw)
	return b.Bytes()
}
