package quota_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/quota"
)

var (
	key1 = &bridge.Identity{ID: "api-key:1", Remote: "192.0.2.1:1000"}
	key2 = &bridge.Identity{ID: "api-key:2", Remote: "192.0.2.1:1001"}
)

// wantRateLimited fails unless o is the refusal of a caller over l.
func wantRateLimited(t *testing.T, o *bridge.Outcome, l quota.Limit) {
	t.Helper()
	if o.Kind != bridge.RateLimited || !o.Result.IsError {
		t.Fatalf("outcome %v (IsError=%v) %q, want rate_limited", o.Kind, o.Result.IsError, text(o))
	}
	if o.RetryAfter <= 0 || o.RetryAfter >= l.Period {
		t.Errorf("RetryAfter = %v, want in (0, %v)", o.RetryAfter, l.Period)
	}
	want := fmt.Sprintf("rate limit exceeded for this caller: %d calls per %s; retry in %s",
		l.Calls, strings.TrimPrefix(l.String(), fmt.Sprint(l.Calls, "/")), quota.FormatRetry(o.RetryAfter))
	if got := text(o); got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

func wantOK(t *testing.T, o *bridge.Outcome, what string) {
	t.Helper()
	if o.Kind != bridge.OK {
		t.Fatalf("%s: outcome %v %q (%s), want ok", what, o.Kind, text(o), o.Detail)
	}
}

// TestQuotaEnforced checks that exactly Calls calls pass, that the next is
// refused without reaching the upstream, and that callers count apart.
func TestQuotaEnforced(t *testing.T) {
	u := newUpstream(t)
	l := quota.Limit{Calls: 5, Period: time.Minute}
	rt := bridge.NewRuntime(catalog(t, u), quota.Middleware(quota.Policy{Default: l}, quota.NewMemoryStore(), quota.Options{}))
	for i := range 5 {
		wantOK(t, call(t, rt, "echo", key1), fmt.Sprint("key1 call ", i+1))
	}
	wantRateLimited(t, call(t, rt, "echo", key1), l)
	if o := call(t, rt, "echo", key1); o.RetryAfter < 11*time.Second || o.RetryAfter > 12*time.Second {
		t.Errorf("RetryAfter = %v, want about Period/Calls = 12s", o.RetryAfter)
	}
	if n := u.hits.Load(); n != 5 {
		t.Errorf("upstream hits = %d, want 5: refused calls must not reach it", n)
	}
	for i := range 5 {
		wantOK(t, call(t, rt, "echo", key2), fmt.Sprint("key2 call ", i+1))
	}
	wantRateLimited(t, call(t, rt, "echo", key2), l)

	// Unauthenticated callers count by host, whatever the port; callers
	// with no address share one bucket.
	for i := range 5 {
		wantOK(t, call(t, rt, "echo", &bridge.Identity{Remote: fmt.Sprintf("198.51.100.1:%d", 2000+i)}), "host call")
	}
	wantRateLimited(t, call(t, rt, "echo", &bridge.Identity{Remote: "198.51.100.1:9999"}), l)
	wantOK(t, call(t, rt, "echo", &bridge.Identity{Remote: "198.51.100.2:2000"}), "another host")
	for i := range 5 {
		caller := []*bridge.Identity{nil, {}}[i%2]
		wantOK(t, call(t, rt, "echo", caller), "anonymous call")
	}
	wantRateLimited(t, call(t, rt, "echo", nil), l)
}

// TestQuotaPolicy checks overrides, exemptions, and that a zero Default
// leaves other callers alone.
func TestQuotaPolicy(t *testing.T) {
	u := newUpstream(t)
	p, err := quota.ParsePolicy("", map[string]string{"api-key:1": "2/1h", "alice": "1/1h"})
	if err != nil {
		t.Fatal(err)
	}
	rt := bridge.NewRuntime(catalog(t, u), quota.Middleware(p, quota.NewMemoryStore(), quota.Options{}))
	wantOK(t, call(t, rt, "echo", key1), "1st")
	wantOK(t, call(t, rt, "echo", key1), "2nd")
	wantRateLimited(t, call(t, rt, "echo", key1), quota.Limit{Calls: 2, Period: time.Hour})
	alice := &bridge.Identity{ID: "jwt:https://idp|alice", Subject: "alice"}
	wantOK(t, call(t, rt, "echo", alice), "alice")
	wantRateLimited(t, call(t, rt, "echo", alice), quota.Limit{Calls: 1, Period: time.Hour})
	for i := range 20 {
		wantOK(t, call(t, rt, "echo", key2), fmt.Sprint("no default, call ", i+1))
	}

	p, err = quota.ParsePolicy("1/1h", map[string]string{"api-key:2": "unlimited"})
	if err != nil {
		t.Fatal(err)
	}
	rt = bridge.NewRuntime(catalog(t, u), quota.Middleware(p, quota.NewMemoryStore(), quota.Options{}))
	wantOK(t, call(t, rt, "echo", key1), "default")
	wantRateLimited(t, call(t, rt, "echo", key1), quota.Limit{Calls: 1, Period: time.Hour})
	for i := range 20 {
		wantOK(t, call(t, rt, "echo", key2), fmt.Sprint("exempt, call ", i+1))
	}
}

// TestQuotaPingNotCounted checks that the built-in ping neither counts nor
// is refused.
func TestQuotaPingNotCounted(t *testing.T) {
	u := newUpstream(t)
	l := quota.Limit{Calls: 1, Period: time.Hour}
	rt := bridge.NewRuntime(catalog(t, u), quota.Middleware(quota.Policy{Default: l}, quota.NewMemoryStore(), quota.Options{}))
	for range 10 {
		wantOK(t, call(t, rt, bridge.PingToolName, key1), "ping before")
	}
	wantOK(t, call(t, rt, "echo", key1), "the one call")
	wantRateLimited(t, call(t, rt, "echo", key1), l)
	wantOK(t, call(t, rt, bridge.PingToolName, key1), "ping over quota")
}

// TestQuotaRefill checks on the real clock that a refused caller may call
// again once the quota refills (polled), that the advised RetryAfter is
// enough, and that a rest of one period brings back the whole burst and no
// more. TestMemoryStoreGCRA checks the exact arithmetic on a fake clock.
func TestQuotaRefill(t *testing.T) {
	u := newUpstream(t)
	l := quota.Limit{Calls: 3, Period: 200 * time.Millisecond}
	rt := bridge.NewRuntime(catalog(t, u), quota.Middleware(quota.Policy{Default: l}, quota.NewMemoryStore(), quota.Options{}))
	for range 3 {
		wantOK(t, call(t, rt, "echo", key1), "burst")
	}
	o := call(t, rt, "echo", key1)
	wantRateLimited(t, o, l)
	start := time.Now()
	eventually(t, 2*time.Second, "a call refills", func() bool { return call(t, rt, "echo", key1).Kind == bridge.OK })
	if waited := time.Since(start); waited < o.RetryAfter-5*time.Millisecond {
		t.Errorf("a call passed after %v, before the advised %v", waited, o.RetryAfter)
	}

	o = call(t, rt, "echo", key1)
	wantRateLimited(t, o, l)
	time.Sleep(o.RetryAfter) // the advice itself is under test
	wantOK(t, call(t, rt, "echo", key1), "after RetryAfter")

	time.Sleep(l.Period) // a rest of one period: the burst is back
	for i := range 3 {
		wantOK(t, call(t, rt, "echo", key1), fmt.Sprint("after a rest, call ", i+1))
	}
	wantRateLimited(t, call(t, rt, "echo", key1), l)
}

// TestQuotaConcurrent checks that concurrent calls get exactly the quota.
func TestQuotaConcurrent(t *testing.T) {
	u := newUpstream(t)
	l := quota.Limit{Calls: 20, Period: time.Hour}
	rt := bridge.NewRuntime(catalog(t, u), quota.Middleware(quota.Policy{Default: l}, quota.NewMemoryStore(), quota.Options{}))
	var ok, limited atomic.Int64
	var wg sync.WaitGroup
	for range 60 {
		wg.Go(func() {
			switch call(t, rt, "echo", key1).Kind {
			case bridge.OK:
				ok.Add(1)
			case bridge.RateLimited:
				limited.Add(1)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 20 || limited.Load() != 40 || u.hits.Load() != 20 {
		t.Errorf("ok=%d limited=%d hits=%d, want 20, 40, 20", ok.Load(), limited.Load(), u.hits.Load())
	}
}

// flaky is a store that fails with err while it is set.
type flaky struct {
	quota.Store
	err atomic.Pointer[error]
}

func (f *flaky) fail(err error) { f.err.Store(&err) }
func (f *flaky) heal()          { f.err.Store(nil) }

func (f *flaky) Allow(ctx context.Context, key string, l quota.Limit) (bool, time.Duration, error) {
	if e := f.err.Load(); e != nil {
		return false, 0, *e
	}
	return f.Store.Allow(ctx, key, l)
}

// warns is how many WARN lines logs holds.
func warns(logs *observer.ObservedLogs) int { return logs.FilterLevelExact(zapcore.WarnLevel).Len() }

// noSecrets fails if any log line holds the arguments' value.
func noSecrets(t *testing.T, logs *observer.ObservedLogs) {
	t.Helper()
	for _, e := range logs.All() {
		line := fmt.Sprint(e.Message, e.ContextMap())
		if strings.Contains(line, secretArg) {
			t.Errorf("a log line holds an argument value: %s", line)
		}
	}
}

// TestQuotaStoreFailure checks fail-closed and fail-open, one WARN per
// distinct error per outage, and recovery with no sticky state.
func TestQuotaStoreFailure(t *testing.T) {
	l := quota.Limit{Calls: 100, Period: time.Hour}
	down := errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")
	for _, failOpen := range []bool{false, true} {
		t.Run(fmt.Sprint("FailOpen=", failOpen), func(t *testing.T) {
			u := newUpstream(t)
			core, logs := observer.New(zapcore.DebugLevel)
			st := &flaky{Store: quota.NewMemoryStore()}
			var unenforced atomic.Int64
			rt := bridge.NewRuntime(catalog(t, u), quota.Middleware(quota.Policy{Default: l}, st, quota.Options{FailOpen: failOpen, Log: zap.New(core),
				Unenforced: func() { unenforced.Add(1) }}))
			wantOK(t, call(t, rt, "echo", key1), "store up")

			st.fail(down)
			for range 10 {
				o := call(t, rt, "echo", key1)
				if failOpen {
					wantOK(t, o, "fail open")
					continue
				}
				if o.Kind.String() != "quota_unavailable" || !o.Result.IsError || text(o) != "quota store unreachable; call refused (quota-fail closed)" {
					t.Fatalf("fail closed: outcome %v %q", o.Kind, text(o))
				}
				if !strings.Contains(o.Detail, "connection refused") {
					t.Errorf("Detail %q lacks the store error", o.Detail)
				}
			}
			wantOK(t, call(t, rt, bridge.PingToolName, key1), "ping while the store is down")
			if want := map[bool]int64{false: 1, true: 11}[failOpen]; u.hits.Load() != want {
				t.Errorf("upstream hits = %d, want %d", u.hits.Load(), want)
			}
			if n := warns(logs); n != 1 {
				t.Errorf("%d WARN lines for one error repeated, want 1", n)
			}
			st.fail(errors.New("redis: connection pool timeout"))
			call(t, rt, "echo", key1)
			call(t, rt, "echo", key1)
			if n := warns(logs); n != 2 {
				t.Errorf("%d WARN lines for two distinct errors, want 2", n)
			}

			st.heal()
			wantOK(t, call(t, rt, "echo", key1), "store back")
			if n := logs.FilterMessage("quota store works again").Len(); n != 1 {
				t.Errorf("%d recovery lines, want 1", n)
			}
			st.fail(down) // a new outage is logged again
			call(t, rt, "echo", key1)
			if n := warns(logs); n != 3 {
				t.Errorf("%d WARN lines after a second outage, want 3", n)
			}
			st.heal()
			wantOK(t, call(t, rt, "echo", key1), "store back again")
			noSecrets(t, logs)
			// Every call let through uncounted is reported (for the
			// metric), ping excepted: it is never counted.
			if want := map[bool]int64{false: 0, true: 13}[failOpen]; unenforced.Load() != want {
				t.Errorf("Unenforced called %d times, want %d", unenforced.Load(), want)
			}
		})
	}
}

// TestQuotaErrorLogBounded checks that an outage with ever-changing error
// texts logs a bounded number of lines.
func TestQuotaErrorLogBounded(t *testing.T) {
	u := newUpstream(t)
	core, logs := observer.New(zapcore.WarnLevel)
	st := &flaky{Store: quota.NewMemoryStore()}
	rt := bridge.NewRuntime(catalog(t, u), quota.Middleware(quota.Policy{Default: quota.Limit{Calls: 1, Period: time.Hour}}, st, quota.Options{Log: zap.New(core)}))
	for i := range 100 {
		st.fail(fmt.Errorf("read tcp 127.0.0.1:%d->127.0.0.1:6379: i/o timeout", 40000+i))
		call(t, rt, "echo", key1)
	}
	if n := warns(logs); n != 17 {
		t.Errorf("%d WARN lines for 100 distinct errors, want 16 and one saying the rest are not logged", n)
	}
}

// TestQuotaLogsNoArguments checks the refusal log line: the caller and the
// tool, never the arguments.
func TestQuotaLogsNoArguments(t *testing.T) {
	u := newUpstream(t)
	core, logs := observer.New(zapcore.DebugLevel)
	rt := bridge.NewRuntime(catalog(t, u), quota.Middleware(quota.Policy{Default: quota.Limit{Calls: 1, Period: time.Hour}}, quota.NewMemoryStore(), quota.Options{Log: zap.New(core)}))
	call(t, rt, "echo", key1)
	call(t, rt, "echo", key1)
	got := logs.FilterMessage("quota exceeded").All()
	if len(got) != 1 || got[0].ContextMap()["caller"] != "api-key:1" || got[0].ContextMap()["tool"] != "echo" {
		t.Errorf("refusal log = %+v, want one line naming caller api-key:1 and tool echo", got)
	}
	noSecrets(t, logs)
}

// blocked is a store that answers only when the call's context ends.
type blocked struct{}

func (blocked) Allow(ctx context.Context, _ string, _ quota.Limit) (bool, time.Duration, error) {
	<-ctx.Done()
	return false, 0, ctx.Err()
}

// TestQuotaCallCancelled checks that a call whose context ends during the
// check is refused as cancelled or timed out, even when failing open, and
// is not logged as a store failure.
func TestQuotaCallCancelled(t *testing.T) {
	u := newUpstream(t)
	core, logs := observer.New(zapcore.WarnLevel)
	rt := bridge.NewRuntime(catalog(t, u), quota.Middleware(quota.Policy{Default: quota.Limit{Calls: 1, Period: time.Hour}}, blocked{}, quota.Options{FailOpen: true, Log: zap.New(core)}))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if o := callCtx(t, ctx, rt, "echo", key1); o.Kind != bridge.Unavailable || text(o) != "call cancelled during the quota check" {
		t.Errorf("cancelled: %v %q", o.Kind, text(o))
	}
	ctx, cancel = context.WithTimeout(t.Context(), time.Millisecond)
	defer cancel()
	if o := callCtx(t, ctx, rt, "echo", key1); o.Kind != bridge.Timeout {
		t.Errorf("deadline: %v %q", o.Kind, text(o))
	}
	if u.hits.Load() != 0 || logs.Len() != 0 {
		t.Errorf("hits=%d logs=%d, want 0 and 0", u.hits.Load(), logs.Len())
	}
}

// TestQuotaInvalidLimit checks that a limit the store cannot honour
// refuses (fail closed) rather than passes silently.
func TestQuotaInvalidLimit(t *testing.T) {
	u := newUpstream(t)
	rt := bridge.NewRuntime(catalog(t, u), quota.Middleware(quota.Policy{Default: quota.Limit{Calls: 5}}, quota.NewMemoryStore(), quota.Options{}))
	if o := call(t, rt, "echo", key1); o.Kind.String() != "quota_unavailable" || text(o) != "quota misconfigured; call refused (quota-fail closed)" {
		t.Errorf("invalid limit: %v %q", o.Kind, text(o))
	}
}

// TestQuotaPolicyCopied checks that the middleware keeps its own copy of
// the policy's map.
func TestQuotaPolicyCopied(t *testing.T) {
	u := newUpstream(t)
	p := quota.Policy{PerIdentity: map[string]quota.Limit{"api-key:1": {Calls: 1, Period: time.Hour}}}
	rt := bridge.NewRuntime(catalog(t, u), quota.Middleware(p, quota.NewMemoryStore(), quota.Options{}))
	p.PerIdentity["api-key:1"] = quota.Limit{}
	call(t, rt, "echo", key1)
	if o := call(t, rt, "echo", key1); o.Kind != bridge.RateLimited {
		t.Errorf("changing the map after Middleware lifted the quota: %v", o.Kind)
	}
}
