//go:build !linux || !(amd64 || arm64 || ppc64le || s390x || riscv64 || loong64)

package main

// Huge pages for the start are a Linux matter (hugepages_linux.go).

func beginStartupHugePages() bool { return false }

func endStartupHugePages() {}
