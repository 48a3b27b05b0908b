// Package reqctx carries an HTTP request's own context to the handlers of
// the MCP messages it brought, for a transport whose library hands them a
// context without the request's cancellation.
//
// go-sdk's stateless streamable HTTP ties a handler's context to its POST
// only for the 2026-07-28 revision (PropagateRequestCancellation); for the
// older ones, a client that disconnects leaves its call running, holding a
// concurrency slot and its upstream request until the call's timeout. In
// stateless mode the POST is the whole life of the call, so the handler
// may end with it. The transport also ends that context when the caller's
// notifications/cancelled names the call (transport's callTable), which
// go-sdk cannot route there: the notification comes on another POST.
// In stateful mode the context is the session's life (WithDone), which a
// DELETE of the session ends.
package reqctx

import "context"

type key struct{}

// With returns ctx carrying ctx itself as the request context.
func With(ctx context.Context) context.Context {
	return WithDone(ctx, ctx)
}

// WithDone returns ctx carrying done as the request context. Stateful
// streamable HTTP gives the handlers of a session's calls the values of
// the request that created the session: done is then the session's life.
func WithDone(ctx, done context.Context) context.Context {
	return context.WithValue(ctx, key{}, done)
}

// Bind returns ctx, cancelled also when the request context With stored in
// it ends, and the function that releases the binding (call it when the
// handler returns). Without a request context it returns ctx as it is.
func Bind(ctx context.Context) (context.Context, context.CancelFunc) {
	req, _ := ctx.Value(key{}).(context.Context)
	if req == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(req, cancel)
	return ctx, func() { stop(); cancel() }
}
