package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Identity is the inbound caller of a tool call, as the transport
// authenticated it. It carries no secret.
type Identity struct {
	// ID is stable per credential: "api-key:N", "jwt:ISS|SUB", "local" for
	// stdio, or "" for an unauthenticated remote caller.
	ID string
	// Subject is the JWT subject ("" otherwise).
	Subject string
	// Scopes are the JWT scopes (nil otherwise).
	Scopes []string
	// Remote is the client's network address when known.
	Remote string
}

// Local is the identity of the process that launched the bridge over
// stdio.
var Local = &Identity{ID: "local"}

// Key is what quotas and usage records count against: ID when
// authenticated, else the remote address.
func (id *Identity) Key() string {
	switch {
	case id == nil:
		return ""
	case id.ID != "":
		return id.ID
	}
	return id.Remote
}

// Progress receives a call's progress; the MCP exposure turns it into
// progress notifications and log messages.
type Progress interface {
	Step(ctx context.Context, n, total int, msg string)
}

// Call is one tool call on its way through the middleware chain.
type Call struct {
	// Tool is the tool name.
	Tool string
	// Args is the arguments object as the client sent it (nil: none).
	Args json.RawMessage
	// Caller is who calls; nil means unknown.
	Caller *Identity
	// Transport names the way in: "stdio", "http", "rest", "cli", "dynamic".
	Transport string
	// Progress, when set, is told how the call advances.
	Progress Progress
	// Unstructured says the caller takes no structuredContent (an MCP
	// client before 2025-06-18, or a host that shows its model the text
	// alone and is listed the tools without output schemas): the answer
	// goes as text, unchecked against the tool's output schema.
	Unstructured bool
	viaMeta      bool // called through call_operation (Tool is the operation); beside Unstructured, in its padding

	target  *Tool
	catalog *Catalog
	metaErr error // call_operation's arguments name no operation: why
	start   time.Time
}

// Target is the tool being called, taken from the catalog when the call
// entered the runtime; a swap while the call runs does not change it.
func (c *Call) Target() *Tool { return c.target }

// Outcome is how a call ended, for the caller and for every middleware.
type Outcome struct {
	// Result is what the MCP client gets.
	Result *mcp.CallToolResult
	// Kind classifies the outcome; OK for a success.
	Kind ErrorKind
	// Status is the upstream HTTP status (0 when no answer came).
	Status int
	// Attempts is how many upstream requests were sent (0 when none).
	Attempts int
	// BytesIn is the size of the arguments; BytesOut of the upstream body.
	BytesIn, BytesOut int64
	// Took is the whole call; Upstream the part spent waiting for the
	// upstream (retries included).
	Took, Upstream time.Duration
	// Detail is the redacted reason behind a failure, for logs only.
	Detail string
	// RetryAfter, for Busy and RateLimited, says when to try again.
	RetryAfter time.Duration
}

// Invoker runs calls. Errors are protocol failures (unknown tool, a bug);
// everything a client could fix or retry is an Outcome with IsError.
type Invoker interface {
	Invoke(ctx context.Context, c *Call) (*Outcome, error)
}

// InvokerFunc adapts a function to [Invoker].
type InvokerFunc func(ctx context.Context, c *Call) (*Outcome, error)

// Invoke calls f.
func (f InvokerFunc) Invoke(ctx context.Context, c *Call) (*Outcome, error) { return f(ctx, c) }

// Middleware wraps an invoker: metrics, tracing, usage, quotas, access,
// limits. It sees the call before and the outcome after.
type Middleware func(Invoker) Invoker

// Chain wraps inner in the middlewares, the first one outermost.
func Chain(inner Invoker, mws ...Middleware) Invoker {
	for i := len(mws) - 1; i >= 0; i-- {
		inner = mws[i](inner)
	}
	return inner
}

// Reject is the outcome of a call a middleware refuses: an IsError result
// with msg, never reaching the upstream.
func Reject(kind ErrorKind, msg string, retryAfter time.Duration) *Outcome {
	return &Outcome{
		Result:     &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}},
		Kind:       kind,
		Detail:     msg,
		RetryAfter: retryAfter,
	}
}

// Runtime serves calls on the current catalog. The catalog is swapped
// atomically; a call takes its tool from the catalog once, on entry, and
// finishes on that tool even if a swap happens meanwhile.
type Runtime struct {
	cat   atomic.Pointer[Catalog]
	chain Invoker

	mu         sync.Mutex
	onSwap     []func(old, cur *Catalog)
	lastReload atomic.Pointer[string]
	onPanic    func(tool string, p any, stack []byte)
}

// OnPanic sets fn to report a panic a call ran into (in the invoker or a
// middleware): the call ends as an error result and the server goes on.
// Set it before serving.
func (r *Runtime) OnPanic(fn func(tool string, p any, stack []byte)) { r.onPanic = fn }

