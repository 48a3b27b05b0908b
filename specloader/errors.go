package specloader

import "errors"

// ErrFetch marks failures to obtain the bytes of a URL that may heal by
// themselves: the host cannot be resolved or reached, the connection breaks,
// the fetch times out (Options.Timeout), or the server answers 5xx, 408, 425
// or 429. Callers use it to start degraded and retry later instead of
// failing. It marks such failures for the documents the spec's $refs point
// to as well.
//
// Everything else is a plain error, because retrying cannot fix it: a local
// file that is missing or unreadable, any other HTTP status (404 is most
// likely a typo, 401 and 403 a wrong credential), a certificate that does not
// verify, a redirect or a $ref the loader refuses to follow, an address it
// refuses to dial, a document over Options.MaxBytes, a document that is not a
// usable OpenAPI description, and a canceled context.
var ErrFetch = errors.New("fetching spec")

// fetchError keeps the message of err and matches both err and ErrFetch
// with errors.Is.
type fetchError struct{ err error }

func (e *fetchError) Error() string   { return e.err.Error() }
func (e *fetchError) Unwrap() []error { return []error{e.err, ErrFetch} }

// policyError is a request the loader refuses to make: a $ref, a redirect
// or a dial outside what Options.AllowOrigins and the address rules allow.
// It is never an ErrFetch, even when net/http wraps it in a network error.
type policyError struct{ msg string }

func (e *policyError) Error() string { return e.msg }
