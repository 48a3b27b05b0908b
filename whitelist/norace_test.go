//go:build !race

package whitelist_test

const raceEnabled = false
