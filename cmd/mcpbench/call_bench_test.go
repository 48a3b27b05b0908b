package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/limit"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/bridge/observe"
	bupstream "github.com/mcpbridge/mcpbridge/bridge/upstream"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// callBench is what BenchmarkCall and BenchmarkHandler share: the
// command's upstream and spec, and the bridge's runtimes over one catalog.
type callBench struct {
	eps   []*endpoint
	upURL string
	plain *bridge.Runtime // no middleware
	chain *bridge.Runtime // the middlewares mcpbridge serve installs by default
}

func newCallBench(b *testing.B) *callBench {
	eps := endpoints()
	buildBodies(eps)
	up, err := startUpstream(eps)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { up.Close() })
	spec, wl, err := writeBenchSpec(b.TempDir(), up.URL, eps, os.Getenv("MCPBENCH_NO_OUTPUT_SCHEMA") == "")
	if err != nil {
		b.Fatal(err)
	}
	res, err := specloader.Load(b.Context(), spec, specloader.Options{})
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(wl)
	if err != nil {
		b.Fatal(err)
	}
	policy, err := whitelist.Parse(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	ops, err := policy.Select(res.Doc)
	if err != nil {
		b.Fatal(err)
	}
	br, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: bupstream.New(bupstream.Options{})})
	if err != nil {
		b.Fatal(err)
	}
	metrics, err := observe.NewMetrics(prometheus.NewRegistry(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	chain := bridge.NewRuntime(br, metrics.Middleware(), observe.Usage(zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel)), observe.UsageOptions{}),
		bridge.Access(), limit.Concurrency(limit.Options{MaxInFlight: 64, MaxQueue: -1}))
	return &callBench{eps: eps, upURL: up.URL, plain: bridge.NewRuntime(br), chain: chain}
}

// BenchmarkCall is the call path of mcpbench in one process, for
// profiling (mcpbridge has no pprof flag): a go-sdk client calls the
// floor's and the bridge's tools over in-memory transports, against the
// same upstream and spec as the command.
//
//	go test ./cmd/mcpbench -run '^$' -bench Call -cpuprofile cpu.out
//	go tool pprof -top cpu.out
func BenchmarkCall(b *testing.B) {
	cb := newCallBench(b)
	eps := cb.eps
	bridgeServer := mcpx.New(cb.plain, mcpx.Options{Version: "bench"}).MCP()
	chainServer := mcpx.New(cb.chain, mcpx.Options{Version: "bench"}).MCP()
	// The command's default result text: the client (mcpbench, unknown to
	// it) still gets both blocks, after the name check.
	knownServer := mcpx.New(cb.plain, mcpx.Options{Version: "bench", ResultText: mcpx.TextKnown}).MCP()

	for _, srv := range []struct {
		name string
		s    *mcp.Server
	}{{"floor", newFloorServer(cb.upURL, eps, false)}, {"floor+sc", newFloorServer(cb.upURL, eps, true)}, {"bridge", bridgeServer}, {"bridge+known", knownServer}, {"bridge+chain", chainServer}} {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.s.Connect(b.Context(), st, nil)
		if err != nil {
			b.Fatal(err)
		}
		cs, err := newClient().Connect(b.Context(), ct, nil)
		if err != nil {
			b.Fatal(err)
		}
		benchCalls(b, srv.name, cs, eps)
		cs.Close()
		ss.Close()
	}
}

