// Package limit protects the upstream and the bridge from overload: a
// global cap on the tool calls in flight, with a bounded queue of callers
// waiting a bounded time ([Concurrency]). A call it refuses never reaches
// the upstream and ends as a Busy outcome that says when to retry.
//
// It imports only bridge and golang.org/x/sync; it must not import
// transport, specloader, observe or cmd, and it keeps no package-level
// state: each middleware owns its limit.
package limit
