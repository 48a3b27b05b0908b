package quota

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// Options configures [Middleware]. The zero value fails closed and logs
// nothing.
type Options struct {
	// FailOpen lets calls through, uncounted, while the store fails;
	// false refuses them (quota-fail closed).
	FailOpen bool
	// Log receives a WARN the first time each distinct store error is seen
	// in an outage and an INFO when the store works again; nil logs
	// nothing.
	Log *zap.Logger
	// Unenforced, when set, is called for each call let through uncounted
	// because the store failed (FailOpen), so that a metric shows quotas
	// are not enforced; nil reports nothing.
	Unenforced func()
}

// The client messages of the store-failure refusals.
const (
	msgStoreDown     = "quota store unreachable; call refused (quota-fail closed)"
	msgMisconfigured = "quota misconfigured; call refused (quota-fail closed)"
	msgCancelled     = "call cancelled during the quota check"
	msgDeadline      = "call deadline passed during the quota check"
)

// maxLoggedErrors bounds the distinct store errors logged in one outage.
const maxLoggedErrors = 16

// Middleware returns a middleware that counts each tool call against the
// caller's quota in s: p.LimitFor(c.Caller), under BucketKey(c.Caller).
// Calls to built-in tools (ping) are not counted, nor are callers p sets no
// quota for. A call over its quota ends without reaching the upstream as
// bridge.Reject(bridge.RateLimited, "rate limit exceeded for this caller: N
// calls per PERIOD; retry in Xs", retryAfter).
//
// When the store fails, the call passes uncounted if opts.FailOpen, and is
// otherwise refused as bridge.Reject(bridge.QuotaUnavailable, "quota store
// unreachable; call refused (quota-fail closed)", 0); a limit the store
// refuses as invalid (see [Limit.Validate]; cmd validates the Policy
// first) is treated the same way, with "quota misconfigured". Each call
// asks the store afresh, so service resumes with the first call after the
// store recovers. A call whose own context ends during the check is refused as
// Unavailable (cancelled) or Timeout (deadline), whatever FailOpen says.
//
// Build it once per runtime: its log state is shared by every call through
// it. p is copied; changing its map afterwards has no effect. Argument
// values are never logged.
func Middleware(p Policy, s Store, opts Options) bridge.Middleware {
	p.PerIdentity = maps.Clone(p.PerIdentity)
	log := opts.Log
	if log == nil {
		log = zap.NewNop()
	}
	q := &quota{policy: p, store: s, failOpen: opts.FailOpen, log: log, unenforced: opts.Unenforced}
	return func(next bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(ctx context.Context, c *bridge.Call) (*bridge.Outcome, error) {
			if out := q.check(ctx, c); out != nil {
				return out, nil
			}
			return next.Invoke(ctx, c)
		})
	}
}

// quota is the state of one [Middleware].
type quota struct {
	policy     Policy
	store      Store
	failOpen   bool
	log        *zap.Logger
	unenforced func() // nil: not reported

	failing    atomic.Bool // the last store answer was an error
	mu         sync.Mutex
	seen       map[string]struct{} // distinct errors logged this outage
	suppressed bool                // the "further errors suppressed" line was logged
}

// check is the outcome refusing c, or nil to let it through.
func (q *quota) check(ctx context.Context, c *bridge.Call) *bridge.Outcome {
	if t := c.Target(); t != nil && t.Builtin() {
		return nil
	}
	l := q.policy.LimitFor(c.Caller)
	if l.IsZero() {
		return nil
	}
	key := BucketKey(c.Caller)
	ok, retry, err := q.store.Allow(ctx, key, l)
	if err != nil {
		if ctx.Err() != nil {
			return cancelled(ctx)
		}
		q.noteError(err)
		if q.failOpen {
			if q.unenforced != nil {
				q.unenforced()
			}
			return nil
		}
		msg := msgStoreDown
		if errors.Is(err, ErrInvalidLimit) {
			msg = msgMisconfigured
		}
		out := bridge.Reject(bridge.QuotaUnavailable, msg, 0)
		out.Detail = msg + ": " + err.Error()
		return out
	}
	q.noteRecovery()
	if ok {
		return nil
	}
	q.log.Debug("quota exceeded", zap.String("caller", key), zap.String("tool", c.Tool),
		zap.Stringer("limit", l), zap.Duration("retry_after", retry))
	return bridge.Reject(bridge.RateLimited, fmt.Sprintf("rate limit exceeded for this caller: %d calls per %s; retry in %s",
		l.Calls, formatPeriod(l.Period), formatRetry(retry)), retry)
}

// cancelled is the refusal of a call whose context ended.
func cancelled(ctx context.Context) *bridge.Outcome {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return bridge.Reject(bridge.Timeout, msgDeadline, 0)
	}
	return bridge.Reject(bridge.Unavailable, msgCancelled, 0)
}

// noteError logs err unless this outage already logged it; past
// maxLoggedErrors distinct ones it says once that it stops.
func (q *quota) noteError(err error) {
	q.failing.Store(true)
	msg := err.Error()
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, dup := q.seen[msg]; dup {
		return
	}
	if len(q.seen) >= maxLoggedErrors {
		if !q.suppressed {
			q.suppressed = true
			q.log.Warn("quota store: further distinct errors are not logged until it recovers",
				zap.Int("logged", len(q.seen)))
		}
		return
	}
	if q.seen == nil {
		q.seen = make(map[string]struct{})
	}
	q.seen[msg] = struct{}{}
	action := "calls refused (quota-fail closed)"
	if q.failOpen {
		action = "calls let through uncounted (quota-fail open)"
	}
	q.log.Warn("quota store failed; "+action, zap.Error(err), zap.Bool("fail_open", q.failOpen))
}

// noteRecovery ends an outage: the next error is logged again.
func (q *quota) noteRecovery() {
	if !q.failing.Load() {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.failing.Swap(false) {
		return
	}
	q.log.Info("quota store works again", zap.Int("distinct_errors", len(q.seen)))
	clear(q.seen)
	q.suppressed = false
}
