package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
)

// verboseTool is one element of "tools --json --verbose": the tool exactly
// as tools/list presents it, and the OpenAPI operation it calls (absent
// for the bridge's own tools: ping and the meta-tools).
type verboseTool struct {
	Tool      *mcp.Tool         `json:"tool"`
	Operation *bridge.Operation `json:"operation,omitempty"`
}

// tools prints the tools serve would expose: a table, the tools/list array
// (--json), each tool with its operation (--json --verbose) or statistics
// (--stats). --tag and --path keep the operations they select.
func (a *app) tools(ctx context.Context) error {
	filtered := len(a.cfg.Tags) > 0 || len(a.cfg.Paths) > 0
	if filtered && a.cfg.Stats {
		return usageErrorf("tools: --tag and --path preview tools; --stats counts the whole selection, leave them out")
	}
	bt, err := a.build(ctx, false, false)
	if err != nil {
		return err
	}
	_, srv, err := a.newRuntime(bt)
	if err != nil {
		return err
	}
	defs, err := mcpx.ListTools(ctx, srv.MCP(), version)
	if err != nil {
		return err
	}
	var kept []*mcp.Tool
	var ops []*bridge.Operation
	for _, d := range defs {
		var op *bridge.Operation
		if t, ok := bt.cat.Lookup(d.Name); ok && !t.Builtin() {
			o := t.Operation()
			op = &o
		}
		if filtered && (op == nil || !a.selects(*op)) {
			continue
		}
		kept = append(kept, d)
		ops = append(ops, op)
	}
	if kept == nil {
		kept = []*mcp.Tool{}
	}
	switch {
	case a.cfg.Stats:
		return a.printStats(ctx, bt, defs)
	case a.cfg.JSON && a.cfg.Verbose:
		out := make([]verboseTool, len(kept))
		for i := range kept {
			out[i] = verboseTool{Tool: kept[i], Operation: ops[i]}
		}
		return printJSON(a.stdout, out)
	case a.cfg.JSON:
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(kept)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMETHOD\tPATH\tOPERATION ID\tTAGS\tHINTS\tDESCRIPTION")
	for i, t := range kept {
		method, path, opID, tags := "-", "-", "-", "-"
		if op := ops[i]; op != nil {
			method, path = op.Method, op.Path
			if op.OperationID != "" {
				opID = op.OperationID
			}
			if len(op.Tags) > 0 {
				tags = strings.Join(op.Tags, ",")
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, method, path, opID, tags, hints(t.Annotations), trimDescription(t.Description, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, sk := range bt.cat.Skipped() {
		if filtered && (len(a.cfg.Tags) > 0 || !a.selectsPath(skippedPath(sk.Operation))) {
			continue // a skipped operation's tags are not kept
		}
		fmt.Fprintf(a.stdout, "skipped %s: %s\n", sk.Operation, sk.Reason)
	}
	if filtered {
		fmt.Fprintf(a.stdout, "%d of %d tools selected by %s\n", len(kept), bt.cat.Len(), a.selection())
	}
	return nil
}

// selects reports whether op passes --tag (any of them, ignoring case) and
// --path (any prefix).
func (a *app) selects(op bridge.Operation) bool {
	if len(a.cfg.Tags) > 0 {
		found := false
		for _, want := range a.cfg.Tags {
			for _, tag := range op.Tags {
				found = found || strings.EqualFold(tag, want)
			}
		}
		if !found {
			return false
		}
	}
	return a.selectsPath(op.Path)
}

func (a *app) selectsPath(path string) bool {
	if len(a.cfg.Paths) == 0 {
		return true
	}
	for _, p := range a.cfg.Paths {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// selection describes the filters: `--tag pet --path /store`.
func (a *app) selection() string {
	var parts []string
	for _, t := range a.cfg.Tags {
		parts = append(parts, "--tag "+t)
	}
	for _, p := range a.cfg.Paths {
		parts = append(parts, "--path "+p)
	}
	return strings.Join(parts, " ")
}

// skippedPath is the path of a skipped operation's "METHOD /path" label.
func skippedPath(label string) string {
	_, path, _ := strings.Cut(label, " ")
	return path
}

// trimDescription is the first line of a description, at most n bytes,
// cut at a word boundary.
func trimDescription(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := s[:n-3]
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:") + "..."
}
