package mcpx

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/result"
)

// The values of [Options.ResultText]: when a result that carries its JSON
// answer as structuredContent also carries it as a text block.
const (
	// TextAlways sends both to every client on 2025-06-18 or later, as MCP
	// asks "for backwards compatibility": hosts differ in which one they
	// give the model (Claude Desktop reads content; Claude Code reads
	// structuredContent when it is there), so both serve every host. The
	// default of [Options] ("").
	TextAlways = "always"
	// TextKnown sends both, except to the clients known to hand the model
	// structuredContent and drop the text whenever structuredContent is
	// there (Options.StructuredClients, by clientInfo.name): to them the
	// text block is bytes nobody reads, and decoding it costs the client as
	// much as the answer itself. The clients known to read content only
	// (Options.ContentClients) get the text alone, and are listed the tools
	// without output schemas, so that no client requires the object. The
	// command's default.
	TextKnown = "known"
	// TextAuto sends the text block only to clients on a protocol revision
	// without structuredContent (before 2025-06-18), and to the clients
	// known to read content only (Options.ContentClients, as in
	// [TextKnown]). For deployments whose clients read structuredContent;
	// it halves the bytes of large answers.
	TextAuto = "auto"
)

// DefaultStructuredClients are the clients [TextKnown] sends no duplicate
// text block by default, because their model reads structuredContent and
// never the text blocks of a result that has it:
//
//   - Claude Code ("claude-code"), whose model receives
//     JSON.stringify(structuredContent) (anthropics/claude-code issues 9962,
//     55677, 79944; reproduced on 2.1.280). Its error results keep their
//     text, which is what it shows then (issue 86032).
//   - Codex ("codex-mcp-client", the clientInfo.name its MCP client sends),
//     which hands its model the serialized structuredContent
//     whenever it is present and not null, and the content blocks only
//     otherwise (openai/codex, codex-rs/protocol/src/models.rs, the
//     conversion of a CallToolResult into the function call's output).
//   - VS Code ("Visual Studio Code", its product name; "Visual Studio Code -
//     Insiders" matches too), which gives the model
//     JSON.stringify(structuredContent) "in place of any textual
//     description when present" (microsoft/vscode, src/vs/workbench/contrib/
//     mcp/common/mcpLanguageModelToolContribution.ts; the name is
//     productService.nameLong in mcpServerRequestHandler.ts).
var DefaultStructuredClients = []string{"claude-code", "codex-mcp-client", "Visual Studio Code"}

// DefaultContentClients are the hosts listed the tools without output
// schemas and given answers as text alone by default (Options.
// ContentClients), because their model reads a result's content whenever
// it has any:
//
//   - Claude Desktop ("claude-ai"), which shows its model a result's content
//     and not its structuredContent (blockscout/mcp-server issue 324;
//     seuros/action_mcp issue 181: a result with empty content shows
//     nothing), and which drops structuredContent itself on the way back
//     from claude.ai for local servers (anthropics/claude-ai-mcp issue 563).
//   - Kimi Code ("kimi-code", MoonshotAI/kimi-code's KIMI_MCP_CLIENT_NAME),
//     which keeps a tool's name, description and input schema only, and
//     hands its model the content blocks, structuredContent only when
//     there are none (packages/agent-core/src/mcp/client-shared.ts; pull
//     request 3234).
//   - Gemini CLI ("gemini-cli-mcp-client", google-gemini/gemini-cli
//     packages/core/src/tools/mcp-client.ts), which makes its model's parts
//     of the content blocks alone (transformMcpContentToParts in
//     packages/core/src/tools/mcp-tool.ts).
//
// All use the TypeScript SDK's client, which still decodes, and validates
// against the listed output schema, every structuredContent it is sent:
// bytes and work for an object their model never reads. Text alone is safe
// for any host, whichever block it prefers: with no structuredContent,
// every host reads the content.
var DefaultContentClients = []string{"claude-ai", "kimi-code", "gemini-cli-mcp-client"}

// structuredSince is the first protocol revision with structuredContent.
const structuredSince = "2025-06-18"

// ValidResultText reports whether v is a ResultText value ("" is always).
func ValidResultText(v string) bool {
	return v == "" || v == TextAlways || v == TextKnown || v == TextAuto
}

