package quota_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/quota"
)

// redisServer is a redis-server child process on a loopback port, without
// persistence, that a test may stop and start again on the same port.
type redisServer struct {
	t    *testing.T
	bin  string
	port int
	dir  string

	mu  sync.Mutex
	cmd *exec.Cmd
	out *bytes.Buffer
}

// startRedis starts redis-server on a free loopback port, or skips the test
// when the binary is not installed (CI installs it).
func startRedis(t *testing.T) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("MCPBRIDGE_TEST_REQUIRE_REDIS") != "" {
			t.Fatal("redis-server is not installed and MCPBRIDGE_TEST_REQUIRE_REDIS is set (CI installs it)")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server); skipping the Redis store tests")
	}
	redis.SetLogger(quota.RedisLogger{}) // a dial error per call while down: not test output
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	r := &redisServer{t: t, bin: bin, port: port, dir: t.TempDir()}
	r.start()
	t.Cleanup(r.stop)
	return r
}

// addr is host:port of the server.
func (r *redisServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.port)) }

// url is the redis:// URL of the server.
func (r *redisServer) url() string { return "redis://" + r.addr() + "/0" }

// start runs the server and waits until it answers PING.
func (r *redisServer) start() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out = &bytes.Buffer{}
	r.cmd = exec.Command(r.bin, "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir, "--daemonize", "no")
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("starting redis-server: %v", err)
	}
	probe := redis.NewClient(&redis.Options{Addr: r.addr(), MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer probe.Close()
	deadline := time.Now().Add(5 * time.Second)
	for probe.Ping(r.t.Context()).Err() != nil {
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server on %s did not answer within 5s:\n%s", r.addr(), r.out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop kills the server and waits for it to exit; it may be called twice.
func (r *redisServer) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	r.cmd.Wait()
	r.cmd = nil
}

// replica is one bridge process: its own Redis client, store and runtime.
func replica(t *testing.T, r *redisServer, u *upstream, prefix string, p quota.Policy, opts quota.Options) *bridge.Runtime {
	t.Helper()
	client, err := quota.NewRedisClient(r.url())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	// Connect first, so that a slow first handshake on a loaded machine is
	// not mistaken for an outage by the tight default timeouts.
	eventually(t, 5*time.Second, "replica connects", func() bool { return client.Ping(t.Context()).Err() == nil })
	return bridge.NewRuntime(catalog(t, u), quota.Middleware(p, quota.NewRedisStore(client, prefix), opts))
}

// uniquePrefix keeps tests sharing a server apart.
func uniquePrefix(t *testing.T) string {
	return fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano())
}

// TestRedisReplicasShareLimit checks that two runtimes counting in one
// Redis enforce one limit together, per identity, and refill.
func TestRedisReplicasShareLimit(t *testing.T) {
	r := startRedis(t)
	u := newUpstream(t)
	prefix := uniquePrefix(t)
	l := quota.Limit{Calls: 6, Period: time.Minute}
	p := quota.Policy{Default: l, PerIdentity: map[string]quota.Limit{"api-key:2": {Calls: 2, Period: 300 * time.Millisecond}}}
	a := replica(t, r, u, prefix, p, quota.Options{})
	b := replica(t, r, u, prefix, p, quota.Options{})
	for i := range 6 {
		rt := []*bridge.Runtime{a, b}[i%2]
		wantOK(t, call(t, rt, "echo", key1), fmt.Sprint("shared call ", i+1))
	}
	wantRateLimited(t, call(t, a, "echo", key1), l)
	wantRateLimited(t, call(t, b, "echo", key1), l)
	if n := u.hits.Load(); n != 6 {
		t.Errorf("upstream hits = %d, want 6 for both replicas together", n)
	}
	wantOK(t, call(t, b, bridge.PingToolName, key1), "ping over quota")

	// The key is where the documentation says, and expires.
	probe := redis.NewClient(&redis.Options{Addr: r.addr()})
	defer probe.Close()
	key := "rate:" + prefix + "6/1m:api-key:1"
	if ttl, err := probe.PTTL(t.Context(), key).Result(); err != nil || ttl <= 0 || ttl > l.Period {
		t.Errorf("PTTL(%s) = %v, %v; want an expiry within the period", key, ttl, err)
	}

	// Another identity counts apart, and refills on Redis's clock.
	short := p.PerIdentity["api-key:2"]
	wantOK(t, call(t, a, "echo", key2), "key2 on a")
	wantOK(t, call(t, b, "echo", key2), "key2 on b")
	o := call(t, a, "echo", key2)
	wantRateLimited(t, o, short)
	start := time.Now()
	eventually(t, 2*time.Second, "key2 refills", func() bool { return call(t, b, "echo", key2).Kind == bridge.OK })
	if waited := time.Since(start); waited < o.RetryAfter-20*time.Millisecond {
		t.Errorf("a call passed after %v, before the advised %v", waited, o.RetryAfter)
	}
}

// TestRedisOutage checks fail-closed and fail-open while Redis is down, and
// that service resumes when Redis comes back on the same port.
func TestRedisOutage(t *testing.T) {
	r := startRedis(t)
	u := newUpstream(t)
	prefix := uniquePrefix(t)
	l := quota.Limit{Calls: 100, Period: time.Minute}
	core, logs := observer.New(zapcore.InfoLevel)
	closed := replica(t, r, u, prefix, quota.Policy{Default: l}, quota.Options{Log: zap.New(core).Named("closed")})
	open := replica(t, r, u, prefix, quota.Policy{Default: l}, quota.Options{FailOpen: true, Log: zap.New(core).Named("open")})
	wantOK(t, call(t, closed, "echo", key1), "closed, redis up")
	wantOK(t, call(t, open, "echo", key1), "open, redis up")

	r.stop()
	for i := range 5 {
		start := time.Now()
		o := call(t, closed, "echo", key1)
		if o.Kind.String() != "quota_unavailable" || text(o) != "quota store unreachable; call refused (quota-fail closed)" {
			t.Fatalf("fail closed, call %d with redis down: %v %q", i+1, o.Kind, text(o))
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("a refusal took %v with redis down", took)
		}
		wantOK(t, call(t, open, "echo", key1), "fail open, redis down")
	}
	wantOK(t, call(t, closed, bridge.PingToolName, key1), "ping, redis down")
	if n := u.hits.Load(); n != 7 {
		t.Errorf("upstream hits = %d, want 7 (2 before, 5 failing open)", n)
	}
	if w := logs.FilterLevelExact(zapcore.WarnLevel); w.Len() < 2 || w.Len() > 6 {
		t.Errorf("%d WARN lines for 10 failed checks, want a few (one per distinct error and replica):\n%v", w.Len(), w.All())
	}

	r.start()
	eventually(t, 5*time.Second, "fail-closed replica resumes", func() bool { return call(t, closed, "echo", key1).Kind == bridge.OK })
	eventually(t, 5*time.Second, "fail-open replica counts again", func() bool {
		call(t, open, "echo", key1)
		probe := redis.NewClient(&redis.Options{Addr: r.addr()})
		defer probe.Close()
		return probe.Exists(t.Context(), "rate:"+prefix+"100/1m:api-key:1").Val() == 1
	})
	if n := logs.FilterMessage("quota store works again").Len(); n != 2 {
		t.Errorf("%d recovery lines, want one per replica", n)
	}
	noSecrets(t, logs)
}

// TestNewRedisClient checks the URL handling: settings applied where the
// URL leaves them, and no password in errors.
func TestNewRedisClient(t *testing.T) {
	c, err := quota.NewRedisClient("redis://:pw@127.0.0.1:1/2?dial_timeout=3s")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.Options()
	if o.DB != 2 || o.DialTimeout != 3*time.Second || o.ReadTimeout != quota.RedisReadTimeout || o.WriteTimeout != quota.RedisIOTimeout || o.MaxRetries != quota.RedisMaxRetries || !o.ContextTimeoutEnabled {
		t.Errorf("options DB=%d dial=%v read=%v retries=%d ctx=%v", o.DB, o.DialTimeout, o.ReadTimeout, o.MaxRetries, o.ContextTimeoutEnabled)
	}
	for _, bad := range []string{"http://u:hunter2@host", "redis://u:hunter2@host:6379/x", "redis://u:hunter2@ho st", "redis://u:hunter2@host/0?bogus=1"} {
		_, err := quota.NewRedisClient(bad)
		if err == nil {
			t.Errorf("NewRedisClient(%q) accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("NewRedisClient error holds the password: %v", err)
		}
	}
}

// TestRedisLogger checks that go-redis's lines reach zap at DEBUG.
func TestRedisLogger(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	quota.RedisLogger{Log: zap.New(core)}.Printf(t.Context(), "redis: failed to dial after %d attempts: %v\n", 1, "refused")
	quota.RedisLogger{}.Printf(t.Context(), "dropped")
	got := logs.All()
	if len(got) != 1 || got[0].Level != zapcore.DebugLevel || got[0].ContextMap()["msg"] != "redis: failed to dial after 1 attempts: refused" {
		t.Errorf("logged %+v", got)
	}
}

// fakeRedis is a loopback server speaking just enough RESP2 for go-redis:
// HELLO is refused (the client falls back to RESP2), EVALSHA and EVAL get
// reply, every other command +OK.
func fakeRedis(t *testing.T, reply string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				rd := bufio.NewReader(c)
				for {
					args, err := readCommand(rd)
					if err != nil {
						return
					}
					switch strings.ToUpper(args[0]) {
					case "HELLO":
						_, err = io.WriteString(c, "-ERR unknown command 'HELLO'\r\n")
					case "EVALSHA", "EVAL":
						_, err = io.WriteString(c, reply)
					default:
						_, err = io.WriteString(c, "+OK\r\n")
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return "redis://" + ln.Addr().String() + "/0"
}

// readCommand reads one RESP array of bulk strings.
func readCommand(rd *bufio.Reader) ([]string, error) {
	line, err := rd.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("not a command: %q", line)
	}
	args := make([]string, n)
	for i := range args {
		if line, err = rd.ReadString('\n'); err != nil {
			return nil, err
		}
		size, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "$")))
		if err != nil || size < 0 {
			return nil, fmt.Errorf("not a bulk string: %q", line)
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:size])
	}
	return args, nil
}

