package bridge

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrUpstreamUnavailable reports that the upstream could not be reached or
// did not answer in time. Its client message never carries the URL, which may
// hold a credential in the query string.
var ErrUpstreamUnavailable = errors.New("upstream unavailable")

// ErrResponseTooLarge reports an upstream body larger than
// Options.MaxResponseBytes.
var ErrResponseTooLarge = errors.New("upstream response too large")

// ArgumentError reports tool arguments that do not satisfy the tool's input
// schema or cannot be serialized as the spec requires. The upstream is not
// called.
type ArgumentError struct {
	// Field is the argument at fault ("" when the problem is the whole
	// argument object).
	Field string
	// Reason says what is wrong, in words an agent can act on.
	Reason string
}

func (e *ArgumentError) Error() string {
	if e.Field == "" {
		return "invalid arguments: " + e.Reason
	}
	return fmt.Sprintf("invalid argument %q: %s", e.Field, e.Reason)
}

// UpstreamStatusError reports an upstream answer with status >= 400.
type UpstreamStatusError struct {
	// Status is the HTTP status code the upstream returned.
	Status int
}

func (e *UpstreamStatusError) Error() string {
	return fmt.Sprintf("upstream returned HTTP %d %s", e.Status, http.StatusText(e.Status))
}

// buildError is a problem found while building one tool; the operation is
// reported and skipped, never exposed as a tool that always fails.
type buildError struct {
	op     string
	reason string
}

func (e *buildError) Error() string { return e.op + ": " + e.reason }
