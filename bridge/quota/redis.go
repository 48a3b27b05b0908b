package quota

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// DefaultRedisPrefix is the key prefix [NewRedisStore] uses for "".
const DefaultRedisPrefix = "mcpbridge:quota:"

// DefaultRedisTimeout bounds one [RedisStore.Allow], so that a Redis that
// hangs delays each call by at most this much before the middleware fails
// open or closed.
const DefaultRedisTimeout = time.Second

// RedisStore counts calls in Redis with redis_rate's GCRA script, so that
// every replica of the bridge pointed at the same Redis (and prefix)
// enforces one limit together. The script reads the time from Redis, so the
// replicas' clocks do not matter. A key lives in Redis only while its quota
// is not fully refilled (redis_rate sets its expiry), so idle callers cost
// nothing. Redis without persistence forgets the counts when it restarts:
// every caller then has its full quota again.
//
// The zero RedisStore is not usable; call [NewRedisStore].
type RedisStore struct {
	lim    *redis_rate.Limiter
	prefix string
}

// NewRedisStore counts in client under prefix ("" means
// DefaultRedisPrefix). redis_rate adds its own "rate:" in front, so the
// key of a caller is "rate:" + prefix + Limit + ":" + BucketKey, e.g.
// "rate:mcpbridge:quota:100/1h:api-key:0". The limit is part of the key
// because Redis keeps a count across restarts and replicas may differ
// during a rollout: a count spent under 100/1h read under 10/1m made the
// caller wait up to the hour. client may be a *redis.Client, a
// *redis.ClusterClient or a failover client; the store does not close it.
func NewRedisStore(client redis.UniversalClient, prefix string) *RedisStore {
	if prefix == "" {
		prefix = DefaultRedisPrefix
	}
	return &RedisStore{lim: redis_rate.NewLimiter(client), prefix: prefix}
}

// Allow implements [Store]: Rate = Burst = l.Calls per l.Period. It gives
// up after DefaultRedisTimeout (or ctx), and fails when Redis cannot be
// reached or answers garbage, or for an invalid limit. A check that gave
// up after its script reached a Redis that was only slow still counts:
// Redis runs the script when it catches up, and nothing can take it back
// (a compensating call could not tell whether the first one ran).
func (s *RedisStore) Allow(ctx context.Context, key string, l Limit) (bool, time.Duration, error) {
	if err := l.Validate(); err != nil || l.IsZero() {
		if err == nil {
			err = fmt.Errorf("%w: zero limit", ErrInvalidLimit)
		}
		return false, 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultRedisTimeout)
	defer cancel()
	res, err := s.allow(ctx, s.prefix+l.String()+":"+key, redis_rate.Limit{Rate: l.Calls, Burst: l.Calls, Period: l.Period})
	if err != nil {
		return false, 0, fmt.Errorf("redis quota check: %w", err)
	}
	if res.Allowed > 0 {
		return true, 0, nil
	}
	return false, max(res.RetryAfter, time.Millisecond), nil
}

// allow runs redis_rate's script. redis_rate asserts the types of the
// script's reply unchecked, so a server that answers it with something else
// (a Redis-compatible server or proxy that differs, a tampered connection)
// would panic the call's goroutine, and with it the process: here that is
// an error, and the middleware fails open or closed.
func (s *RedisStore) allow(ctx context.Context, key string, l redis_rate.Limit) (res *redis_rate.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("unexpected reply to the rate limit script: %v", r)
		}
	}()
	return s.lim.Allow(ctx, key, l)
}

// The Redis client settings [NewRedisClient] applies where the URL leaves
// them unset: a Redis that is down or slow costs a call little time.
//
// An answer is awaited as long as the whole check may last
// (RedisReadTimeout): go-redis sends a command whose answer timed out
// again on another connection, and Redis, once it catches up, runs both,
// so a refused call spent two calls of the caller's quota. With the read
// bounded by the check's own deadline, the retry's backoff outlives it and
// nothing is sent twice. A failed dial or write is still retried: Redis
// never got that command.
const (
	RedisDialTimeout = time.Second
	RedisIOTimeout   = 500 * time.Millisecond // writing a command
	RedisReadTimeout = DefaultRedisTimeout
	RedisMaxRetries  = 1
)

// NewRedisClient builds a client from a redis:// or rediss:// URL
// ("redis://[user:password@]host:6379/0", "rediss://..." for TLS; query
// parameters such as dial_timeout=2s as go-redis's ParseURL reads them).
// Where the URL sets no timeouts or retries it applies RedisDialTimeout,
// RedisIOTimeout, RedisReadTimeout and RedisMaxRetries (a read_timeout
// shorter than DefaultRedisTimeout lets a late script run twice), honours
// the call's deadline, and
// tries each dial once. It does not connect: go-redis dials on first use,
// so a Redis down at startup is a store error on the first calls, not a
// startup failure. An error never repeats the URL, which may hold a
// password.
func NewRedisClient(rawURL string) (*redis.Client, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("parsing redis URL: %w", err)
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = RedisDialTimeout
	}
	if opts.ReadTimeout == 0 {
		opts.ReadTimeout = RedisReadTimeout
	}
	if opts.WriteTimeout == 0 {
		opts.WriteTimeout = RedisIOTimeout
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = RedisMaxRetries
	}
	if opts.PoolTimeout == 0 {
		opts.PoolTimeout = RedisDialTimeout
	}
	if opts.DialerRetries == 0 {
		opts.DialerRetries = 1
	}
	opts.ContextTimeoutEnabled = true
	return redis.NewClient(opts), nil
}

// RedisLogger routes go-redis's own log lines (one per failed dial while
// Redis is down, among others) to zap at DEBUG: the middleware already
// WARNs once per distinct store error. go-redis writes them to stderr
// through the standard log package otherwise; cmd installs this with
// redis.SetLogger(quota.RedisLogger{Log: log}), a process-wide setting.
type RedisLogger struct {
	// Log receives the lines; nil drops them.
	Log *zap.Logger
}

// Printf implements go-redis's logging interface.
func (l RedisLogger) Printf(_ context.Context, format string, v ...any) {
	if l.Log != nil {
		l.Log.Debug("redis client", zap.String("msg", strings.TrimSpace(fmt.Sprintf(format, v...))))
	}
}
