package bridge

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/schema"
	"github.com/mcpbridge/mcpbridge/sanitizer"
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

// MarshalJSON writes p as the ping tool answers it: with the upstream URL
// as [PublicURL] shows it, since a key passed in the URL's query
// (?appid=..., ?token=...) must not reach the client.
func (p PingInfo) MarshalJSON() ([]byte, error) {
	type plain PingInfo // without this method
	p.Upstream = PublicURL(p.Upstream)
	return json.Marshal(plain(p))
}

// PublicURL returns the URL raw as the bridge may show it to a client or
// an operator: scheme, host, port and path as they are, and every query
// value masked with [sanitizer.Mask], keys kept (a query item without '='
// is masked whole); userinfo and fragment, which the upstream URL cannot
// hold anyway, are left out. Every value is masked, not those of names
// that look sensitive: keys travel under any name (appid, sig, key). A
// string that does not parse is kept up to its first '?' or '#'. The path
// is shown as it is: credentials belong in upstream-auth, not in the path.
// PublicURL("") is "".
func PublicURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if i := strings.IndexAny(raw, "?#"); i >= 0 {
			return raw[:i] + "?" + sanitizer.Mask
		}
		return raw
	}
	u.User, u.Fragment, u.RawFragment = nil, "", ""
	if u.RawQuery != "" {
		items := strings.Split(u.RawQuery, "&")
		for i, it := range items {
			if k, _, ok := strings.Cut(it, "="); ok {
				items[i] = k + "=" + sanitizer.Mask
			} else if it != "" {
				items[i] = sanitizer.Mask
			}
		}
		u.RawQuery = strings.Join(items, "&")
	}
	return u.String()
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
