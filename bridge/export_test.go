package bridge

// RaceEnabled tells the external tests (package bridge_test) whether the
// race detector is on.
const RaceEnabled = raceEnabled
