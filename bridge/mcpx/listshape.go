package mcpx

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/transport/handoff"
)

// titleSince is the first protocol revision with a tool's top-level title;
// before it, annotations.title was the only place for one.
const titleSince = "2025-06-18"

// listResult is a tools/list result as one client receives it. It embeds
// go-sdk's result, so it is an [mcp.Result] with everything go-sdk sets on
// it after the middleware (the cache hints, and resultType and _meta on the
// 2026-07-28 wire), and shadows only the tools.
type listResult struct {
	*mcp.ListToolsResult
	Tools []listedTool `json:"tools"`
}

// listedTool is one tool as sent: go-sdk's definition, shared by every
// session and never modified, with a title, annotations and output schema
// fitted to the client shadowing its own (encoding/json takes the
// shallower of two fields with one name). Were go-sdk to give mcp.Tool or
// mcp.ListToolsResult a MarshalJSON, the embedding would promote it and
// undo the shadowing; TestToolsListShape fails then.
type listedTool struct {
	*mcp.Tool
	Title        string `json:"title,omitempty"`
	Annotations  *hints `json:"annotations,omitempty"`
	OutputSchema any    `json:"outputSchema,omitempty"`
}

// hints are [mcp.ToolAnnotations] whose false booleans are left out, as
// every revision's schema defaults them to false and every reader, strict
// or sloppy, takes a missing one for false (go-sdk's own MarshalJSON writes
// readOnlyHint and idempotentHint always). Its fields are those of
// mcp.ToolAnnotations, names, types and order: the conversion in fitTool
// stops compiling when go-sdk adds one, so nothing is dropped unseen.
//
// destructiveHint and openWorldHint default to true, yet a true one is sent
// as it is: a client testing `annotations?.destructiveHint` reads a missing
// hint as false, and would take a DELETE for a harmless tool.
type hints struct {
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint,omitempty"`
	Title           string `json:"title,omitempty"`
}

// shapeList fits every tools/list result to the revision its client
// negotiated (fitTool). It is the outermost middleware, so it sees the list
// filterList left.
func (s *Server) shapeList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		// A cursor of the bridge's own pages (listpage.go) is not go-sdk's
		// to read: it lists everything, and the page is cut from that.
		cursor := ""
		if lreq, ok := req.(*mcp.ListToolsRequest); ok && lreq.Params != nil && strings.HasPrefix(lreq.Params.Cursor, pageCursorPrefix) {
			cursor, lreq.Params.Cursor = lreq.Params.Cursor, ""
		}
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		lr, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return res, nil
		}
		class := classNew
		if lreq, ok := req.(*mcp.ListToolsRequest); ok {
			class = s.listClass(lreq.ProtocolVersion(), s.callerOf(lreq))
		}
		pg, err := page(lr, cursor)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		if pg != lr { // one page of a list too large for one message
			return fitList(class, pg), nil
		}
		if !s.rt.Catalog().HasAccessLists() { // the same list for every caller
			if b, ok := s.lists.tools(class, lr.Tools, true); ok {
				return &encodedList{ListToolsResult: lr, tools: b, lc: &s.lists, class: class, taker: handoff.FromContext(ctx)}, nil
			}
		}
		return fitList(class, lr), nil
	}
}

// fitList is lr as a client of list class k receives it; lr's tools are
// left as they are.
func fitList(k int, lr *mcp.ListToolsResult) *listResult {
	out := &listResult{ListToolsResult: lr, Tools: make([]listedTool, len(lr.Tools))}
	for i, def := range lr.Tools {
		out.Tools[i] = fitTool(k, def)
	}
	return out
}

// fitTool is def as a client of list class k receives it, without
// repeating itself and without losing anything that client can read:
//
//   - the title goes once, where the revision puts it: top-level from
//     2025-06-18 on (an unknown revision, "", counts as new), in
//     annotations.title before (those clients know no other place); a
//     second title that differs from the first is kept;
//   - the output schema goes only to a client that takes
//     structuredContent (classNew): a client before 2025-06-18 knows no
//     such thing, and a host that takes text alone gets none, so must not
//     be told to expect it (the TypeScript SDK fails a call whose tool
//     declares an output schema and whose result has no structuredContent);
//   - a false readOnlyHint or idempotentHint, MCP's default, is left out
//     (see [hints]);
//   - annotations left empty are left out.
//
// An idempotentHint on a read-only tool stays, though MCP calls it
// "meaningful only when readOnlyHint == false": go-sdk's client decodes a
// missing one as false, and a client that retries only idempotent tools
// would stop retrying reads.
func fitTool(k int, def *mcp.Tool) listedTool {
	t := listedTool{Tool: def, Title: def.Title}
	if k == classNew {
		t.OutputSchema = def.OutputSchema
	}
	var h hints
	if def.Annotations != nil {
		h = hints(*def.Annotations)
	}
	if k == classOld {
		if h.Title == "" {
			h.Title = t.Title
		}
		if t.Title == h.Title {
			t.Title = ""
		}
	} else {
		if t.Title == "" {
			t.Title = h.Title
		}
		if h.Title == t.Title {
			h.Title = ""
		}
	}
	if h != (hints{}) {
		t.Annotations = &h
	}
	return t
}

// Listed is def as tools/list sends it to a client on the newest revision
// that takes structuredContent (fitTool), for measuring the list without a
// session.
func Listed(def *mcp.Tool) any { return fitTool(classNew, def) }
