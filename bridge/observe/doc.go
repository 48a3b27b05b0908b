// Package observe instruments the call path: Prometheus metrics
// ([NewMetrics], [Metrics.Middleware]) and one structured usage record per
// tool call ([Usage]).
//
// Both are [bridge.Middleware]s and see only what a [bridge.Call] and its
// [bridge.Outcome] carry: tool name, caller key, transport, status, kind,
// sizes and timings. Argument values are never recorded unless the wiring
// asks for them and supplies a redactor.
//
// It imports bridge, Prometheus and zap; it must not import transport,
// specloader, whitelist, viper or cmd, and it keeps no package-level state:
// every metric lives in the registry the caller passes.
package observe
