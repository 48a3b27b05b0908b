// Command mcpbridge serves the operations of a REST API's OpenAPI document
// as MCP tools over stdio or HTTP.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		printBounded(os.Stderr, "mcpbridge: "+err.Error()+"\n", logFlushTimeout)
		os.Exit(exitCode(err)) // 2: a command line not understood (cli.go)
	}
}

// printBounded writes s to w, waiting at most d: a full pipe nobody reads
// (a host that ignores stderr) must not keep the process from exiting.
func printBounded(w io.Writer, s string, d time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.WriteString(w, s)
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
