//go:build linux && (amd64 || arm64 || ppc64le || s390x || riscv64 || loong64)

package hugepages

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// vmFlags is the VmFlags line of the mapping of this process holding addr.
func vmFlags(t *testing.T, addr uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return nil
}

// TestStartupHugePages: where the kernel gives huge pages on request, the
// start's heap block is advised for them (smaps flag "hg"), and the end of
// the start withdraws the advice ("nh").
func TestStartupHugePages(t *testing.T) {
	if !onRequest() {
		mode, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
		t.Skipf("nothing to advise here: transparent huge pages %q, or overcommit mode 2, GOMEMLIMIT or GODEBUG=disablethp=1", bytes.TrimSpace(mode))
	}
	defer End()
	if !begin() {
		t.Fatal("begin did nothing where huge pages are on request")
	}
	startupHuge.Lock()
	start, end := startupHuge.start, startupHuge.end
	startupHuge.Unlock()
	if start == 0 || end-start < startupBlock-2*hugePageBytes {
		t.Fatalf("advised range %#x-%#x, want about %d MiB", start, end, startupBlock>>20)
	}
	if f := vmFlags(t, start); !slices.Contains(f, "hg") {
		t.Fatalf("VmFlags of the block %v, want hg (MADV_HUGEPAGE)", f)
	}
	End()
	if f := vmFlags(t, start); !slices.Contains(f, "nh") || slices.Contains(f, "hg") {
		t.Fatalf("VmFlags after the start %v, want nh and not hg", f)
	}
	End() // a second end does nothing
}
