package specloader

import "errors"

// ErrFetch marks failures to obtain the spec's bytes (network error, HTTP
// status, timeout, missing file), as opposed to a document that was read but
// is not a usable OpenAPI description. Callers use it to start degraded
// instead of failing. It also marks such failures for the documents the
// spec's $refs point to. A document over Options.MaxBytes, a $ref the
// loader refuses to follow, and a canceled context are not fetch failures.
var ErrFetch = errors.New("fetching spec")

// fetchError keeps the message of err and matches both err and ErrFetch
// with errors.Is.
type fetchError struct{ err error }

func (e *fetchError) Error() string   { return e.err.Error() }
func (e *fetchError) Unwrap() []error { return []error{e.err, ErrFetch} }
