package quota

import (
	"context"
	"time"
)

// Store counts calls against quotas. Allow records one call for key under
// l and reports whether it is within the quota; when it is not, nothing is
// recorded and retryAfter (> 0) says when the next call for key would be
// allowed. An error means the store could not decide (unreachable, an
// invalid limit); the middleware then fails open or closed as configured.
// Allow is safe for concurrent use.
type Store interface {
	Allow(ctx context.Context, key string, l Limit) (allowed bool, retryAfter time.Duration, err error)
}

var (
	_ Store = (*MemoryStore)(nil)
	_ Store = (*RedisStore)(nil)
)
