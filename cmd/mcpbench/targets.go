package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Target names, in the order the tables list them.
const (
	tDirect     = "direct"
	tFloorStdio = "floor/stdio"
	tFloorHTTP  = "floor/http"
	// The floor+sc targets do what mcpbridge does by default for a tool
	// with an output schema: the body as text and as structuredContent.
	tFloorSCStdio = "floor+sc/stdio"
	tFloorSCHTTP  = "floor+sc/http"
	tBridgeStdio  = "bridge/stdio"
	tBridgeHTTP   = "bridge/http"
)

// callOut is what one call brought back: Body for the direct client,
// Result for MCP targets.
type callOut struct {
	Body   []byte
	Result *mcp.CallToolResult
}

// text is the concatenated text content of an MCP result, or the body.
func (o callOut) text() string {
	if o.Result == nil {
		return string(o.Body)
	}
	var sb strings.Builder
	for _, c := range o.Result.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// target is one way to fetch an endpoint's document.
type target struct {
	Name  string
	call  func(ctx context.Context, e *endpoint) (callOut, error)
	pid   int          // server process; 0 for direct
	close func() error // stops the server process
}

// pooledClient is an HTTP client with a keep-alive pool large enough for
// the highest concurrency level (Go's default keeps only 2 idle
// connections per host, which would make c=32 measure connection setup).
func pooledClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 256
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: tr}
}

// directTarget GETs the upstream itself.
func directTarget(upstreamURL string) *target {
	client := pooledClient()
	return &target{
		Name: tDirect,
		call: func(ctx context.Context, e *endpoint) (callOut, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, upstreamURL+e.CallPath, nil)
			if err != nil {
				return callOut{}, err
			}
			resp, err := client.Do(req)
			if err != nil {
				return callOut{}, err
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return callOut{}, err
			}
			if resp.StatusCode != http.StatusOK {
				return callOut{}, fmt.Errorf("upstream status %d", resp.StatusCode)
			}
			return callOut{Body: body}, nil
		},
		close: func() error { client.CloseIdleConnections(); return nil },
	}
}

// mcpTarget calls tools over an established client session.
func mcpTarget(name string, cs *mcp.ClientSession, pid int, stop func() error) *target {
	return &target{
		Name: name,
		pid:  pid,
		call: func(ctx context.Context, e *endpoint) (callOut, error) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: e.Tool, Arguments: e.Args})
			if err != nil {
				return callOut{}, err
			}
			out := callOut{Result: res}
			if res.IsError {
				t := out.text()
				if len(t) > 300 {
					t = t[:300] + "…"
				}
				return out, fmt.Errorf("tool %s returned an error: %s", e.Tool, t)
			}
			return out, nil
		},
		close: stop,
	}
}

func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1"}, nil)
}

// clientName is the clientInfo.name newClient's clients give (--client-name).
var clientName = "mcpbench"

// startStdio spawns cmd as an MCP server over stdio and connects to it.
func startStdio(ctx context.Context, name string, cmd *exec.Cmd) (*target, error) {
	cs, err := newClient().Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		if cmd.Process != nil {
			cmd.Process.Kill() //nolint:errcheck // best effort after a failed start
		}
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return mcpTarget(name, cs, cmd.Process.Pid, cs.Close), nil
}

