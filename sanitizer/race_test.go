//go:build race

package sanitizer_test

// raceEnabled: the race detector allocates, so allocation counts are not
// checked.
const raceEnabled = true
