//go:build race

package request

// raceEnabled is true under -race, which makes the corpus tests several
// times slower: they then leave GitHub's 1,223 operations to the run
// without -race (go test ./bridge/), so that go test -race ./bridge/ stays
// under a minute and a half on two cores.
const raceEnabled = true
