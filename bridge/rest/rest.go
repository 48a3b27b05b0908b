// Package rest exposes a [bridge.Runtime] as a small JSON API, for callers
// that do not speak MCP (scripts, services, tests):
//
//	GET  /api/tools          the tools, each as in tools/list
//	POST /api/tools/{name}   body: the arguments object → the CallToolResult
//	POST /api/batch          {"calls":[{"name":…,"arguments":{…}}]} → {"results":[…]}
//
// The batch route is outside /api/tools/ so that every tool name, "batch"
// included, reaches its tool.
//
// A call goes through the same runtime, so the same middleware chain
// (metrics, usage records, quotas, limits, access) counts and limits it
// like an MCP call. Authentication, the Origin policy and body limits are
// the HTTP transport's: this package only serves the routes it is given.
//
// Status codes: 200 with the result (isError inside for tool failures, as
// MCP reports them), 400 for a body that is not a JSON object, 404 for an
// unknown tool, 429 with Retry-After when a quota or the concurrency limit
// refuses the call, 503 with Retry-After when the quota store failed. With
// "Accept: text/event-stream", a single call streams "progress" events and
// ends with one "result" event; a call refused before it began gets the
// status a plain call gets instead of a stream.
package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// Options configures [Handler]. The zero value is usable.
type Options struct {
	// MaxBatch bounds the calls of one batch; 0 means 32.
	MaxBatch int
	// BatchConcurrency bounds the calls of a batch run at once; 0 means 8.
	BatchConcurrency int
	// MaxBatchHeldBytes bounds the encoded results of a batch that are done
	// but wait for an earlier one to be written: past it no further call
	// of the batch starts until they are; 0 means 16 MiB.
	MaxBatchHeldBytes int64
	// KeepAlive is how often a batch waiting for its next result writes a
	// newline (whitespace between the values of its JSON answer), so that
	// a proxy with an idle timeout does not cut it; 0 means 30s, negative
	// none. A streamed call gets SSE comments from the HTTP transport.
	KeepAlive time.Duration
	// MaxBodyBytes bounds a request body; 0 means 4 MiB.
	MaxBodyBytes int64
	// Identity tells who calls; nil means nobody is known (an anonymous
	// caller identified by its remote address).
	Identity func(*http.Request) *bridge.Identity
	// Visible, when set, decides whether a caller sees a tool in the list
	// (per-tool access control); nil shows every tool. Calls are refused
	// by the runtime's chain (bridge.Access), where the refusal is counted,
	// and answered here as for a missing tool.
	Visible func(id *bridge.Identity, t *bridge.Tool) bool
	// Log receives failures to write answers; nil means none.
	Log *zap.Logger
}

// Handler serves the REST facade of rt.
func Handler(rt *bridge.Runtime, opts Options) http.Handler {
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 32
	}
	if opts.BatchConcurrency <= 0 {
		opts.BatchConcurrency = 8
	}
	if opts.MaxBatchHeldBytes <= 0 {
		opts.MaxBatchHeldBytes = 16 << 20
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 4 << 20
	}
	if opts.KeepAlive == 0 {
		opts.KeepAlive = 30 * time.Second
	}
	if opts.Log == nil {
		opts.Log = zap.NewNop()
	}
	h := &handler{rt: rt, o: opts}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tools", h.list)
	mux.HandleFunc("POST /api/batch", h.batch)
	mux.HandleFunc("POST /api/tools/{name}", h.call)
	// Any other method or path: the JSON error every refusal here has
	// (ServeMux's own answers are plain text).
	mux.Handle("/api/tools", h.wrongMethod("GET, HEAD"))
	mux.Handle("/api/batch", h.wrongMethod("POST"))
	mux.Handle("/api/tools/{name}", h.wrongMethod("POST"))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		h.writeJSON(w, http.StatusNotFound, errorBody{"no such route: the routes are GET /api/tools, POST /api/tools/{name} and POST /api/batch"})
	})
	return mux
}

