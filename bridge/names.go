package bridge

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxToolNameLen is the longest tool name produced. MCP allows 128, but
// several clients (and model APIs) reject names over 64 characters.
const maxToolNameLen = 64

// toolName derives the tool name for an operation: the whitelist override,
// else the operationId, else "method_path". The result matches
// [A-Za-z0-9_-]{1,64}; longer names keep their head and end with a short
// hash of the full name, so they stay unique and deterministic.
func toolName(override, operationID, method, path string) string {
	raw := override
	if raw == "" {
		raw = operationID
	}
	if raw == "" {
		raw = strings.ToLower(method) + "_" + path
	}
	return sanitizeName(raw)
}

func sanitizeName(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	lastUnderscore := false
	for _, r := range raw {
		ok := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '_'
		if !ok {
			r = '_'
		}
		if r == '_' {
			if lastUnderscore {
				continue
			}
			lastUnderscore = true
		} else {
			lastUnderscore = false
		}
		b.WriteRune(r)
	}
	name := strings.Trim(b.String(), "_")
	if name == "" {
		name = "op"
	}
	if len(name) <= maxToolNameLen {
		return name
	}
	sum := sha256.Sum256([]byte(raw))
	suffix := hex.EncodeToString(sum[:])[:8]
	head := strings.TrimRight(name[:maxToolNameLen-len(suffix)-1], "_-")
	return head + "_" + suffix
}
