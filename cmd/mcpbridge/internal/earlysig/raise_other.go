//go:build !unix

package earlysig

// raise does nothing where no other process can send SIGHUP (Windows,
// Plan 9, WebAssembly): none can have been caught.
func raise() {}
