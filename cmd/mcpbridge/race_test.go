//go:build race

package main

// raceEnabled is true under -race, which makes the soak test (soak_test.go)
// six times slower and its memory figures meaningless: it runs without
// -race (CI: go test -run Soak ./cmd/mcpbridge/).
const raceEnabled = true