// TestRedisGarbageReply checks that a server answering the GCRA script with
// something else (a Redis-compatible server or proxy that differs, a
// tampered connection) is a store error, not a panic that stops the process
// (redis_rate asserts the reply's types unchecked).
func TestRedisGarbageReply(t *testing.T) {
	l := quota.Limit{Calls: 5, Period: time.Minute}
	for name, reply := range map[string]string{
		"integers for strings": "*4\r\n:1\r\n:0\r\n:5\r\n:6\r\n",
		"short array":          "*1\r\n:1\r\n",
		"empty array":          "*0\r\n",
		"not an array":         "+OK\r\n",
		"integer":              ":1\r\n",
		"nil":                  "$-1\r\n",
		"strings for integers": "*4\r\n$1\r\n1\r\n$1\r\n0\r\n$2\r\n-1\r\n$1\r\n0\r\n",
		"not numbers":          "*4\r\n:1\r\n:0\r\n$1\r\nx\r\n$1\r\ny\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			client, err := quota.NewRedisClient(fakeRedis(t, reply))
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			s := quota.NewRedisStore(client, "")
			var ok bool
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("Allow panicked: %v", r)
					}
				}()
				ok, _, err = s.Allow(t.Context(), "api-key:0", l)
			}()
			if err == nil || ok {
				t.Errorf("Allow = %v, %v; want an error", ok, err)
			}
		})
	}
}

