//go:build !race

package specloader_test

const raceEnabled = false
