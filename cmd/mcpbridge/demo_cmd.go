package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/cmd/mcpbridge/demo"
)

// demo starts the embedded example API on a free loopback port and serves
// it through the bridge, over stdio or (with --transport http) HTTP.
func (a *app) demo(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base, done, err := demo.Serve(ctx)
	if err != nil {
		return err
	}
	defer func() { cancel(); <-done }()
	a.log.Info("demo API listening", zap.String("url", base))
	a.specData = demo.Spec
	if a.cfg.Whitelist == "" && !a.cfg.AllOperations {
		a.whitelistData = demo.Whitelist
	}
	a.cfg.Spec = "embedded:demo"
	a.cfg.Upstream = base
	bt, err := a.build(ctx, false, false)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	a.demoNote(bt.cat)
	return a.serveBuilt(ctx, bt, base)
}

// demoNote tells the person who started the demo, on stderr, which tools
// it serves and how to try them (stdout belongs to the protocol).
func (a *app) demoNote(cat *bridge.Catalog) {
	if a.stderr == nil {
		return
	}
	var names []string
	for _, t := range cat.Listed() {
		names = append(names, t.Name())
	}
	self := "mcpbridge" // how the person runs it: installed, or from a checkout
	if strings.Contains(os.Args[0], "go-build") {
		self = "go run ./cmd/mcpbridge"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nmcpbridge demo: the notes API is bridged as %d MCP tools: %s\n", len(names), strings.Join(names, ", "))
	if a.cfg.Transport == "http" {
		url := "http://" + a.cfg.Listen + "/mcp"
		if host, port, err := net.SplitHostPort(a.cfg.Listen); err == nil && port == "0" {
			// The port is chosen when listening, after this note.
			url = "http://" + net.JoinHostPort(host, "PORT") + "/mcp"
		}
		fmt.Fprintf(&b, "Serving MCP at %s (legacy SSE at /sse). Try it from another shell:\n", url)
		fmt.Fprintf(&b, "  %s client list --url %s\n", self, url)
		fmt.Fprintf(&b, "  %s client call listNotes --url %s --args '{\"limit\": 2}'\n", self, url)
		fmt.Fprintf(&b, "  npx @modelcontextprotocol/inspector   # then connect to %s\n", url)
		if strings.Contains(url, ":PORT/") {
			b.WriteString("(PORT: the port the \"listening\" log line gives)\n")
		}
		b.WriteString("\n")
	} else {
		b.WriteString("This process now speaks MCP on stdin/stdout, waiting for a client. To try it, stop it (Ctrl-C) and run:\n")
		fmt.Fprintf(&b, "  %s client call listNotes --args '{\"limit\": 2}' --command \"%s demo\"\n", self, self)
		fmt.Fprintf(&b, "  npx @modelcontextprotocol/inspector %s demo\n", self)
		b.WriteString("or add it to Claude Desktop / Claude Code (README: \"Use it from Claude\"); over HTTP: mcpbridge demo --transport http\n\n")
	}
	_, _ = io.WriteString(a.stderr, b.String()) // a note to a person: nothing to do if stderr is gone
}
