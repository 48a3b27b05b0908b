package bridge

import "github.com/modelcontextprotocol/go-sdk/mcp"

// RaceEnabled tells the external tests (package bridge_test) whether the
// race detector is on.
const RaceEnabled = raceEnabled

// OperationDefs are the definitions of the operation tools (ping left out),
// in tools/list order.
func (c *Catalog) OperationDefs() []*mcp.Tool { return c.Defs()[:c.Len()] }

// DecodeArgsForTest is decodeArgs, for the external tests.
func DecodeArgsForTest(raw []byte) (map[string]any, error) { return decodeArgs(raw) }
