//go:build !unix

package transport

import "io"

// PollableStdio returns in and out unchanged on systems without unix
// descriptors; see the unix version.
func PollableStdio(in io.Reader, out io.Writer) (io.Reader, io.Writer, func()) {
	return in, out, func() {}
}