// benchCalls runs one sub-benchmark per endpoint, named target/size, that
// calls its tool through cs.
func benchCalls(b *testing.B, target string, cs *mcp.ClientSession, eps []*endpoint) {
	for _, e := range eps {
		b.Run(target+"/"+e.Size, func(b *testing.B) {
			b.SetBytes(int64(len(e.body)))
			cpu0 := processCPU()
			for b.Loop() {
				r, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: e.Tool, Arguments: e.Args})
				if err != nil || r.IsError {
					b.Fatalf("%s: %v %+v", e.Tool, err, r)
				}
			}
			// CPU time is steadier than wall time on a shared machine.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkHandler is the server's own work on a call without go-sdk:
// the floor's tool handler against Runtime.Call, with and without the
// default middlewares. What go-sdk costs (decoding, the session, the
// response, and the garbage collection of its ~390 KB a call) is left out,
// so the difference is the bridge's overhead, measured with less noise than
// BenchmarkCall.
func BenchmarkHandler(b *testing.B) {
	cb := newCallBench(b)
	for _, e := range cb.eps {
		args, err := json.Marshal(e.Args)
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range []struct {
			name string
			call func(ctx context.Context) (*mcp.CallToolResult, error)
		}{
			{"floor", floorHandler(floorClient(), cb.upURL+e.CallPath, false)},
			{"floor+sc", floorHandler(floorClient(), cb.upURL+e.CallPath, true)},
			{"bridge", runtimeHandler(cb.plain, e.Tool, args)},
			{"bridge+chain", runtimeHandler(cb.chain, e.Tool, args)},
		} {
			b.Run(h.name+"/"+e.Size, func(b *testing.B) {
				b.SetBytes(int64(len(e.body)))
				cpu0 := processCPU()
				for b.Loop() {
					r, err := h.call(b.Context())
					if err != nil || r.IsError {
						b.Fatalf("%s: %v %+v", e.Tool, err, r)
					}
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// runtimeHandler calls tool on rt as mcpx does for a stdio session, with
// a progress reporter that sends nothing.
func runtimeHandler(rt *bridge.Runtime, tool string, args json.RawMessage) func(context.Context) (*mcp.CallToolResult, error) {
	return func(ctx context.Context) (*mcp.CallToolResult, error) {
		out, err := rt.Call(ctx, &bridge.Call{Tool: tool, Args: args, Caller: bridge.Local, Transport: "stdio", Progress: quietProgress{}})
		if err != nil {
			return nil, err
		}
		return out.Result, nil
	}
}

type quietProgress struct{}

func (quietProgress) Step(context.Context, int, int, string) {}

// BenchmarkStart is mcpbridge's startup in one process, as app.build does
// it: load the spec, select operations, build the tools, then answer
// tools/list over an in-memory session. For profiling cold start:
//
//	go test ./cmd/mcpbench -run '^$' -bench Start/github -cpuprofile cpu.out
func BenchmarkStart(b *testing.B) {
	cfg := &config{}
	if err := cfg.withDefaults(); err != nil {
		b.Fatal(err)
	}
	gh20, err := writeGitHubWhitelist(b.TempDir(), cfg.GitHubSpec)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, spec, whitelist string
	}{
		{"petstore-all", cfg.SmallSpec, ""},
		{"github-20", cfg.GitHubSpec, gh20},
		{"github-all", cfg.GitHubSpec, ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				res, err := specloader.Load(b.Context(), c.spec, specloader.Options{})
				if err != nil {
					b.Fatal(err)
				}
				policy := whitelist.All()
				if c.whitelist != "" {
					f, err := os.Open(c.whitelist)
					if err != nil {
						b.Fatal(err)
					}
					policy, err = whitelist.Parse(f)
					f.Close()
					if err != nil {
						b.Fatal(err)
					}
				}
				ops, err := policy.Select(res.Doc)
				if err != nil {
					b.Fatal(err)
				}
				br, err := bridge.New(ops, bridge.Options{BaseURL: "http://127.0.0.1:9"})
				if err != nil {
					b.Fatal(err)
				}
				s := mcpx.New(bridge.NewRuntime(br), mcpx.Options{Version: "bench"}).MCP()
				ct, st := mcp.NewInMemoryTransports()
				ss, err := s.Connect(b.Context(), st, nil)
				if err != nil {
					b.Fatal(err)
				}
				cs, err := newClient().Connect(b.Context(), ct, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := cs.ListTools(b.Context(), nil); err != nil {
					b.Fatal(err)
				}
				cs.Close()
				ss.Close()
			}
		})
	}
}