// startHTTP spawns cmd, waits for announce to find its address in the
// line-oriented output (stdout or stderr, per fromStderr), and connects to
// http://ADDR/mcp with go-sdk's streamable client.
func startHTTP(ctx context.Context, name string, cmd *exec.Cmd, fromStderr bool, logw io.Writer, announce func(line []byte) (string, bool)) (*target, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	if fromStderr {
		cmd.Stderr = w
	} else {
		cmd.Stdout = w
	}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	w.Close() // the child holds its copy; EOF on r means it exited
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go func() { p.waitErr = cmd.Wait(); close(p.exited) }()

	addrc := make(chan string, 1)
	var tail bytes.Buffer // last output, for the error message
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		found := false
		for sc.Scan() {
			line := sc.Bytes()
			if logw != nil {
				logw.Write(append(line, '\n')) //nolint:errcheck // logging is best effort
			}
			if !found {
				if tail.Len() < 8<<10 {
					tail.Write(line)
					tail.WriteByte('\n')
				}
				if addr, ok := announce(line); ok {
					found = true
					addrc <- addr
				}
			}
		}
		close(addrc)
		r.Close()
	}()
	var addr string
	select {
	case a, ok := <-addrc:
		if !ok {
			p.stop()
			return nil, fmt.Errorf("starting %s: exited before listening (%v): %s", name, p.waitErr, strings.TrimSpace(tail.String()))
		}
		addr = a
	case <-time.After(60 * time.Second):
		p.stop()
		return nil, fmt.Errorf("starting %s: no listen address within 60s", name)
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
	tr := &mcp.StreamableClientTransport{
		Endpoint:             "http://" + addr + "/mcp",
		HTTPClient:           pooledClient(),
		DisableStandaloneSSE: true, // request/response only, like a stateless tool caller
	}
	cs, err := newClient().Connect(ctx, tr, nil)
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("connecting to %s at %s: %w", name, addr, err)
	}
	return mcpTarget(name, cs, cmd.Process.Pid, func() error {
		cerr := cs.Close()
		tr.HTTPClient.CloseIdleConnections()
		return errors.Join(cerr, p.stop())
	}), nil
}

// process is a child we started and must stop.
type process struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error
}

// stop sends SIGTERM, then SIGKILL after 5s; it returns nil for an exit
// caused by our signal.
func (p *process) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	p.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may be gone already
	select {
	case <-p.exited:
		return nil
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill() //nolint:errcheck // it may be gone already
		<-p.exited
		return fmt.Errorf("%s did not stop within 5s of SIGTERM", p.cmd.Path)
	}
}

// bridgeAnnounce finds the address in mcpbridge's JSON log line
// {"msg":"listening","addr":"127.0.0.1:PORT",...}.
func bridgeAnnounce(line []byte) (string, bool) {
	var l struct {
		Msg  string `json:"msg"`
		Addr string `json:"addr"`
	}
	if json.Unmarshal(line, &l) != nil || l.Msg != "listening" || l.Addr == "" {
		return "", false
	}
	return l.Addr, true
}

// floorAnnounce reads the floor's first stdout line, the bare address.
func floorAnnounce(line []byte) (string, bool) {
	s := strings.TrimSpace(string(line))
	return s, s != ""
}

// memSample is a process's resident memory from /proc/PID/status.
type memSample struct {
	RSSKiB int64 `json:"rssKiB"` // VmRSS: resident now
	HWMKiB int64 `json:"hwmKiB"` // VmHWM: peak resident since start
	// CPUTicks is the process's user + system CPU time so far, in clock
	// ticks (USER_HZ, 100 a second on Linux): CPU spent per call does not
	// move with the machine's load the way latency does.
	CPUTicks int64 `json:"cpuTicks"`
}

// readMem reads VmRSS and VmHWM of pid (Linux only; zeros elsewhere).
func readMem(pid int) (memSample, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return memSample{}, fmt.Errorf("reading memory of pid %d: %w", pid, err)
	}
	var m memSample
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(f[0], 10, 64)
		switch k {
		case "VmRSS":
			m.RSSKiB = n
		case "VmHWM":
			m.HWMKiB = n
		}
	}
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		// Fields after the command (which may hold spaces) in parentheses:
		// utime and stime are the 12th and 13th.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
			f := strings.Fields(string(stat[i+1:]))
			if len(f) > 12 {
				u, _ := strconv.ParseInt(f[11], 10, 64)
				st, _ := strconv.ParseInt(f[12], 10, 64)
				m.CPUTicks = u + st
			}
		}
	}
	return m, nil
}
