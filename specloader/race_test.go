//go:build race

package specloader_test

// raceEnabled is true under -race, which makes kin-openapi several times
// slower: the tests that load GitHub's spec through kin-openapi's own loader,
// only there to compare, skip it then.
const raceEnabled = true
