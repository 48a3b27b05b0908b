package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestQuotaSharedByTwoProcesses runs two real bridge processes against one
// redis-server with --quota 3/1h: three calls spread over both replicas are
// allowed, the fourth (on either) is refused.
func TestQuotaSharedByTwoProcesses(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("MCPBRIDGE_TEST_REQUIRE_REDIS") != "" {
			t.Fatal("redis-server is not installed and MCPBRIDGE_TEST_REQUIRE_REDIS is set")
		}
		t.Skip("redis-server is not installed (apt-get install redis-server)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	redis := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := redis.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = redis.Process.Kill(); _ = redis.Wait() })
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not listen")
		}
		time.Sleep(20 * time.Millisecond)
	}

	up := newOpsUpstream(t)
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	writeFile(t, spec, opsSpec(nil, "opA"))
	args := []string{"--spec", spec, "--all-operations", "--upstream", up.srv.URL, "--no-cache",
		"--quota", "3/1h", "--redis-url", "redis://127.0.0.1:" + port + "/0"}
	r1 := startHTTPProc(t, "replica1", args...)
	r2 := startHTTPProc(t, "replica2", args...)
	session := func(p *proc) *mcp.ClientSession {
		return connect(t, p.name, mcp.NewClient(&mcp.Implementation{Name: "q", Version: "1"}, nil),
			&mcp.StreamableClientTransport{Endpoint: p.base + "/mcp", HTTPClient: newHTTPClient(t), MaxRetries: -1, DisableStandaloneSSE: true})
	}
	s1, s2 := session(r1), session(r2)
	for i, cs := range []*mcp.ClientSession{s1, s2, s1} {
		if _, err := call(cs, "opA"); err != nil {
			t.Fatalf("call %d refused: %v", i+1, err)
		}
	}
	for _, cs := range []*mcp.ClientSession{s2, s1} {
		if text, err := call(cs, "opA"); err == nil {
			t.Errorf("a fourth call was allowed: %s", text)
		}
	}
	if up.count("opA") != 3 {
		t.Errorf("upstream saw %d calls; want 3", up.count("opA"))
	}
	// Another deployment on the same Redis, with its own --redis-prefix,
	// counts apart: its callers (the same identities) are not refused.
	other := startHTTPProc(t, "other", append(args, "--redis-prefix", "other-deployment:")...)
	if _, err := call(session(other), "opA"); err != nil {
		t.Errorf("a deployment with its own --redis-prefix was refused: %v", err)
	}
}

// TestRedisURLWithoutQuotaWarns: --redis-url without a quota counts
// nothing (no quota is configured); an operator who set it and forgot
// --quota is told so instead of serving every caller unlimited in silence.
func TestRedisURLWithoutQuotaWarns(t *testing.T) {
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	writeFile(t, spec, opsSpec(nil, "opA"))
	a := serveApp(t, "--spec", spec, "--all-operations", "--redis-url", "redis://:hunter2@127.0.0.1:1/0")
	core, logs := observer.New(zapcore.WarnLevel)
	a.log = zap.New(core)
	mw, err := a.quotaMiddleware()
	if err != nil || mw != nil {
		t.Fatalf("quotaMiddleware() = %v, %v; want no middleware", mw != nil, err)
	}
	if logs.Len() != 1 {
		t.Fatalf("%d WARN lines, want 1: %v", logs.Len(), logs.All())
	}
	if line := fmt.Sprint(logs.All()[0].Message, logs.All()[0].Context); strings.Contains(line, "hunter2") {
		t.Errorf("the warning holds the password: %s", line)
	}
}
