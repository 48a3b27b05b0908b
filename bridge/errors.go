package bridge

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/mcpbridge/mcpbridge/bridge/request"
	"github.com/mcpbridge/mcpbridge/bridge/upstream"
)

// ErrorKind classifies how a call ended. Every kind has a stable label (its
// String, used by metrics and usage records) and a safe message for the
// client; the detail goes only to the log.
type ErrorKind uint8

// The kinds of outcome. OK is a success; every other kind is an IsError
// result (the upstream's own 4xx/5xx included).
const (
	OK           ErrorKind = iota
	ToolError              // the tool failed otherwise (internal problem building the call)
	BadArguments           // the arguments do not satisfy the input schema or cannot be serialized
	Upstream4xx            // the upstream answered 4xx
	Upstream5xx            // the upstream answered 5xx
	Timeout                // no (complete) answer within the tool's timeout
	Unavailable            // the upstream could not be reached, reset, or the call was cancelled
	TooLarge               // the answer exceeded the response limit
	Busy                   // a concurrency limit refused the call
	Denied                 // access control refused the call
	RateLimited            // a quota or rate limit refused the call
	Redirected             // the upstream redirected somewhere the bridge does not follow

	// QuotaUnavailable: the quota store failed or refused the limit, and
	// quota-fail is closed; not Unavailable, which is the upstream's.
	QuotaUnavailable
)

var kindLabels = [...]string{
	OK: "ok", ToolError: "tool_error", BadArguments: "bad_arguments", Upstream4xx: "upstream_4xx",
	Upstream5xx: "upstream_5xx", Timeout: "timeout", Unavailable: "unavailable", TooLarge: "too_large",
	Busy: "busy", Denied: "denied", RateLimited: "rate_limited", Redirected: "redirected",
	QuotaUnavailable: "quota_unavailable",
}

// String is the kind's stable label ("ok", "bad_arguments", ...).
func (k ErrorKind) String() string {
	if int(k) < len(kindLabels) {
		return kindLabels[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ErrorKinds lists every kind, for metrics that pre-declare their labels.
func ErrorKinds() []ErrorKind {
	out := make([]ErrorKind, len(kindLabels))
	for i := range out {
		out[i] = ErrorKind(i)
	}
	return out
}

// KindOfStatus classifies an upstream HTTP status.
func KindOfStatus(status int) ErrorKind {
	switch {
	case status >= 500:
		return Upstream5xx
	case status >= 400:
		return Upstream4xx
	case status == http.StatusNotModified:
		return OK // the answer to the agent's conditional request: its copy is current
	case status >= 300:
		return Redirected
	}
	return OK
}

// ErrUpstreamUnavailable reports that the upstream could not be reached or
// did not answer in time. Its client message never carries the URL, which may
// hold a credential in the query string.
var ErrUpstreamUnavailable = errors.New("upstream unavailable")

// ErrResponseTooLarge reports an upstream body larger than
// Options.MaxResponseBytes.
var ErrResponseTooLarge = upstream.ErrTooLarge

// ErrUnknownTool is returned by [Runtime.Call] for a name the current
// catalog does not have: a protocol error, not a tool result.
var ErrUnknownTool = errors.New("unknown tool")

// ArgumentError reports tool arguments that do not satisfy the tool's input
// schema or cannot be serialized as the spec requires. The upstream is not
// called.
type ArgumentError = request.ArgumentError

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
