//go:build linux && (amd64 || arm64 || ppc64le || s390x || riscv64 || loong64)

package hugepages

import (
	"bytes"
	"math"
	"os"
	"runtime/debug"
	"sync"
	"syscall"
	"unsafe"
)

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

// begin advises a fresh heap block for huge pages (see doc.go) and
// reports whether it did.
func begin() bool {
	if !onRequest() {
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

// End withdraws the advice, if given; later calls do nothing.
func End() {
	startupHuge.Lock()
	defer startupHuge.Unlock()
	if startupHuge.start == 0 {
		return
	}
	syscall.Syscall(syscall.SYS_MADVISE, startupHuge.start, startupHuge.end-startupHuge.start, madvNoHugePage) //nolint:errcheck // advice
	startupHuge.start, startupHuge.end = 0, 0
}

// onRequest reports whether the kernel gives huge pages to memory
// advised for them and not otherwise, and nothing else here objects.
func onRequest() bool {
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
