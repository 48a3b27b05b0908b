// Package earlysig catches SIGHUP from the first moments of the process.
//
// SIGHUP means "reload" to a serving mcpbridge, but its default action ends
// the process, and main runs only after every package's initialisation
// (tens of milliseconds: santhosh-tekuri/jsonschema's init alone, pulled in
// by kin-openapi, takes 10-40 ms) and the configuration load. A SIGHUP sent
// in that window (a config-management run that reloads every replica just
// as one starts) killed it. Go initialises a package as soon as its imports
// are and no package before it in import-path order is ready, so this one,
// which imports only os/signal, registers the handler right after os/signal
// itself is initialised, before the heavy dependencies.
package earlysig

import (
	"os"
	"os/signal"
	"syscall"
)

// hup receives SIGHUP from package initialisation on; it holds one pending
// signal, which a serving command reads as a reload request.
var hup = make(chan os.Signal, 1)

func init() { signal.Notify(hup, syscall.SIGHUP) }

// Hup returns the channel SIGHUP has been delivered to since the process
// started. A command that reloads on SIGHUP reads it; a signal that arrived
// during start-up is waiting there.
func Hup() chan os.Signal { return hup }

// Release gives SIGHUP back its default action, for the commands that do not
// reload; a SIGHUP caught before is raised again, so it ends the process as
// it would have without this package.
func Release() {
	signal.Reset(syscall.SIGHUP)
	select {
	case <-hup:
		raise()
	default:
	}
}