// adapt fits a tool result to the revision the caller negotiated
// (version) and to the client it is (name, from callerOf):
//
//   - a client that takes text alone (takesText: before 2025-06-18, which
//     knows nothing of structuredContent, or a content-only host) gets
//     none (its text block carries the whole answer in every mode; the
//     bridge does not make one for such a caller in the first place);
//   - in [TextAuto] mode, a newer client gets no text block duplicating a
//     structuredContent that is the whole answer (a reduced or replaced
//     one, see result.MetaKey, keeps its text); in [TextKnown] mode, only
//     a newer client named in Options.StructuredClients;
//   - such a client, in [TextKnown] mode, gets a structuredContent that is
//     not the whole answer as an error result carrying the answer as text
//     (wholeAsText): it shows its model structuredContent alone, which
//     would be the reduced object or {}, and an error result's text.
//
// An unknown revision ("") counts as a new one.
func (s *Server) adapt(version, name string, res *mcp.CallToolResult) {
	if res == nil || res.StructuredContent == nil {
		return
	}
	if s.takesText(version, name) {
		res.StructuredContent = nil
		if res.Meta != nil {
			delete(res.Meta, result.MetaKey)
			if len(res.Meta) == 0 {
				res.Meta = nil
			}
		}
		return
	}
	if res.IsError || len(res.Content) == 0 {
		return
	}
	scOnly := s.resultText == TextKnown && knownClient(s.scClients, name)
	if info, partial := res.Meta[result.MetaKey]; partial {
		if scOnly {
			wholeAsText(res, info)
		}
		return
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	raw, isRaw := res.StructuredContent.(json.RawMessage)
	if !ok || !isRaw || tc.Text != string(raw) {
		return
	}
	rest := res.Content[1:] // a shaping note, say, stays
	switch {
	case s.resultText == TextAuto, scOnly:
		res.Content = append(make([]mcp.Content, 0, len(rest)), rest...)
	case len(raw)*maxEscape > maxResultBytes && len(raw)+escapedLen(tc.Text) > maxResultBytes:
		// Sent twice, the answer would make a message the TypeScript SDK's
		// stdio client refuses (it closes the connection): once is enough.
		res.Content = append([]mcp.Content{structuredOnlyNote(len(raw))}, rest...)
	}
}

// structuredOnlyNote is the text block in place of one that repeated a
// structuredContent of n bytes, left out for the result's size.
func structuredOnlyNote(n int) *mcp.TextContent {
	return &mcp.TextContent{Text: fmt.Sprintf("The answer (%d bytes of JSON) is in structuredContent only: with a second copy as text the result would pass %d MiB, more than MCP clients such as the TypeScript SDK accept in one message. Narrow the request to get it as text too.", n, maxResultBytes>>20)}
}

// takesText reports whether a client on version named name takes a
// result's answer as text alone, and so is listed no output schemas
// (listClass) and given no structuredContent: one before 2025-06-18, the
// first revision with either, or, unless every client gets both
// ([TextAlways]), one of Options.ContentClients.
func (s *Server) takesText(version, name string) bool {
	return version != "" && version < structuredSince || knownClient(s.ccClients, name)
}

// maxResultBytes bounds a result that carries its answer twice: under the
// official TypeScript SDK's 10 MiB stdio message cap, with room for the
// envelope and the other blocks.
const maxResultBytes = 9 << 20

// maxEscape bounds len(raw)+escapedLen(text) over len(raw) for a text
// equal to raw: a byte escapes to at most 6 (\u00XX). Under it, escapedLen
// (a pass over the answer) need not run.
const maxEscape = 7

// escapedLen is the length of s as a JSON string's contents (go-sdk's
// text block is json.Marshal's, which escapes <, > and & too; an invalid
// UTF-8 byte, which takes 6 as well, is left to fit).
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 5 // \u00XX
		}
	}
	return n
}

// callerOf is the calling client's name (clientInfo.name), for the lists
// of known hosts (Options.StructuredClients, Options.ContentClients). It is
// in the request's _meta from 2026-07-28 on, else in the session's
// initialize. A stateless HTTP request before 2026-07-28 has neither; there
// the User-Agent's product stands in (Claude Code sends
// "claude-code/2.1.204 (cli)"), and without one the client is unknown ("")
// and gets both blocks. None of this is a credential: a client that lies
// about its name gets other blocks of the same answer, nothing more.
func (s *Server) callerOf(req interface {
	GetExtra() *mcp.RequestExtra
	ClientInfo() *mcp.Implementation
}) string {
	if len(s.scClients) == 0 && len(s.ccClients) == 0 {
		return ""
	}
	var meta map[string]any
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		if r.Params != nil {
			meta = r.Params.Meta
		}
	case *mcp.ListToolsRequest:
		if r.Params != nil {
			meta = r.Params.Meta
		}
	}
	var name string
	if info, ok := meta[mcp.MetaKeyClientInfo].(map[string]any); ok {
		name, _ = info["name"].(string)
	}
	if name == "" {
		if info := req.ClientInfo(); info != nil {
			name = info.Name
		}
	}
	if extra := req.GetExtra(); name == "" && extra != nil && extra.Header != nil {
		product, _, _ := strings.Cut(extra.Header.Get("User-Agent"), " ")
		name, _, _ = strings.Cut(product, "/")
	}
	return name
}

// knownClient reports whether name is one of names, alone or followed by
// a space and more: a proxy that appends to the name ("claude-code (via
// mcp-remote 0.1.29)") still counts, as the result reaches the same host.
func knownClient(names []string, name string) bool {
	for _, n := range names {
		if n == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(name, n); ok && (rest == "" || rest[0] == ' ') {
			return true
		}
	}
	return false
}

// wholeAsText turns a successful result whose structuredContent is not
// the whole answer (info is its result.MetaKey entry) into an error result
// that carries the whole answer as text, for a client that would show its
// model structuredContent alone: the model then reads every byte of the
// answer, and a note saying the call itself succeeded. Strict clients
// accept it (an error result's structuredContent is not checked), and it
// has none, so no client reads a partial object as the answer. An answer
// cut at the size limit ("truncated" in info) is said to be one: its text
// is what arrived, not the whole answer.
func wholeAsText(res *mcp.CallToolResult, info any) {
	reason, cut := "it does not match the tool's output schema", false
	if m, ok := info.(map[string]any); ok {
		if r, ok := m["reason"].(string); ok && r != "" {
			reason = r
		}
		cut = m["truncated"] == true
	}
	note := &mcp.TextContent{Text: "The call succeeded, but its answer does not fit this tool's output schema (" + reason + "), so it is given whole as text below rather than as structuredContent; read it as the result."}
	if cut {
		note.Text = "The call succeeded, but its answer was longer than the size limit (--max-response-bytes) and was cut, so it does not fit this tool's output schema: the part that arrived is given as text below rather than as structuredContent; read it as the result."
	}
	res.Content = append([]mcp.Content{note}, res.Content...)
	res.StructuredContent = nil
	res.IsError = true
}
