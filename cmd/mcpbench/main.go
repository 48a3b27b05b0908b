// Command mcpbench measures mcpbridge against the floor its stack allows,
// in one run, on this machine.
//
// It starts a deterministic JSON API on loopback and calls it four ways,
// interleaved round-robin so that machine drift hits every target alike:
//
//   - direct: net/http GET with keep-alive (the baseline);
//   - floor/stdio, floor/http: a minimal go-sdk MCP server (mcpbench itself,
//     re-executed with the hidden "floor" subcommand) whose tools make the
//     same GET and return the body verbatim;
//   - bridge/stdio, bridge/http: the mcpbridge binary serving a generated
//     OpenAPI document of the same API (streamable HTTP is stateless, the
//     bridge's default).
//
// For a ~200 B, a 16 KiB and a 1 MiB response (and the 16 KiB one served
// indented) it reports p50/p90/p99 latency, overhead over direct,
// throughput at concurrency 1, 8 and 32, result bytes versus upstream bytes
// and the servers' RSS. It then measures mcpbridge's cold start (spawn to a
// completed tools/list over stdio) on a small spec and on GitHub's spec.
// Every target of the performance issue is printed with the measured value
// and PASS or MISS; nothing is enforced (the exit status is 0 unless a
// step fails).
//
// Usage:
//
//	go run ./cmd/mcpbench [--short] [--json FILE] [--bridge PATH] [--rounds N] [--duration D]
//
// Without --bridge, mcpbench builds ./cmd/mcpbridge into a temporary
// directory first. The bridge's logs go to --bridge-log FILE, or nowhere.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcpbench:", err)
		os.Exit(1)
	}
}

// run is the whole program; main only adds signals and the exit code.
func run(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "floor" {
		return runFloor(ctx, args[1:], stdin, stdout)
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if cfg == nil {
		return nil // --help
	}
	rep, runErr := newBench(cfg, stdout, stderr).run(ctx)
	if rep != nil {
		rep.evaluate()
		rep.print(stdout)
		if cfg.JSONPath != "" {
			if err := rep.writeJSON(cfg.JSONPath); err != nil {
				return err
			}
		}
	}
	return runErr
}
