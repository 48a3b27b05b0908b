//go:build unix

package specloader

import "syscall"

// openNonBlock opens a FIFO without waiting for a writer (see readFile).
const openNonBlock = syscall.O_NONBLOCK
