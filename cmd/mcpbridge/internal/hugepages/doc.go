// Package hugepages starts mcpbridge on transparent huge pages.
//
// A start touches fresh memory: GitHub's spec, all operations, takes
// ~37,000 page faults to its first tools/list (a 150 MiB peak), a restart
// from the tool cache ~6,300, and package initialisation alone ~600. On
// the virtual machines sidecars and CI run on, a fault on a page the guest
// has not used lately costs the host a fault too: measured on this
// project's machine (a Firecracker guest), 13-17 µs per 4 KiB page, so
// that faults were ~0.55 s of system time in a ~0.8 s first start and the
// largest single cost of a restart.
//
// Where transparent huge pages are enabled on request (the "madvise"
// mode, the default of most distributions), this package's init, which
// runs before the packages that allocate most at init (it imports only
// the standard library's core and sorts before them), grows the heap by a
// block of address space, advises it MADV_HUGEPAGE and frees it untouched
// (a forced collection, then its pages go back to the OS), so that what
// the process allocates next, which reuses those pages first (Go's page
// allocator takes the lowest free address), faults in 2 MiB at a time.
// Once the start's work is done the command calls [End], which withdraws
// the advice (MADV_NOHUGEPAGE) before serving's memory is returned, so
// that a served heap stays on 4 KiB pages: khugepaged does not collapse
// it, and returned memory is returned in full. That is the trouble Go's
// runtime met when it advised its whole heap (go.dev/issue/63334) and why
// it no longer does.
//
// It applies to the commands that load a spec (serve, demo, tools, call,
// validate, init), unless MCPBRIDGE_STARTUP_HUGE_PAGES is false or the
// command line says --startup-huge-pages=false (a config file's
// startup-huge-pages: false is read later: the command then calls End at
// once). Nothing is done when huge pages are always on (the heap already
// gets them) or never, when the kernel counts committed memory strictly
// (overcommit mode 2: the block would count), when GOMEMLIMIT is set below
// a gigabyte, or with GODEBUG=disablethp=1. MADV_HUGEPAGE is advice: a
// kernel without huge pages to spare falls back to 4 KiB pages.
package hugepages

import (
	"os"
	"strconv"
	"strings"
)

// Began reports whether init advised the start's heap for huge pages.
var Began bool

func init() {
	if wanted(os.Args, os.Getenv("MCPBRIDGE_STARTUP_HUGE_PAGES")) {
		Began = begin()
	}
}

// wanted reports whether the command line and environment ask for a
// start on huge pages.
func wanted(args []string, env string) bool {
	if len(args) < 2 {
		return false
	}
	switch args[1] {
	case "serve", "demo", "tools", "call", "validate", "init":
	default:
		return false
	}
	if on, err := strconv.ParseBool(env); err == nil && !on {
		return false
	}
	for _, a := range args[2:] {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--startup-huge-pages="); ok {
			if on, err := strconv.ParseBool(v); err == nil && !on {
				return false
			}
		}
	}
	return true
}
