package transport_test

import "testing"

// TestPollableStdioPipes: stdin and stdout are pipes, as most hosts and
// shells give them (on Linux, where epoll reports every end of a pipe).
func TestPollableStdioPipes(t *testing.T) {
	stdin, client := blockingPair(t, true)
	server, stdout := blockingPair(t, true)
	// blockingPair(pipe) returns (read end, write end).
	checkPollable(t, stdin, client, stdout, server)
}
