package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStderrClosedKeepsServing: a host that stops reading the bridge's
// stderr (closes its end of the pipe) loses the logs, not the server. Go
// kills a program that writes to a broken pipe on fd 2 with SIGPIPE unless
// it handles the signal; the bridge logs a usage record per call, so the
// next call killed it.
func TestStderrClosedKeepsServing(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cs, _ := startBridgeStderr(t, w, "demo")
	r.Close()
	for i := range 3 {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("call %d after stderr was closed: %v", i, err)
		}
		if res.IsError {
			t.Fatalf("call %d: error result", i)
		}
		time.Sleep(150 * time.Millisecond) // the usage records are written within 50 ms
	}
}

// TestStderrNeverReadKeepsServing: a host that never reads the bridge's
// stderr (nor closes it) must not stall the server once the pipe is full
// (64 KiB on Linux): log lines are dropped instead, and the process still
// exits when the client leaves.
func TestStderrNeverReadKeepsServing(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() }) // after the bridge's exit: never read
	defer w.Close()
	cs, _ := startBridgeStderr(t, w, "demo", "--log-level", "debug")
	// Each call logs a usage record and go-sdk's debug lines: well over
	// the pipe's 64 KiB in all.
	for i := range 600 {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{}})
		cancel()
		if err != nil {
			r.Close() // unblocks a stalled bridge, so that it can exit
			t.Fatalf("call %d with stderr never read: %v", i, err)
		}
		if res.IsError {
			t.Fatalf("call %d: error result", i)
		}
	}
}

// TestExitWithStderrFull: the error main prints at exit must not keep the
// process alive when stderr is a full pipe nobody reads.
func TestExitWithStderrFull(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	// Fill the pipe.
	if err := w.SetWriteDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Skipf("pipe without deadlines: %v", err)
	}
	for {
		if _, err := w.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	cmd := exec.Command(os.Args[0], "tools", "--all-operations") // fails: no --spec
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Errorf("exit: %v; want a failure status", err)
		}
	case <-time.After(10 * time.Second):
		r.Close() // lets it exit
		<-done
		t.Fatal("the process did not exit in 10s with stderr full")
	}
}

// TestDemoNoteWithStderrFull: the demo's note to a person goes out with
// the log, so a full stderr nobody reads does not stop the demo from
// serving (here: from seeing its client leave at once).
func TestDemoNoteWithStderrFull(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if err := w.SetWriteDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
		t.Skipf("pipe without deadlines: %v", err)
	}
	for {
		if _, err := w.Write(make([]byte, 4096)); err != nil {
			break
		}
	}
	if err := w.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- run(t.Context(), []string{"demo"}, strings.NewReader(""), &out, w) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("demo: %v", err)
		}
	case <-time.After(10 * time.Second):
		r.Close() // lets it go on
		<-done
		t.Fatal("the demo did not end in 10s with stderr full: a write to stderr blocked")
	}
}
