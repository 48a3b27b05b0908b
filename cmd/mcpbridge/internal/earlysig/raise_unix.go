//go:build unix

package earlysig

import (
	"os"
	"syscall"
)

// raise sends SIGHUP to this process again, now that it has its default
// action back.
func raise() { _ = syscall.Kill(os.Getpid(), syscall.SIGHUP) }
