package specloader

import "errors"

// ErrFetch marks failures to obtain the spec's bytes (network error, HTTP
// status, timeout, missing file), as opposed to a document that was read but
// is not a usable OpenAPI description. Callers use it to start degraded
// instead of failing.
var ErrFetch = errors.New("fetching spec")
