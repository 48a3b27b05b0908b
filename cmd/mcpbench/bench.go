package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"time"
)

// bench holds one run's setup: the upstream, the generated spec, the
// bridge binary and where its logs go.
type bench struct {
	cfg    *config
	stdout io.Writer
	stderr io.Writer // progress lines

	dir        string // temp dir for spec, whitelist, binary, caches
	eps        []*endpoint
	up         *upstream
	spec       string
	whitelist  string
	bridgePath string
	cacheFlags bool     // the bridge has --cache-dir
	logFile    *os.File // nil: bridge stderr discarded
	rep        *report
	start      time.Time
}

func newBench(cfg *config, stdout, stderr io.Writer) *bench {
	return &bench{cfg: cfg, stdout: stdout, stderr: stderr}
}

func (b *bench) progress(format string, args ...any) {
	fmt.Fprintf(b.stderr, "mcpbench [%5.1fs]: "+format+"\n", append([]any{time.Since(b.start).Seconds()}, args...)...)
}

// run measures everything the config asks for. The report it returns is
// complete as far as the run got, also with an error.
func (b *bench) run(ctx context.Context) (*report, error) {
	b.start = time.Now()
	if b.cfg.ClientName != "" {
		clientName = b.cfg.ClientName
	}
	b.rep = newReport(b.cfg)
	defer func() { b.rep.Env.LoadEnd = loadAvg() }()
	if err := b.setup(ctx); err != nil {
		b.teardown()
		return nil, err
	}
	defer b.teardown()
	if b.cfg.phase("latency") || b.cfg.phase("throughput") {
		if err := b.calls(ctx); err != nil {
			return b.rep, err
		}
	}
	if b.cfg.phase("cold") {
		if err := b.coldStart(ctx); err != nil {
			return b.rep, err
		}
	}
	return b.rep, nil
}

func (b *bench) setup(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "mcpbench-")
	if err != nil {
		return fmt.Errorf("creating a temp dir: %w", err)
	}
	b.dir = dir
	if b.cfg.BridgeLog != "" {
		if b.logFile, err = os.OpenFile(b.cfg.BridgeLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			return fmt.Errorf("opening --bridge-log: %w", err)
		}
	}
	all := endpoints()
	buildBodies(all)
	if b.up, err = startUpstream(all); err != nil {
		return err
	}
	if b.spec, b.whitelist, err = writeBenchSpec(dir, b.up.URL, all, !b.cfg.NoOutput); err != nil {
		return err
	}
	for _, e := range all {
		if b.cfg.size(e.Size) {
			b.eps = append(b.eps, e)
		}
	}
	for _, e := range b.eps {
		b.rep.Endpoints = append(b.rep.Endpoints, endpointInfo{
			Size: e.Size, Tool: e.Tool, Path: e.CallPath, UpstreamBytes: len(e.body), CompactBytes: len(e.compact), Pretty: e.Pretty,
		})
	}

	b.bridgePath = b.cfg.Bridge
	if b.bridgePath == "" {
		b.bridgePath = filepath.Join(dir, "mcpbridge")
		b.progress("building mcpbridge into %s", b.bridgePath)
		goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
		if p, err := exec.LookPath("go"); err == nil {
			goBin = p
		}
		// The release build (Dockerfile, .ci/run): static, so that start-up
		// is timed without the dynamic loader a cgo build adds (~5 ms).
		cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-ldflags", "-s -w", "-o", b.bridgePath, "github.com/mcpbridge/mcpbridge/cmd/mcpbridge")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building mcpbridge: %w\n%s", err, out)
		}
	}
	if b.bridgePath, err = filepath.Abs(b.bridgePath); err != nil {
		return fmt.Errorf("locating the bridge: %w", err)
	}
	out, err := exec.CommandContext(ctx, b.bridgePath, "version").Output()
	if err != nil {
		return fmt.Errorf("running %s version: %w", b.bridgePath, err)
	}
	help, _ := exec.CommandContext(ctx, b.bridgePath, "serve", "--help").CombinedOutput()
	b.cacheFlags = bytes.Contains(help, []byte("--cache-dir"))
	b.rep.Env.Bridge = b.bridgePath
	b.rep.Env.BridgeVersion = strings.TrimSpace(string(out))
	b.rep.Env.CacheFlags = b.cacheFlags
	b.progress("bridge ready: %s", b.rep.Env.BridgeVersion)
	return nil
}

func (b *bench) teardown() {
	if b.up != nil {
		b.up.Close() //nolint:errcheck // exiting
	}
	if b.logFile != nil {
		b.logFile.Close() //nolint:errcheck // exiting
	}
	if b.dir != "" {
		os.RemoveAll(b.dir) //nolint:errcheck // a temp dir
	}
}

// bridgeArgs are the serve flags shared by every bridge process of the
// call phases.
func (b *bench) bridgeArgs(extra ...string) []string {
	args := []string{"serve", "--spec", b.spec, "--whitelist", b.whitelist, "--upstream", b.up.URL}
	if b.cacheFlags {
		args = append(args, "--cache-dir", filepath.Join(b.dir, "cache-serve"))
	}
	return append(args, extra...)
}

// stderrSink is where child processes' stderr goes: the log file or
// nowhere (nil for exec means /dev/null).
func (b *bench) stderrSink() io.Writer {
	if b.logFile == nil {
		return nil
	}
	return b.logFile
}

