//go:build darwin || ios || dragonfly || freebsd || netbsd || openbsd

package transport

// fifoPollable: kqueue may miss the last writer closing a named FIFO
// (golang/go#24164), so FIFOs stay blocking; sockets are still polled.
const fifoPollable = false
