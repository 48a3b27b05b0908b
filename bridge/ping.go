package bridge

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/schema"
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
	// LastReload is the outcome of the last reload attempt, when there was
	// one: "ok", "unchanged", or why it failed (the old tools keep serving).
	LastReload string `json:"lastReload,omitempty"`
}

// PingToolName is the built-in tool's name; when an operation already uses
// it, the built-in becomes "mcpbridge_ping".
const PingToolName = "ping"

const pingInput = `{"type":"object","properties":{}}`

// pingTool is the built-in ping tool for a catalog whose other tools are
// taken.
func pingTool(taken map[string]*Tool) *Tool {
	name := PingToolName
	if _, ok := taken[name]; ok {
		name = "mcpbridge_ping"
	}
	tr := true
	return &Tool{
		def: &mcp.Tool{
			Name:        name,
			Title:       "Bridge health",
			Description: "Reports the bridge's health: version, upstream base URL, spec title and version, tool count, whether it runs degraded, and the last reload. Does not call the upstream.",
			InputSchema: json.RawMessage(pingInput),
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &tr, Title: "Bridge health"},
		},
		input:   schema.NewLazy(json.RawMessage(pingInput)),
		builtin: builtinPing,
	}
}