// wrongMethod answers 405 for a route that takes only allow.
func (h *handler) wrongMethod(allow string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		h.writeJSON(w, http.StatusMethodNotAllowed, errorBody{fmt.Sprintf("method %s not allowed: %s only", r.Method, allow)})
	})
}

type handler struct {
	rt    *bridge.Runtime
	o     Options
	lists listCache
}

func (h *handler) identity(r *http.Request) *bridge.Identity {
	if h.o.Identity != nil {
		if id := h.o.Identity(r); id != nil {
			return id
		}
	}
	return &bridge.Identity{Remote: r.RemoteAddr}
}

func (h *handler) visible(id *bridge.Identity, t *bridge.Tool) bool {
	return h.o.Visible == nil || h.o.Visible(id, t)
}

// list answers the tools the caller sees. Their encoding (2.5 MB, tens of
// milliseconds, for GitHub's whole API) is kept per catalog and per set of
// visible tools, so that it is not redone at every request.
func (h *handler) list(w http.ResponseWriter, r *http.Request) {
	id := h.identity(r)
	cat := h.rt.Catalog()
	listed := cat.Listed()
	// key has a bit per listed tool the caller sees: "" when it sees all.
	var mask []byte
	for i, t := range listed {
		if !h.visible(id, t) {
			if mask == nil {
				mask = make([]byte, (len(listed)+7)/8)
				for j := range i {
					mask[j/8] |= 1 << (j % 8)
				}
			}
			continue
		}
		if mask != nil {
			mask[i/8] |= 1 << (i % 8)
		}
	}
	key := string(mask)
	if data := h.lists.get(cat, key); data != nil {
		h.writeBytes(w, http.StatusOK, data)
		return
	}
	defs := make([]*mcp.Tool, 0, len(listed))
	for i, t := range listed {
		if mask == nil || mask[i/8]&(1<<(i%8)) != 0 {
			defs = append(defs, t.Def())
		}
	}
	data, err := json.Marshal(defs)
	if err != nil {
		h.o.Log.Error("encoding answer", zap.Error(err))
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	data = append(data, '\n')
	h.lists.put(cat, key, data)
	h.writeBytes(w, http.StatusOK, data)
}

// maxLists bounds the encoded tool lists kept for one catalog: one per set
// of visible tools, which access lists make at most one per role.
const maxLists = 64

// listCache holds the encoded tool lists of the current catalog, by set
// of visible tools; a reload's new catalog starts it afresh.
type listCache struct {
	mu   sync.Mutex
	cat  *bridge.Catalog
	data map[string][]byte
}

func (c *listCache) get(cat *bridge.Catalog, key string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cat != cat {
		return nil
	}
	return c.data[key]
}

func (c *listCache) put(cat *bridge.Catalog, key string, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cat != cat || len(c.data) >= maxLists {
		c.cat, c.data = cat, make(map[string][]byte)
	}
	c.data[key] = data
}

// callRequest is one call of a batch.
type callRequest struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// errorBody is the JSON of a 4xx answer.
type errorBody struct {
	Error string `json:"error"`
}

// errTooLarge is a body over MaxBodyBytes: 413, not 400.
type errTooLarge struct{ max int64 }

func (e errTooLarge) Error() string { return fmt.Sprintf("body larger than %d bytes", e.max) }

// errBodyTimeout is a body that did not arrive within the server's read
// timeout (--read-timeout).
var errBodyTimeout = errors.New("the request body did not arrive in time")

// bodyStatus is the status for an error of readObject.
func bodyStatus(err error) int {
	if errors.As(err, new(errTooLarge)) {
		return http.StatusRequestEntityTooLarge
	}
	if errors.Is(err, errBodyTimeout) {
		return http.StatusRequestTimeout // as on /mcp
	}
	return http.StatusBadRequest
}

func (h *handler) call(w http.ResponseWriter, r *http.Request) {
	args, err := h.readObject(w, r)
	if err != nil {
		h.writeJSON(w, bodyStatus(err), errorBody{err.Error()})
		return
	}
	c := &bridge.Call{Tool: r.PathValue("name"), Args: args, Caller: h.identity(r), Transport: "rest"}
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		h.stream(w, r, c)
		return
	}
	out, status, msg := h.run(r.Context(), c)
	h.answer(w, out, status, msg)
}

