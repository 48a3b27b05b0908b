//go:build race

package whitelist_test

// raceEnabled is true under -race, which makes kin-openapi several times
// slower: tests skip the corpus specs over 1 MB then.
const raceEnabled = true