// startTargets starts the four servers and the direct client.
func (b *bench) startTargets(ctx context.Context) ([]*target, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("locating mcpbench for the floor: %w", err)
	}
	targets := []*target{directTarget(b.up.URL)}
	add := func(t *target, err error) error {
		if err != nil {
			return err
		}
		targets = append(targets, t)
		return nil
	}

	floorStdio := exec.Command(self, "floor", "--upstream", b.up.URL)
	floorStdio.Stderr = b.stderrSink()
	floorHTTP := exec.Command(self, "floor", "--upstream", b.up.URL, "--transport", "http")
	floorHTTP.Stderr = b.stderrSink()
	floorSCStdio := exec.Command(self, "floor", "--upstream", b.up.URL, "--structured")
	floorSCStdio.Stderr = b.stderrSink()
	floorSCHTTP := exec.Command(self, "floor", "--upstream", b.up.URL, "--transport", "http", "--structured")
	floorSCHTTP.Stderr = b.stderrSink()
	bridgeStdio := exec.Command(b.bridgePath, b.bridgeArgs()...)
	bridgeStdio.Stderr = b.stderrSink()
	bridgeHTTP := exec.Command(b.bridgePath, b.bridgeArgs("--transport", "http", "--listen", "127.0.0.1:0", "--no-auth", "--log-format", "json")...)

	err = errors.Join(
		add(startStdio(ctx, tFloorStdio, floorStdio)),
		add(startHTTP(ctx, tFloorHTTP, floorHTTP, false, nil, floorAnnounce)),
		add(startStdio(ctx, tFloorSCStdio, floorSCStdio)),
		add(startHTTP(ctx, tFloorSCHTTP, floorSCHTTP, false, nil, floorAnnounce)),
		add(startStdio(ctx, tBridgeStdio, bridgeStdio)),
		add(startHTTP(ctx, tBridgeHTTP, bridgeHTTP, true, b.stderrSink(), bridgeAnnounce)),
	)
	if err != nil {
		closeTargets(targets)
		return nil, err
	}
	return targets, nil
}

func closeTargets(ts []*target) error {
	var errs []error
	for _, t := range ts {
		if t.close != nil {
			if err := t.close(); err != nil {
				errs = append(errs, fmt.Errorf("stopping %s: %w", t.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// calls runs the phases that call tools: result check, latency,
// throughput, with memory read between them.
func (b *bench) calls(ctx context.Context) (err error) {
	b.progress("starting upstream, floor and bridge (stdio and streamable HTTP)")
	targets, err := b.startTargets(ctx)
	if err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, closeTargets(targets))
		b.progress("call phases done")
	}()
	b.memory(targets, "started")
	b.progress("checking every target's result for every size")
	if err := b.checkResults(ctx, targets); err != nil {
		return err
	}
	if b.cfg.phase("latency") {
		b.progress("latency: %d round(s), interleaved over %d targets", b.cfg.Rounds, len(targets))
		if err := b.latency(ctx, targets); err != nil {
			return err
		}
		b.memory(targets, "after latency")
	}
	if b.cfg.phase("throughput") {
		b.progress("throughput: concurrency 1, 8, 32 for %s per cell", b.cfg.Duration)
		if err := b.throughput(ctx, targets); err != nil {
			return err
		}
		b.memory(targets, "after throughput")
	}
	return nil
}

// checkResults calls every tool once per target and records what came
// back against what the upstream sent.
func (b *bench) checkResults(ctx context.Context, targets []*target) error {
	for _, t := range targets {
		for _, e := range b.eps {
			out, err := t.call(ctx, e)
			if err != nil {
				return fmt.Errorf("%s %s: %w", t.Name, e.Size, err)
			}
			text := out.text()
			wire := len(out.Body)
			if out.Result != nil {
				data, err := json.Marshal(out.Result)
				if err != nil {
					return fmt.Errorf("%s %s: encoding the result: %w", t.Name, e.Size, err)
				}
				wire = len(data)
			}
			info := resultInfo{
				Target: t.Name, Size: e.Size,
				UpstreamBytes: len(e.body), TextBytes: len(text), ResultBytes: wire,
				Structured:     out.Result != nil && out.Result.StructuredContent != nil,
				EqualsUpstream: text == string(e.body),
				EqualsCompact:  text == string(e.compact),
				From:           "text",
			}
			if text == "" && info.Structured {
				// No text block (the bridge's default for a client that
				// reads structuredContent only): the model reads the
				// structuredContent, which its host stringifies compactly.
				info.From = "structuredContent"
				var want any
				if err := json.Unmarshal(e.body, &want); err == nil && reflect.DeepEqual(out.Result.StructuredContent, want) {
					info.TextBytes, info.EqualsCompact = len(e.compact), true
					info.EqualsUpstream = string(e.compact) == string(e.body)
				}
			}
			b.rep.Results = append(b.rep.Results, info)
		}
	}
	return nil
}

// memory records the RSS of every server process.
func (b *bench) memory(targets []*target, when string) {
	for _, t := range targets {
		if t.pid == 0 {
			continue
		}
		m, err := readMem(t.pid)
		if err != nil {
			b.rep.Errors = append(b.rep.Errors, err.Error())
			continue
		}
		b.rep.Memory = append(b.rep.Memory, memInfo{Target: t.Name, When: when, memSample: m})
	}
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