// answer writes the outcome of run as JSON.
func (h *handler) answer(w http.ResponseWriter, out *bridge.Outcome, status int, msg string) {
	if out == nil {
		h.writeJSON(w, status, errorBody{msg})
		return
	}
	if ra := retryAfter(out); ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	h.writeJSON(w, status, out.Result)
}

// run calls c, mapping the outcome to an HTTP status. A nil outcome means
// the call did not happen; msg says why.
func (h *handler) run(ctx context.Context, c *bridge.Call) (out *bridge.Outcome, status int, msg string) {
	t, ok := h.rt.Catalog().Lookup(c.Tool)
	if !ok {
		return nil, http.StatusNotFound, unknownTool(c.Tool)
	}
	// A tool the caller may not see goes through the chain all the same,
	// so that the access middleware refuses it and the refusal is counted
	// and logged (as "denied", under tool "other") like one over MCP; the
	// caller then gets what a missing tool gets.
	out, err := h.rt.Call(ctx, c)
	switch {
	case errors.Is(err, bridge.ErrUnknownTool):
		return nil, http.StatusNotFound, unknownTool(c.Tool)
	case err != nil:
		h.o.Log.Error("rest call failed", zap.String("tool", c.Tool), zap.Error(err))
		return nil, http.StatusInternalServerError, "internal error"
	}
	switch out.Kind {
	case bridge.RateLimited, bridge.Busy:
		return out, http.StatusTooManyRequests, ""
	case bridge.QuotaUnavailable:
		// The quota store failed and quota-fail is closed: the call did
		// not happen, through no fault of the request.
		return out, http.StatusServiceUnavailable, ""
	case bridge.Denied:
		if t.Builtin() {
			// call_operation naming an operation hidden from the caller:
			// its result already reads as for one that does not exist,
			// and so must its status.
			return out, http.StatusOK, ""
		}
		return nil, http.StatusNotFound, unknownTool(c.Tool)
	}
	return out, http.StatusOK, ""
}

// unknownTool is the 404 message for a tool that does not exist, or that
// the caller may not see: the two read alike.
func unknownTool(name string) string {
	if name == "batch" { // where the batch route was
		return `unknown tool "batch" (a batch of calls is POST /api/batch)`
	}
	return fmt.Sprintf("unknown tool %q", name)
}

// quotaRetry is the Retry-After of a 503 for a quota store that failed:
// its outage has no known end, and the store is tried again at each call.
const quotaRetry = "1"

func retryAfter(out *bridge.Outcome) string {
	if out.Kind == bridge.QuotaUnavailable && out.RetryAfter <= 0 {
		return quotaRetry
	}
	if out.RetryAfter <= 0 || (out.Kind != bridge.RateLimited && out.Kind != bridge.Busy && out.Kind != bridge.QuotaUnavailable) {
		return ""
	}
	return strconv.Itoa(int(math.Ceil(out.RetryAfter.Seconds())))
}

// batchRequest is the body of POST /api/batch.
type batchRequest struct {
	Calls []callRequest `json:"calls"`
}

// decodeBatch reads the body of POST /api/batch. Member names are matched
// exactly and once (bridge.StrictObject): encoding/json would also take
// "NAME" for "name", the last of two, so that a batch reviewed or logged
// as calling one tool would call another.
// More than maxCalls calls (or none) are refused before any is read.
func decodeBatch(raw json.RawMessage, maxCalls int) (batchRequest, error) {
	var req batchRequest
	m, err := bridge.StrictObject(raw, "calls")
	if err != nil {
		return req, err
	}
	var calls []json.RawMessage
	if v, ok := m["calls"]; ok {
		if err := json.Unmarshal(v, &calls); err != nil {
			return req, errors.New(`"calls" must be an array of {"name": string, "arguments": object}`)
		}
	}
	if len(calls) == 0 || len(calls) > maxCalls {
		return req, fmt.Errorf("between 1 and %d calls, got %d", maxCalls, len(calls))
	}
	for i, c := range calls {
		f, err := bridge.StrictObject(c, "name", "arguments")
		if err != nil {
			return req, fmt.Errorf("calls[%d]: %w", i, err)
		}
		cr := callRequest{Arguments: f["arguments"]}
		if v, ok := f["name"]; ok {
			if err := json.Unmarshal(v, &cr.Name); err != nil {
				return req, fmt.Errorf(`calls[%d]: "name" must be a string`, i)
			}
		}
		req.Calls = append(req.Calls, cr)
	}
	return req, nil
}

