//go:build unix

package transport_test

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpbridge/mcpbridge/transport"
)

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	var ferr error
	if err := rc.Control(func(fd uintptr) { flags, ferr = unix.FcntlInt(fd, unix.F_GETFL, 0) }); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
	return flags&unix.O_NONBLOCK != 0
}

// blockingPair returns two connected blocking descriptors, each owned by
// one *os.File that os keeps out of its poller, as os.Stdin and os.Stdout
// are: a socket pair, or with pipe a pipe (read end, write end).
func blockingPair(t *testing.T, pipe bool) (a, b *os.File) {
	t.Helper()
	var fds [2]int
	if pipe {
		if err := unix.Pipe(fds[:]); err != nil {
			t.Fatal(err)
		}
	} else {
		var err error
		if fds, err = unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0); err != nil {
			t.Fatal(err)
		}
	}
	a, b = os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// checkPollable: in and out replace stdin and stdout with duplicates that
// the poller serves (only those accept deadlines), data flows through
// them, a read pending at restore returns, and restore puts the blocking
// mode back. client and server are the other ends of stdin and stdout.
func checkPollable(t *testing.T, stdin, client, stdout, server *os.File) {
	t.Helper()
	if stdin.SetReadDeadline(time.Now().Add(time.Hour)) == nil {
		t.Fatal("the blocking stdin accepts a deadline: the test cannot tell pollable from not")
	}
	in, out, restore := transport.PollableStdio(stdin, stdout)
	pin, ok := in.(*os.File)
	if !ok || pin == stdin {
		t.Fatalf("PollableStdio returned %T %p for in, want a new *os.File", in, in)
	}
	pout, ok := out.(*os.File)
	if !ok || pout == stdout {
		t.Fatalf("PollableStdio returned %T %p for out, want a new *os.File", out, out)
	}
	if err := pin.SetReadDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Errorf("pollable stdin refuses a deadline (%v): it is not in the poller", err)
	}
	if err := pout.SetWriteDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Errorf("pollable stdout refuses a deadline (%v): it is not in the poller", err)
	}
	if !nonblocking(t, stdin) || !nonblocking(t, stdout) {
		t.Error("the descriptions are not non-blocking while serving")
	}

	if _, err := client.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := pin.Read(buf)
	if err != nil || string(buf[:n]) != "ping\n" {
		t.Fatalf("read through the pollable stdin: %q, %v", buf[:n], err)
	}
	if _, err := pout.Write([]byte("pong\n")); err != nil {
		t.Fatal(err)
	}
	n, err = server.Read(buf)
	if err != nil || string(buf[:n]) != "pong\n" {
		t.Fatalf("read what the pollable stdout wrote: %q, %v", buf[:n], err)
	}

	// A read waiting for the client is released by restore.
	done := make(chan error, 1)
	go func() {
		_, err := pin.Read(buf)
		done <- err
	}()
	restore()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("a pending read after restore returned %v, want os.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("restore did not release a pending read")
	}
	if nonblocking(t, stdin) || nonblocking(t, stdout) {
		t.Error("restore left the descriptions non-blocking")
	}
	// The originals still work, blocking.
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if n, err := stdin.Read(buf); err != nil || n != 1 {
		t.Errorf("the original stdin after restore: %d, %v", n, err)
	}
}

// TestPollableStdioSockets: stdin and stdout are sockets (a host on Node.js
// gives its children socket pairs).
func TestPollableStdioSockets(t *testing.T) {
	stdin, client := blockingPair(t, false)
	stdout, server := blockingPair(t, false)
	checkPollable(t, stdin, client, stdout, server)
}

// TestPollableStdioOneSocket: stdin and stdout are one socket description
// (inetd); restore still leaves it blocking, as it was.
func TestPollableStdioOneSocket(t *testing.T) {
	conn, peer := blockingPair(t, false)
	stdout := os.NewFile(uintptr(mustDup(t, conn)), "stdout")
	t.Cleanup(func() { stdout.Close() })
	checkPollable(t, conn, peer, stdout, peer)
}

func mustDup(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	fd := -1
	var derr error
	if err := rc.Control(func(u uintptr) { fd, derr = unix.Dup(int(u)) }); err != nil {
		t.Fatal(err)
	}
	if derr != nil {
		t.Fatal(derr)
	}
	return fd
}

// TestPollableStdioLeavesOthers: a regular file, a terminal-less reader and
// writers that are not files are returned unchanged, and left blocking.
func TestPollableStdioLeavesOthers(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sb strings.Builder
	in, out, restore := transport.PollableStdio(f, &sb)
	defer restore()
	if in != io.Reader(f) {
		t.Errorf("a regular file was replaced by %v", in)
	}
	if out != io.Writer(&sb) {
		t.Errorf("a strings.Builder was replaced by %v", out)
	}
	if nonblocking(t, f) {
		t.Error("a regular file was made non-blocking")
	}
	r := strings.NewReader("x")
	in, _, restore2 := transport.PollableStdio(r, nil)
	restore2()
	if in != io.Reader(r) {
		t.Errorf("a strings.Reader was replaced by %v", in)
	}
}
