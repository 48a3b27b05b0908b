//go:build !race

package sanitizer_test

const raceEnabled = false