// TestRedisSlowAnswerCountsOnce: a check that gives up because Redis is
// busy past DefaultRedisTimeout has sent its script, which Redis runs once
// it catches up, so the refused call spends one call of the quota (as
// documented); go-redis must not also send it again on another connection
// after a read timeout, which spent two.
func TestRedisSlowAnswerCountsOnce(t *testing.T) {
	r := startRedis(t)
	client, err := quota.NewRedisClient(r.url())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin := redis.NewClient(&redis.Options{Addr: r.addr()})
	defer admin.Close()
	s := quota.NewRedisStore(client, uniquePrefix(t))
	l := quota.Limit{Calls: 5, Period: time.Hour}
	// The script loaded, and idle connections in the pool, as a busy
	// bridge has them.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, _, err := s.Allow(t.Context(), "bob", quota.Limit{Calls: 100, Period: time.Hour}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	// Redis busy with a script for 3 s reads nothing meanwhile, then
	// runs what arrived.
	busy := make(chan error, 1)
	go func() {
		busy <- admin.Eval(context.Background(), `local function now() local t = redis.call("TIME") return t[1]*1000000 + t[2] end
			local e = now() + 3000000 while now() < e do end return 1`, nil).Err()
	}()
	probe := redis.NewClient(&redis.Options{Addr: r.addr(), MaxRetries: -1, ReadTimeout: 50 * time.Millisecond})
	defer probe.Close()
	eventually(t, 2*time.Second, "Redis busy", func() bool { return probe.Ping(t.Context()).Err() != nil })
	if ok, _, err := s.Allow(t.Context(), "alice", l); err == nil {
		t.Fatalf("Allow answered (%v) while Redis was busy", ok)
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	allowed := 0
	for range l.Calls + 2 {
		ok, _, err := s.Allow(t.Context(), "alice", l)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			allowed++
		}
	}
	if spent := l.Calls - allowed; spent > 1 {
		t.Errorf("the refused check spent %d calls of the quota; want at most 1", spent)
	}
}

// TestRedisChangedLimit: a caller's count under one limit does not carry
// into another (a restart or a replica with a new quota, Redis keeping the
// counts): a caller that spent 40 calls of 100/1h, now under 10/1m, was
// told to retry in 23 minutes, though 10/1m never makes one wait more than
// 6 s. Each limit counts apart.
func TestRedisChangedLimit(t *testing.T) {
	r := startRedis(t)
	client, err := quota.NewRedisClient(r.url())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	s := quota.NewRedisStore(client, uniquePrefix(t))
	old, cur := quota.Limit{Calls: 100, Period: time.Hour}, quota.Limit{Calls: 10, Period: time.Minute}
	for i := range 40 {
		if ok, _, err := s.Allow(t.Context(), "alice", old); err != nil || !ok {
			t.Fatalf("call %d under %v: %v, %v", i+1, old, ok, err)
		}
	}
	for i := range cur.Calls {
		if ok, retry, err := s.Allow(t.Context(), "alice", cur); err != nil || !ok {
			t.Fatalf("call %d under %v: allowed %v, retry in %v, %v", i+1, cur, ok, retry, err)
		}
	}
	if ok, retry, err := s.Allow(t.Context(), "alice", cur); err != nil || ok || retry > cur.Period/time.Duration(cur.Calls) {
		t.Errorf("call %d under %v: allowed %v, retry in %v, %v", cur.Calls+1, cur, ok, retry, err)
	}
}
