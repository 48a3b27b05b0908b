// Package quota enforces per-identity call quotas on the tool call path:
// each caller (an authenticated identity, else its network address) may make
// at most Limit.Calls tool calls per Limit.Period, counted by a [Store]
// shared by every call through the middleware. A call over its quota never
// reaches the upstream and ends as a RateLimited outcome that says when to
// retry.
//
// Counting is GCRA (the generic cell rate algorithm), the same math in both
// stores: a full quota may be spent at once (burst = Calls), and it refills
// continuously, one call every Period/Calls. [MemoryStore] counts in this
// process; [RedisStore] counts in Redis through github.com/go-redis/redis_rate,
// so that every replica of the bridge enforces one limit together.
//
// It imports only bridge, go-redis, redis_rate and zap; it must not import
// transport, specloader, observe, viper or cmd, and it keeps no
// package-level state: each store and each middleware owns its own.
package quota
