//go:build linux && (amd64 || arm64 || ppc64le || s390x || riscv64 || loong64)

package main

import (
	"bytes"
	"math"
	"os"
	"runtime/debug"
	"sync"
	"syscall"
	"unsafe"
)

// Start-up on huge pages.
//
// A start touches fresh memory: GitHub's spec, all operations, takes
// ~37,000 page faults to its first tools/list (a 150 MiB peak), a restart
// from the tool cache ~6,300. On the virtual machines sidecars and CI run
// on, a fault on a page the guest has not used lately costs the host a
// fault too: measured here (a Firecracker guest), 13-17 µs per 4 KiB
// page, so that faults were ~0.55 s of system time in a ~0.8 s first start
// and the largest single cost of a restart.
//
// Where transparent huge pages are enabled on request (the "madvise" mode,
// the default of most distributions), the start asks for them: before the
// work, the heap is grown by a large block that is freed at once, its
// memory advised MADV_HUGEPAGE and returned to the OS untouched, so that
// the start's allocations, which reuse those pages first (the page
// allocator takes the lowest free address), fault in 2 MiB at a time.
// Once the start's work is done (endStartupHugePages), the advice is
// withdrawn (MADV_NOHUGEPAGE) before serving's memory is returned, so that
// a served heap stays on 4 KiB pages: khugepaged does not collapse it, and
// returned memory is returned in full. That is the trouble Go's runtime
// met when it advised its whole heap (go.dev/issue/63334) and why it no
// longer does.
//
// Nothing is done when huge pages are always on (the heap already gets
// them) or never, when the kernel counts committed memory strictly
// (overcommit mode 2: the block would count), when GOMEMLIMIT is set below
// a gigabyte, or with GODEBUG=disablethp=1. MADV_HUGEPAGE is advice: a
// kernel without huge pages to spare falls back to 4 KiB pages.

const (
	madvHugePage   = 14 // MADV_HUGEPAGE
	madvNoHugePage = 15 // MADV_NOHUGEPAGE
	hugePageBytes  = 2 << 20
	// startupBlock is the heap the start may fault in on huge pages:
	// GitHub's first start peaks at ~150 MiB. Address space only; what is
	// never touched costs no memory.
	startupBlock = 256 << 20
)

var startupHuge struct {
	sync.Mutex
	start, end uintptr // the advised range; 0, 0: none
}

// beginStartupHugePages advises a fresh heap block for huge pages (see
// above) and reports whether it did.
func beginStartupHugePages() bool {
	if !hugePagesOnRequest() {
		return false
	}
	b := make([]byte, startupBlock)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	b = nil // p is an address, not a pointer: the block is garbage now
	start := (p + hugePageBytes - 1) &^ (hugePageBytes - 1)
	end := (p + startupBlock) &^ (hugePageBytes - 1)
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvHugePage); errno != 0 {
		debug.FreeOSMemory()
		return false
	}
	// Frees the block and returns its pages, never touched, to the OS:
	// the heap's accounting is then what it was, plus released memory.
	debug.FreeOSMemory()
	startupHuge.Lock()
	startupHuge.start, startupHuge.end = start, end
	startupHuge.Unlock()
	return true
}

// endStartupHugePages withdraws the advice; later calls do nothing.
func endStartupHugePages() {
	startupHuge.Lock()
	defer startupHuge.Unlock()
	if startupHuge.start == 0 {
		return
	}
	syscall.Syscall(syscall.SYS_MADVISE, startupHuge.start, startupHuge.end-startupHuge.start, madvNoHugePage) //nolint:errcheck // advice
	startupHuge.start, startupHuge.end = 0, 0
}

// hugePagesOnRequest reports whether the kernel gives huge pages to memory
// advised for them and not otherwise, and nothing else here objects.
func hugePagesOnRequest() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return false
	}
	commit, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	if commit = bytes.TrimSpace(commit); err != nil || len(commit) == 0 || commit[0] == '2' {
		return false
	}
	if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 && limit < 1<<30 {
		return false
	}
	return !bytes.Contains([]byte(os.Getenv("GODEBUG")), []byte("disablethp=1"))
}