// batchResult is one entry of the answer: the result, or why there is none.
type batchResult struct {
	Name   string              `json:"name"`
	Status int                 `json:"status"`
	Result *mcp.CallToolResult `json:"result,omitempty"`
	Error  string              `json:"error,omitempty"`
}

func (h *handler) batch(w http.ResponseWriter, r *http.Request) {
	raw, err := h.readObject(w, r)
	if err != nil {
		h.writeJSON(w, bodyStatus(err), errorBody{err.Error()})
		return
	}
	req, err := decodeBatch(raw, h.o.MaxBatch)
	if err != nil {
		h.writeJSON(w, http.StatusBadRequest, errorBody{"batch: " + err.Error()})
		return
	}
	h.runBatch(w, r, req.Calls)
}

// batchSlot is one call of a running batch: data is its encoded result,
// set before done is closed.
type batchSlot struct {
	done chan struct{}
	data []byte
}

// runBatch runs calls, BatchConcurrency at a time, and writes each result
// as soon as it and those before it are done, then lets it go: a batch
// holds no more than the calls running and the results waiting for an
// earlier one, and no further call starts while those exceed
// MaxBatchHeldBytes (a slow first call, or a client reading slowly).
func (h *handler) runBatch(w http.ResponseWriter, r *http.Request, calls []callRequest) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	id := h.identity(r)
	slots := make([]batchSlot, len(calls))
	var (
		mu    sync.Mutex
		held  int64
		freed = make(chan struct{}, 1) // a result was written
	)
	finish := func(i int, res batchResult) {
		data, err := json.Marshal(res)
		if err != nil {
			h.o.Log.Error("encoding batch result", zap.String("tool", res.Name), zap.Error(err))
			data, _ = json.Marshal(batchResult{Name: res.Name, Status: http.StatusInternalServerError, Error: "internal error"})
		}
		mu.Lock()
		held += int64(len(data))
		mu.Unlock()
		slots[i].data = data
		close(slots[i].done)
	}
	overBudget := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return held > h.o.MaxBatchHeldBytes
	}
	for i := range slots {
		slots[i].done = make(chan struct{})
	}
	go func() { // starts the calls in order, so the next one to write is always running
		sem := make(chan struct{}, h.o.BatchConcurrency)
		for i, cr := range calls {
			if len(cr.Arguments) == 0 || string(cr.Arguments) == "null" {
				cr.Arguments = json.RawMessage("{}")
			}
			if !isObject(cr.Arguments) {
				finish(i, batchResult{Name: cr.Name, Status: http.StatusBadRequest, Error: "arguments must be a JSON object"})
				continue
			}
			select {
			case sem <- struct{}{}:
				for overBudget() && ctx.Err() == nil {
					select {
					case <-freed:
					case <-ctx.Done():
					}
				}
			case <-ctx.Done():
			}
			if ctx.Err() != nil { // the client left: start nothing more
				for j := i; j < len(calls); j++ {
					finish(j, batchResult{Name: calls[j].Name, Status: http.StatusServiceUnavailable, Error: "request cancelled"})
				}
				return
			}
			go func() {
				defer func() { <-sem }() // after finish: the budget counts the result first
				out, status, msg := h.run(ctx, &bridge.Call{Tool: cr.Name, Args: cr.Arguments, Caller: id, Transport: "rest"})
				res := batchResult{Name: cr.Name, Status: status, Error: msg}
				if out != nil {
					res.Result = out.Result
				}
				finish(i, res)
			}()
		}
	}()

	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	var werr error
	write := func(p []byte) {
		if werr == nil {
			_, werr = w.Write(p)
		}
	}
	write([]byte(`{"results":[`))
	if fl != nil {
		fl.Flush()
	}
	var tick <-chan time.Time
	if h.o.KeepAlive > 0 {
		t := time.NewTicker(h.o.KeepAlive)
		defer t.Stop()
		tick = t.C
	}
	for i := range slots {
	wait:
		for {
			select {
			case <-slots[i].done:
				break wait
			case <-tick:
				write([]byte("\n"))
				if fl != nil && werr == nil {
					fl.Flush()
				}
			}
		}
		if i > 0 {
			write([]byte(","))
		}
		write(slots[i].data)
		if fl != nil && werr == nil {
			fl.Flush()
		}
		mu.Lock()
		held -= int64(len(slots[i].data))
		mu.Unlock()
		slots[i].data = nil
		select {
		case freed <- struct{}{}:
		default:
		}
		if werr != nil {
			cancel() // the client is gone: the calls still to run need not
		}
	}
	write([]byte("]}\n"))
	if werr != nil {
		h.o.Log.Debug("writing batch answer", zap.Error(werr))
	}
}

