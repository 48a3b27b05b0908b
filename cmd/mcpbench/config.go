package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// config is mcpbench's command line. Zero values of the sized fields mean
// "the default for the mode" (see withDefaults).
type config struct {
	Short      bool
	JSONPath   string
	Bridge     string        // mcpbridge binary; "" builds ./cmd/mcpbridge
	BridgeLog  string        // file for the bridge's stderr; "" discards it
	Rounds     int           // latency rounds (and throughput slices); 0: 5, short 1
	Duration   time.Duration // measured time per throughput cell; 0: 2s, short 100ms
	ColdRuns   int           // cold starts per case; 0: 7, short 1
	Settle     time.Duration // wait before reading idle RSS; 0: 500ms, short 50ms
	SmallSpec  string        // small cold-start spec; "" means testdata/specs/petstore.3.0.yaml
	GitHubSpec string        // GitHub's spec; "" means testdata/specs/github-api.3.0.json
	Phases     []string      // latency, throughput, cold; nil means all
	Sizes      []string      // bodies the call phases use; nil means all
	NoOutput   bool          // generate the spec without response schemas
	Peer       string        // a peer's command for GitHub's cold start, {spec} and {upstream} filled in
	ClientName string        // clientInfo.name of every MCP client mcpbench runs; "" means mcpbench
}

// batches is how many calls per target one latency round makes per size.
func (c *config) batches() map[string]int {
	if c.Short {
		return map[string]int{"small": 20, "16k": 10, "1m": 1, "16k-pretty": 2}
	}
	return map[string]int{"small": 300, "16k": 150, "1m": 20, "16k-pretty": 60}
}

// throughputSize reports whether the throughput phase covers size: in
// short mode only the small and 16 KiB bodies (1 MiB calls at c=32 take
// seconds).
func (c *config) throughputSize(size string) bool {
	switch size {
	case "16k-pretty":
		return false
	case "1m":
		return !c.Short
	}
	return true
}

// coldCase reports whether the cold-start phase covers a case: short mode
// leaves out GitHub's spec with all operations (seconds per start).
func (c *config) coldCase(name string) bool {
	return !c.Short || name != coldGitHubAll
}

func (c *config) size(name string) bool {
	return c.Sizes == nil || slices.Contains(c.Sizes, name)
}

func (c *config) phase(name string) bool {
	return c.Phases == nil || slices.Contains(c.Phases, name)
}

// parseFlags returns nil, nil for --help.
func parseFlags(args []string, stderr io.Writer) (*config, error) {
	fs := flag.NewFlagSet("mcpbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &config{}
	var phases, sizes string
	fs.BoolVar(&c.Short, "short", false, "a few seconds in total (CI): small counts, one cold start per case")
	fs.StringVar(&c.JSONPath, "json", "", "also write every result as JSON to this file")
	fs.StringVar(&c.Bridge, "bridge", "", "mcpbridge binary (default: the release build, CGO_ENABLED=0 go build -trimpath -ldflags \"-s -w\" ./cmd/mcpbridge, into a temp dir)")
	fs.StringVar(&c.BridgeLog, "bridge-log", "", "append the bridge's stderr to this file (default: discard)")
	fs.IntVar(&c.Rounds, "rounds", 0, "latency rounds; throughput cells are split into as many slices (default 5, short 1)")
	fs.DurationVar(&c.Duration, "duration", 0, "measured time per throughput cell, target x size x concurrency (default 2s, short 100ms)")
	fs.IntVar(&c.ColdRuns, "cold-runs", 0, "cold starts per case; the median is reported (default 7, short 1)")
	fs.DurationVar(&c.Settle, "settle", 0, "idle time after tools/list before reading idle RSS (default 500ms, short 50ms)")
	fs.StringVar(&c.SmallSpec, "small-spec", "", "small spec for cold start (default testdata/specs/petstore.3.0.yaml)")
	fs.StringVar(&c.GitHubSpec, "github-spec", "", "GitHub's spec for cold start (default testdata/specs/github-api.3.0.json)")
	fs.StringVar(&phases, "phases", "latency,throughput,cold", "comma-separated phases to run")
	fs.StringVar(&sizes, "sizes", "", "comma-separated bodies for the call phases: small, 16k, 1m, 16k-pretty (default all)")
	fs.StringVar(&c.Peer, "peer", "", "also time this peer's first start on GitHub's spec (all operations), interleaved with the bridge's: a command whose {spec} and {upstream} are filled in, split at spaces; its median and peak become the GitHub first-start targets' reference")
	fs.StringVar(&c.ClientName, "client-name", "", "the clientInfo.name mcpbench's MCP clients give (default mcpbench, a client the bridge knows nothing of); claude-code (or codex-mcp-client, Visual Studio Code) measures what a host that reads structuredContent gets: no duplicate text block with the bridge's default --result-text known; claude-ai (or kimi-code, gemini-cli-mcp-client) what a host that reads the content gets: text alone")
	fs.BoolVar(&c.NoOutput, "no-output-schema", false, "declare no response schemas (the bridge then sends no structuredContent)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: mcpbench [flags]\n\nMeasures mcpbridge against direct HTTP and a minimal go-sdk server.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil
		}
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, p := range strings.Split(phases, ",") {
		p = strings.TrimSpace(p)
		switch p {
		case "latency", "throughput", "cold":
			c.Phases = append(c.Phases, p)
		case "":
		default:
			return nil, fmt.Errorf("unknown phase %q (latency, throughput, cold)", p)
		}
	}
	for _, sz := range strings.Split(sizes, ",") {
		sz = strings.TrimSpace(sz)
		switch sz {
		case "small", "16k", "1m", "16k-pretty":
			c.Sizes = append(c.Sizes, sz)
		case "":
		default:
			return nil, fmt.Errorf("unknown size %q (small, 16k, 1m, 16k-pretty)", sz)
		}
	}
	return c, c.withDefaults()
}

// withDefaults fills the zero values and locates the specs.
func (c *config) withDefaults() error {
	pick := func(short, full int) int {
		if c.Short {
			return short
		}
		return full
	}
	if c.Rounds <= 0 {
		c.Rounds = pick(1, 5)
	}
	if c.ColdRuns <= 0 {
		c.ColdRuns = pick(1, 7)
	}
	if c.Duration <= 0 {
		c.Duration = time.Duration(pick(100, 2000)) * time.Millisecond
	}
	if c.Settle <= 0 {
		c.Settle = time.Duration(pick(50, 500)) * time.Millisecond
	}
	if c.SmallSpec != "" && c.GitHubSpec != "" {
		return nil
	}
	root, err := moduleRoot()
	if err != nil {
		if c.phase("cold") {
			return err
		}
		return nil // the specs are only needed for cold start
	}
	if c.SmallSpec == "" {
		c.SmallSpec = filepath.Join(root, "testdata", "specs", "petstore.3.0.yaml")
	}
	if c.GitHubSpec == "" {
		c.GitHubSpec = filepath.Join(root, "testdata", "specs", "github-api.3.0.json")
	}
	return nil
}

// moduleRoot is the nearest directory at or above the working directory
// holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the module root: no go.mod at or above the working directory (use --small-spec, --github-spec and --bridge)")
		}
		dir = parent
	}
}
