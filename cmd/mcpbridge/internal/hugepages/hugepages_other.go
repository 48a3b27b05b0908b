//go:build !linux || !(amd64 || arm64 || ppc64le || s390x || riscv64 || loong64)

package hugepages

// Huge pages for the start are a Linux matter (hugepages_linux.go).

func begin() bool { return false }

// End does nothing here.
func End() {}