// panicMessage is what the client reads of a call that panicked.
const panicMessage = "internal error: the bridge failed while serving this call (a bug, reported in its log); the request may or may not have reached the upstream"

// recovered reports a panic of call c and returns the call's outcome.
func (r *Runtime) recovered(c *Call, p any) *Outcome {
	stack := debug.Stack()
	if r.onPanic != nil {
		r.onPanic(c.Tool, p, stack)
	}
	out := Reject(ToolError, panicMessage, 0)
	out.Detail = fmt.Sprintf("panic: %v", p)
	return out
}

// NewRuntime serves cat through the middlewares, the first outermost.
func NewRuntime(cat *Catalog, mws ...Middleware) *Runtime {
	r := &Runtime{}
	r.cat.Store(cat)
	r.chain = Chain(InvokerFunc(r.invoke), mws...)
	return r
}

// Catalog is the catalog being served.
func (r *Runtime) Catalog() *Catalog { return r.cat.Load() }

// OnSwap registers fn to run after every swap, with the old and the new
// catalog, in the order of registration. Swaps are serialized, so fn never
// runs twice at once.
func (r *Runtime) OnSwap(fn func(old, cur *Catalog)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onSwap = append(r.onSwap, fn)
}

// Swap makes cat the served catalog and returns the previous one. Calls
// already running finish on the old one.
func (r *Runtime) Swap(cat *Catalog) *Catalog {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.cat.Swap(cat)
	for _, fn := range r.onSwap {
		fn(old, cat)
	}
	return old
}

// NoteReload records the outcome of a reload attempt for ping.
func (r *Runtime) NoteReload(s string) { r.lastReload.Store(&s) }

// Call runs c through the middleware chain. It returns ErrUnknownTool
// (wrapped) when the current catalog has no such tool.
func (r *Runtime) Call(ctx context.Context, c *Call) (out *Outcome, err error) {
	start := time.Now()
	defer func() {
		// A panic in a middleware (the invoker has its own recover, so that
		// the middlewares see its outcome) ends this call, not the server.
		if p := recover(); p != nil {
			out, err = r.recovered(c, p), nil
			out.Took = time.Since(start)
			out.BytesIn = int64(len(c.Args))
		}
	}()
	cat := r.cat.Load()
	t, ok := cat.Lookup(c.Tool)
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownTool, c.Tool)
	}
	c.target, c.catalog, c.start = t, cat, start
	if t.builtin == builtinCall {
		// call_operation: the chain and the invoker see the operation. When
		// its arguments name none, they see call_operation, so that the
		// refusal is counted and recorded; the invoker answers why.
		c.metaErr = cat.unwrapCall(c)
	}
	out, err = r.chain.Invoke(ctx, c)
	if out != nil {
		out.Took = time.Since(start)
		if out.BytesIn == 0 {
			out.BytesIn = int64(len(c.Args))
		}
	}
	return out, err
}

// invoke is the innermost invoker. It fills Took and BytesIn before the
// outcome travels back up the chain, so that middlewares see them.
//
// A panic while serving the call is the call's failure, not the server's:
// it becomes an error result that the middlewares see (metrics, the usage
// record, the concurrency slot freed) and is reported through OnPanic.
func (r *Runtime) invoke(ctx context.Context, c *Call) (out *Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = r.recovered(c, p), nil
		}
		if out != nil {
			out.Took = time.Since(c.start)
			out.BytesIn = int64(len(c.Args))
		}
	}()
	return r.invokeTool(ctx, c)
}

// invokeTool answers a built-in or calls the upstream.
func (r *Runtime) invokeTool(ctx context.Context, c *Call) (*Outcome, error) {
	switch c.target.builtin {
	case builtinSearch, builtinDescribe:
		return c.catalog.answerMeta(ctx, c), nil
	}
	if c.target.builtin == builtinPing {
		return r.ping(c)
	}
	if c.target.builtin == builtinCall { // not unwrapped (Runtime.Call)
		return c.catalog.fail(&Outcome{}, c.target, c.metaErr), nil
	}
	return c.catalog.call(ctx, c.target, c), nil
}

// ping answers the built-in ping tool. It is a function of its own to keep
// invokeTool's frame, which every call's stack holds, small.
func (r *Runtime) ping(c *Call) (*Outcome, error) {
	info := c.catalog.PingInfo()
	if s := r.lastReload.Load(); s != nil {
		info.LastReload = c.catalog.redactor.RedactString(*s)
	}
	body, err := json.Marshal(info)
	if err != nil {
		return nil, fmt.Errorf("encoding ping: %w", err)
	}
	return &Outcome{Result: &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}}, nil
}