// stream runs one call, sending "progress" events as it advances and a
// final "result" event. The stream starts with the first event: a call
// refused before it began (unknown tool, over a quota or the concurrency
// limit) gets the status, Retry-After and JSON body a plain call gets.
func (h *handler) stream(w http.ResponseWriter, r *http.Request, c *bridge.Call) {
	fl, ok := w.(http.Flusher)
	if !ok {
		h.writeJSON(w, http.StatusNotAcceptable, errorBody{"streaming is not supported here"})
		return
	}
	var mu sync.Mutex
	started := false
	send := func(event string, v any) {
		data, err := json.Marshal(v)
		if err != nil {
			h.o.Log.Error("encoding event", zap.Error(err))
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if !started {
			started = true
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
		fl.Flush()
	}
	c.Progress = progressFunc(func(_ context.Context, n, total int, msg string) {
		send("progress", map[string]any{"progress": n, "total": total, "message": msg})
	})
	out, status, msg := h.run(r.Context(), c)
	mu.Lock()
	began := started
	mu.Unlock()
	switch {
	case !began && (out == nil || status != http.StatusOK):
		h.answer(w, out, status, msg)
	case out == nil:
		send("error", map[string]any{"status": status, "error": msg})
	default:
		send("result", out.Result)
	}
}

type progressFunc func(ctx context.Context, n, total int, msg string)

func (f progressFunc) Step(ctx context.Context, n, total int, msg string) { f(ctx, n, total, msg) }

// readObject reads a body that must be one JSON object (an empty body is
// the empty object).
func (h *handler) readObject(w http.ResponseWriter, r *http.Request) (json.RawMessage, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.o.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errTooLarge{h.o.MaxBodyBytes}
		}
		w.Header().Set("Connection", "close") // the rest of the body is still on the wire
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, errBodyTimeout
		}
		return nil, fmt.Errorf("reading body: %w", err)
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return json.RawMessage("{}"), nil
	}
	if !isObject(body) {
		return nil, errors.New("body must be a JSON object")
	}
	return body, nil
}

func isObject(raw []byte) bool {
	s := strings.TrimSpace(string(raw))
	return strings.HasPrefix(s, "{") && json.Valid(raw)
}

func (h *handler) writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		h.o.Log.Error("encoding answer", zap.Error(err))
		http.Error(w, `{"error":"internal error"}`, http.StatusInternalServerError)
		return
	}
	h.writeBytes(w, status, append(data, '\n'))
}

// writeBytes writes data, a JSON answer, with status.
func (h *handler) writeBytes(w http.ResponseWriter, status int, data []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if _, err := w.Write(data); err != nil {
		h.o.Log.Debug("writing answer", zap.Error(err))
	}
}
