//go:build unix

package transport

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// PollableStdio returns in and out made to wait for data in Go's network
// poller instead of in a blocked system call, when they are pipes or
// sockets (what an MCP host gives a server it launches): each *os.File of
// that kind is replaced by a non-blocking duplicate of its descriptor.
// Anything else (a terminal, a regular file, /dev/null, a reader that is not
// an *os.File) is returned as is.
//
// Why: os.Stdin and os.Stdout are blocking descriptors, so the goroutine
// waiting for the client's next line holds an OS thread inside read(2).
// Once the line arrives, that thread has to take a processor back from
// whichever thread the runtime handed it to meanwhile, which costs thread
// wake-ups and context switches on every message; a non-blocking
// descriptor is woken through the poller like a socket. Measured across
// processes with small answers (three runs, interleaved with the floor and
// the same build without it): the bridge's overhead over the floor's
// 1.10-1.11x without, 1.06-1.07x with. In one process (BenchmarkStdioCallOSPipe,
// the client on the same runtime) the two are equal.
//
// O_NONBLOCK belongs to the open file description, which a duplicate
// shares with the original (and with any process that inherited it), so it
// is set only on pipes and sockets, never on a terminal a shell shares, and
// restore puts back the mode each had and closes the duplicates. Call
// restore once serving is over; it is never nil.
func PollableStdio(in io.Reader, out io.Writer) (io.Reader, io.Writer, func()) {
	// Both modes are read before either is changed: stdin and stdout may be
	// one description (a socket from inetd), and out must not mistake the
	// flag set for in for its own.
	fin, _ := in.(*os.File)
	fout, _ := out.(*os.File)
	sin, sout := inspect(fin), inspect(fout)
	var made []*pollFile
	if p := sin.duplicate(); p != nil {
		in = p.dup
		made = append(made, p)
	}
	if p := sout.duplicate(); p != nil {
		out = p.dup
		made = append(made, p)
	}
	return in, out, func() {
		// The duplicates are closed first, while the description is still
		// non-blocking: a read or write pending in the poller then returns
		// at once. Clearing the flag first could turn a pending read into a
		// blocking read(2) that Close would wait for.
		for _, p := range made {
			_ = p.dup.Close()
		}
		for _, p := range made {
			if !p.wasNonblock {
				_ = p.rc.Control(func(fd uintptr) { _ = unix.SetNonblock(int(fd), false) })
			}
		}
	}
}

// stdioFile is what inspect learned of one standard stream.
type stdioFile struct {
	rc          syscall.RawConn // nil: leave the file as it is
	wasNonblock bool
	name        string
}

// pollFile is a pollable duplicate of an inspected file.
type pollFile struct {
	stdioFile
	dup *os.File
}

// inspect reports whether f (nil: not a file) is a pipe or a socket, and
// its blocking mode. FIFOs are left alone on Darwin and the BSDs, where
// kqueue does not report the last writer closing a named FIFO (Go's os
// package keeps them out of its poller for that reason, golang/go#24164);
// a host there gives a server sockets or pipes that the fstat mode cannot
// tell from named FIFOs.
func inspect(f *os.File) stdioFile {
	if f == nil {
		return stdioFile{}
	}
	rc, err := f.SyscallConn() // Fd would switch a pollable f to blocking
	if err != nil {
		return stdioFile{}
	}
	var out stdioFile
	cerr := rc.Control(func(fd uintptr) {
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) != nil {
			return
		}
		switch kind := st.Mode & unix.S_IFMT; {
		case kind == unix.S_IFSOCK:
		case kind == unix.S_IFIFO && fifoPollable:
		default:
			return
		}
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			return
		}
		out = stdioFile{rc: rc, wasNonblock: flags&unix.O_NONBLOCK != 0, name: f.Name()}
	})
	if cerr != nil {
		return stdioFile{}
	}
	return out
}

// duplicate returns a non-blocking duplicate of the inspected file, or nil
// when it is of another kind or anything fails (the file is then used as
// it is, blocking, which works the same, only slower).
func (s stdioFile) duplicate() *pollFile {
	if s.rc == nil {
		return nil
	}
	dup := -1
	cerr := s.rc.Control(func(fd uintptr) {
		d, err := unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return
		}
		if err := unix.SetNonblock(d, true); err != nil {
			unix.Close(d) //nolint:errcheck // nothing was handed out
			return
		}
		dup = d
	})
	if cerr != nil || dup < 0 {
		return nil
	}
	// NewFile sees O_NONBLOCK and registers the descriptor with the poller.
	return &pollFile{stdioFile: s, dup: os.NewFile(uintptr(dup), s.name)}
}
