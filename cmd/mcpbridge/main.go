// Command mcpbridge serves the operations of a REST API's OpenAPI document
// as MCP tools over stdio or HTTP.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbridge:", err)
		os.Exit(exitCode(err)) // 2: a command line not understood (cli.go)
	}
}
