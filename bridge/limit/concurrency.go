package limit

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// The defaults of [Options], exported for flag defaults and help texts.
const (
	DefaultMaxInFlight = 64
	DefaultMaxQueue    = 256
	DefaultWait        = 5 * time.Second
	DefaultRetryAfter  = time.Second
)

// Options configures [Concurrency]. The zero value applies every default:
// 64 calls in flight, 256 waiting at most 5s each, refusals suggesting a
// retry after 1s.
type Options struct {
	// MaxInFlight caps the tool calls running at once across all callers
	// and transports; 0 means 64, a negative value means no limit (the
	// middleware passes every call through).
	MaxInFlight int
	// MaxQueue bounds the calls waiting for a slot when all are taken; a
	// call beyond it is refused at once. 0 means 256, a negative value
	// means no queue (a call finding no free slot is refused).
	MaxQueue int
	// Wait bounds how long a queued call waits for a slot before it is
	// refused; 0 means 5s, a negative value means until the call's context
	// is done. The call's context (client cancel, deadline) always ends the
	// wait too.
	Wait time.Duration
	// RetryAfter is the delay a refusal suggests (Outcome.RetryAfter); 0
	// means 1s.
	RetryAfter time.Duration
}

// Concurrency returns a middleware that caps the tool calls in flight, one
// limit shared by every call through it (build it once per runtime). Calls
// to built-in tools (ping) bypass it, so health checks answer under load.
//
// A call that finds every slot taken waits, first come first served, in a
// queue of at most MaxQueue calls, for at most Wait. A call beyond the
// queue, or whose wait expires, ends without reaching the upstream as
// bridge.Reject(bridge.Busy, "the bridge is busy: N calls in flight; retry
// shortly", RetryAfter). A queued call whose context is cancelled ends as
// Unavailable, or Timeout when its deadline passed, and frees its place in
// the queue at once.
//
// The slot is held for the whole inner chain: argument validation included,
// so a call with bad arguments also takes a slot, briefly.
func Concurrency(opts Options) bridge.Middleware { return newConcurrency(opts, nil) }

// concurrency is the state of one [Concurrency] middleware.
type concurrency struct {
	opts     Options
	sem      *semaphore.Weighted
	inflight atomic.Int64
	waiting  atomic.Int64
	queued   func() // test hook: a call entered the queue; nil in production
}

func newConcurrency(opts Options, queued func()) bridge.Middleware {
	if opts.MaxInFlight < 0 {
		return func(next bridge.Invoker) bridge.Invoker { return next }
	}
	if opts.MaxInFlight == 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	switch {
	case opts.MaxQueue == 0:
		opts.MaxQueue = DefaultMaxQueue
	case opts.MaxQueue < 0:
		opts.MaxQueue = 0
	}
	if opts.Wait == 0 {
		opts.Wait = DefaultWait
	}
	if opts.RetryAfter == 0 {
		opts.RetryAfter = DefaultRetryAfter
	}
	l := &concurrency{opts: opts, sem: semaphore.NewWeighted(int64(opts.MaxInFlight)), queued: queued}
	return func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			if t := c.Target(); t != nil && t.Builtin() {
				return next.Invoke(ctx, c)
			}
			if !l.sem.TryAcquire(1) {
				if refused := l.await(ctx); refused != nil {
					return refused, nil
				}
			}
			l.inflight.Add(1)
			defer func() {
				l.inflight.Add(-1)
				l.sem.Release(1)
			}()
			return next.Invoke(ctx, c)
		})
	}
}

// await queues the call until it holds a slot (nil) or is refused (the
// outcome to return).
func (l *concurrency) await(ctx context.Context) *bridge.Outcome {
	if l.waiting.Add(1) > int64(l.opts.MaxQueue) {
		l.waiting.Add(-1)
		return l.busy()
	}
	defer l.waiting.Add(-1)
	wctx := ctx
	if l.opts.Wait > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, l.opts.Wait)
		defer cancel()
	}
	if l.queued != nil {
		l.queued()
	}
	if err := l.sem.Acquire(wctx, 1); err != nil {
		switch err := ctx.Err(); {
		case errors.Is(err, context.DeadlineExceeded):
			return bridge.Reject(bridge.Timeout, "the call's deadline passed while it waited for a free slot", 0)
		case err != nil:
			return bridge.Reject(bridge.Unavailable, "the call was cancelled while it waited for a free slot", 0)
		}
		return l.busy()
	}
	return nil
}

func (l *concurrency) busy() *bridge.Outcome {
	msg := fmt.Sprintf("the bridge is busy: %d calls in flight; retry shortly", l.inflight.Load())
	return bridge.Reject(bridge.Busy, msg, l.opts.RetryAfter)
}
