package limit

import "github.com/mcpbridge/mcpbridge/bridge"

// ConcurrencyHook is Concurrency calling queued each time a call enters
// the queue, so tests know a call waits without sleeping.
func ConcurrencyHook(opts Options, queued func()) bridge.Middleware {
	return newConcurrency(opts, queued)
}
