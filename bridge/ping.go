package bridge

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// PingInfo is what the built-in ping tool reports.
type PingInfo struct {
	Bridge      string `json:"bridge"`
	Version     string `json:"version"`
	Upstream    string `json:"upstream"`
	SpecTitle   string `json:"specTitle,omitempty"`
	SpecVersion string `json:"specVersion,omitempty"`
	Tools       int    `json:"tools"`
	Degraded    bool   `json:"degraded"`
	Reason      string `json:"reason,omitempty"`
}

// PingToolName is the built-in tool's name; when an operation already uses
// it, the built-in becomes "mcpbridge_ping".
const PingToolName = "ping"

// AddPing registers the built-in ping tool, which answers without calling
// the upstream. taken lists tool names already in use.
func AddPing(s *mcp.Server, info PingInfo, taken map[string]bool) {
	name := PingToolName
	if taken[name] {
		name = "mcpbridge_ping"
	}
	body, _ := json.Marshal(info) // a struct of strings, ints and bools cannot fail
	desc := "Reports the bridge's health: version, upstream base URL, spec title and version, tool count, and whether it runs degraded. Does not call the upstream."
	tr := true
	s.AddTool(&mcp.Tool{
		Name:        name,
		Title:       "Bridge health",
		Description: desc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &tr, Title: "Bridge health"},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}, nil
	})
}
