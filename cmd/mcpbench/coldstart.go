package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Cold-start cases.
const (
	coldSmall     = "petstore all-ops"
	coldGitHub20  = "github 20-op"
	coldGitHubAll = "github all-ops"
	coldPeer      = "github all-ops, peer"
)

type coldCase struct {
	Name string
	Spec string
	Args []string
	// Cmd, when set, is the whole command to start instead of the bridge
	// (a peer's); it has no cache, so it gets first starts only.
	Cmd []string
}

// coldRun is one spawn-to-tools/list measurement.
type coldRun struct {
	Took time.Duration
	// Wire is when the last byte of the tools/list answer arrived, before
	// the client decoded it: the server's share of Took.
	Wire      time.Duration
	Tools     int
	ListBytes int
	AtList    memSample // right after tools/list
	Idle      memSample // after cfg.Settle more
}

// coldStart spawns the bridge over stdio and times initialize + tools/list
// per case; with cache flags, each run is a first start on an empty
// --cache-dir followed by a restart on the same directory. Runs loop over
// the cases (outer loop: run number) so drift spreads evenly.
func (b *bench) coldStart(ctx context.Context) error {
	gh20, err := writeGitHubWhitelist(b.dir, b.cfg.GitHubSpec)
	if err != nil {
		return err
	}
	var cases []coldCase
	for _, c := range []coldCase{
		{Name: coldSmall, Spec: b.cfg.SmallSpec, Args: []string{"--all-operations"}},
		{Name: coldGitHub20, Spec: b.cfg.GitHubSpec, Args: []string{"--whitelist", gh20}},
		{Name: coldGitHubAll, Spec: b.cfg.GitHubSpec, Args: []string{"--all-operations"}},
	} {
		if b.cfg.coldCase(c.Name) {
			cases = append(cases, c)
		}
	}
	if b.cfg.Peer != "" {
		cases = append(cases, coldCase{Name: coldPeer, Spec: b.cfg.GitHubSpec, Cmd: peerCommand(b.cfg.Peer, b.cfg.GitHubSpec, b.up.URL)})
	}
	modes := []string{"first"}
	if b.cacheFlags {
		modes = append(modes, "restart")
	}
	runs := map[string][]coldRun{}
	for i := range b.cfg.ColdRuns {
		for _, c := range cases {
			b.progress("cold start %d/%d: %s", i+1, b.cfg.ColdRuns, c.Name)
			cacheDir, err := os.MkdirTemp(b.dir, "cache-")
			if err != nil {
				return fmt.Errorf("creating a cache dir: %w", err)
			}
			for _, mode := range modes {
				if c.Cmd != nil && mode != "first" {
					continue
				}
				r, err := b.coldOnce(ctx, c, cacheDir)
				if err != nil {
					return fmt.Errorf("cold start %s (%s): %w", c.Name, mode, err)
				}
				runs[c.Name+"/"+mode] = append(runs[c.Name+"/"+mode], r)
			}
			os.RemoveAll(cacheDir) //nolint:errcheck // inside our temp dir
		}
	}
	for _, c := range cases {
		for _, mode := range modes {
			if rs := runs[c.Name+"/"+mode]; len(rs) > 0 {
				b.rep.ColdStart = append(b.rep.ColdStart, summarizeCold(c.Name, mode, rs))
			}
		}
	}
	return nil
}

// peerCommand is the peer's argv: tmpl split at spaces, with {spec} and
// {upstream} replaced.
func peerCommand(tmpl, spec, upstream string) []string {
	args := strings.Fields(tmpl)
	for i, a := range args {
		args[i] = strings.NewReplacer("{spec}", spec, "{upstream}", upstream).Replace(a)
	}
	return args
}

func (b *bench) coldOnce(ctx context.Context, c coldCase, cacheDir string) (coldRun, error) {
	var cmd *exec.Cmd
	if c.Cmd != nil {
		cmd = exec.Command(c.Cmd[0], c.Cmd[1:]...)
	} else {
		args := append([]string{"serve", "--spec", c.Spec, "--upstream", b.up.URL}, c.Args...)
		if b.cacheFlags {
			args = append(args, "--cache-dir", cacheDir)
		}
		cmd = exec.Command(b.bridgePath, args...)
	}
	cmd.Stderr = b.stderrSink()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return coldRun{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return coldRun{}, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return coldRun{}, fmt.Errorf("starting the bridge: %w", err)
	}
	defer stopChild(cmd, stdin)
	// The bytes the bridge writes are counted as they arrive: the size of
	// tools/list is what the client received, not a re-encoding of what
	// go-sdk decoded (which writes back fields the bridge leaves out).
	wire := &countingReader{r: stdout, start: start}
	cs, err := newClient().Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(wire), Writer: stdin}, nil)
	if err != nil {
		return coldRun{}, fmt.Errorf("initialize: %w", err)
	}
	defer cs.Close()
	before := wire.n.Load()
	var tools []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return coldRun{}, fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, t)
	}
	r := coldRun{Took: time.Since(start), Wire: time.Duration(wire.last.Load()), Tools: len(tools), ListBytes: int(wire.n.Load() - before)}
	pid := cmd.Process.Pid
	if r.AtList, err = readMem(pid); err != nil {
		return r, err
	}
	if err := sleep(ctx, b.cfg.Settle); err != nil {
		return r, err
	}
	if r.Idle, err = readMem(pid); err != nil {
		return r, err
	}
	return r, nil
}

// countingReader counts the bytes read through it, and notes when the
// latest of them arrived (since start).
type countingReader struct {
	r     io.Reader
	start time.Time
	n     atomic.Int64
	last  atomic.Int64 // time.Duration
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.n.Add(int64(n))
		c.last.Store(int64(time.Since(c.start)))
	}
	return n, err
}

// stopChild ends a bridge served over stdio as a client would: stdin
// closed, then killed if it has not exited within 5 s.
func stopChild(cmd *exec.Cmd, stdin io.Closer) {
	stdin.Close() //nolint:errcheck // the child may be gone already
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }() //nolint:errcheck // exit status is not measured
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill() //nolint:errcheck // best effort
		<-done
	}
}

func summarizeCold(name, mode string, runs []coldRun) coldInfo {
	ci := coldInfo{Case: name, Mode: mode, Runs: len(runs)}
	if len(runs) == 0 {
		return ci
	}
	var took, wire []time.Duration
	var idle, hwm, atList []int64
	for _, r := range runs {
		took = append(took, r.Took)
		wire = append(wire, r.Wire)
		idle = append(idle, r.Idle.RSSKiB)
		atList = append(atList, r.AtList.RSSKiB)
		hwm = append(hwm, r.Idle.HWMKiB)
		ci.RunsMs = append(ci.RunsMs, ms(r.Took))
	}
	ci.MedianMs = ms(percentile(took, 0.5))
	ci.WireMedianMs = ms(percentile(wire, 0.5))
	ci.MinMs = ms(took[0])
	ci.MaxMs = ms(took[len(took)-1])
	ci.IdleRSSKiB = medianInt(idle)
	ci.AtListRSSKiB = medianInt(atList)
	ci.PeakRSSKiB = medianInt(hwm)
	ci.Tools = runs[len(runs)-1].Tools
	ci.ListBytes = runs[len(runs)-1].ListBytes
	return ci
}

func medianInt(s []int64) int64 {
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
