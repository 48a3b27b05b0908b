//go:build !unix

package main

// processCPU is not measured here: BenchmarkCall reports cpu-ns/op as 0.
func processCPU() int64 { return 0 }
