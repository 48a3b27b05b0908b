package bridge_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// fuzzUpstream is the configured upstream of FuzzSpecCalls: every request
// must go to its origin, under its base path.
const fuzzUpstream = "https://up.example:8443/base"

// recordingDoer answers every request with a small JSON body, after
// checking it against the configured upstream; the first violation wins.
type recordingDoer struct {
	mu   sync.Mutex
	bad  error
	sent int
}

func (d *recordingDoer) Do(req *http.Request) (*http.Response, error) {
	d.mu.Lock()
	d.sent++
	d.mu.Unlock()
	err := checkUpstreamRequest(req)
	if req.Body != nil {
		if _, rerr := io.Copy(io.Discard, req.Body); rerr != nil && err == nil {
			err = fmt.Errorf("reading the request body: %w", rerr)
		}
		req.Body.Close()
	}
	if err != nil {
		d.mu.Lock()
		if d.bad == nil {
			d.bad = err
		}
		d.mu.Unlock()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"ok":true,"items":[1,2]}`)), ContentLength: -1, Request: req}, nil
}

// checkUpstreamRequest reports a request that leaves the configured
// upstream's origin or base path, or carries a control character in a
// header.
func checkUpstreamRequest(req *http.Request) error {
	u := req.URL
	if u.Scheme != "https" || u.Host != "up.example:8443" || u.User != nil || req.Host != "" && req.Host != u.Host {
		return fmt.Errorf("request to %s (Host %q), not the configured upstream", u, req.Host)
	}
	if p := u.EscapedPath(); p != "/base" && !strings.HasPrefix(p, "/base/") {
		return fmt.Errorf("request path %q is not under /base", p)
	}
	loose := strings.NewReplacer("%2E", ".", "%2e", ".", "%2F", "/", "%2f", "/", "%5C", "/", "%5c", "/", `\`, "/").Replace(u.EscapedPath())
	for _, seg := range strings.Split(loose, "/") {
		if seg == ".." {
			return fmt.Errorf("dot-dot segment in %q", u.EscapedPath())
		}
	}
	for name, vs := range req.Header {
		for _, v := range vs {
			if strings.ContainsFunc(name+v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
				return fmt.Errorf("header %q: control character in %q", name, v)
			}
		}
	}
	return nil
}

// fuzzSmallSpec has a parameter of every location, a path key with a
// query template and a form body.
const fuzzSmallSpec = `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a/{x}/b.json:
    get:
      parameters:
        - {name: x, in: path, required: true, schema: {type: string}}
        - {name: X-H, in: header, schema: {type: string}}
        - {name: c, in: cookie, schema: {type: string}}
        - {name: q, in: query, schema: {type: object}, style: deepObject, explode: true}
      responses: {"200": {description: ok}}
  /alerts?lat={lat}&fixed=1:
    post:
      parameters: [{name: lat, in: path, required: true, schema: {type: number}}]
      requestBody: {content: {application/x-www-form-urlencoded: {schema: {type: object, properties: {p: {type: string}}}}}}
      responses: {"200": {description: ok}}
`

// FuzzSpecCalls drives the whole way from spec bytes to upstream request:
// a fuzzed spec is loaded, every operation selected, the tools built, and
// up to eight of them called with fuzzed arguments through the runtime
// (arguments checked, request built, answer shaped). Nothing may panic,
// hang or take unbounded time, and every request goes to the configured
// upstream's origin, under its base path, with clean headers.
func FuzzSpecCalls(f *testing.F) {
	for _, name := range []string{"petstore-minimal.2.0.json", "xkcd.3.0.json", "form-data.3.0.yaml", "file-uploads.3.0.yaml",
		"callbacks.3.0.yaml", "server-variables.3.0.yaml", "schema-circular.3.0.yaml", "security-schemes.3.1.yaml", "petstore.3.0.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "specs", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, `{"petId":"../../x","id":1,"limit":"//evil.example","body":{"name":"a\r\nb"}}`)
	}
	small := fuzzSmallSpec
	f.Add([]byte(small), `{"x":"ok","lat":1,"body":{"p":"v"}}`)
	for _, args := range []string{
		`{"x":"..","X-H":"v\r\nInjected: 1","c":"a;b","q":{"k":{"j":"v"}}}`,
		`{"x":"%2e%2e/%2e%2e","lat":1e400,"body":{"p":"\u0000"}}`,
		`{"x":"@evil.example:80","lat":"1&x=2","body":"p=1"}`,
		`{"x":"\uff0e\uff0e","X-H":"\u2028","c":"\u0000"}`,
		`{}`, `null`, `[]`, `{"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
	} {
		f.Add([]byte(small), args)
	}
	f.Fuzz(func(t *testing.T, spec []byte, args string) {
		if len(spec) > 64<<10 || len(args) > 16<<10 {
			return
		}
		start := time.Now()
		res, err := specloader.LoadData(t.Context(), spec, nil, specloader.Options{})
		if err != nil {
			return
		}
		if res.Doc == nil {
			t.Fatal("LoadData returned neither a document nor an error")
		}
		ops, err := whitelist.All().Select(res.Doc)
		if err != nil {
			return
		}
		d := &recordingDoer{}
		cat, err := bridge.New(ops, bridge.Options{BaseURL: fuzzUpstream, Client: d, Timeout: 5 * time.Second,
			Credentials: bridge.Credentials{BearerToken: "tok-fuzz-123456"}})
		if err != nil {
			return
		}
		rt := bridge.NewRuntime(cat)
		var given map[string]any
		json.Unmarshal([]byte(args), &given)
		for i, tool := range cat.Tools() {
			if i == 8 {
				break
			}
			raw := toolArgs(t, tool, given)
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: tool.Name(), Args: raw, Transport: "fuzz"})
			if err != nil && !errors.Is(err, bridge.ErrUnknownTool) {
				t.Logf("%s: %v", tool.Name(), err)
			}
			if err == nil && (out == nil || out.Result == nil) {
				t.Fatalf("%s: no outcome and no error", tool.Name())
			}
		}
		if d.bad != nil {
			t.Fatalf("args %s: %v", args, d.bad)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Fatalf("spec of %d bytes took %v from load to calls", len(spec), took)
		}
	})
}

// TestFuzzSpecCallsReach keeps FuzzSpecCalls honest: its small spec's
// tools reach the (recording) upstream with ordinary arguments, so its
// checks run on real requests.
func TestFuzzSpecCallsReach(t *testing.T) {
	res, err := specloader.LoadData(t.Context(), []byte(fuzzSmallSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	d := &recordingDoer{}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: fuzzUpstream, Client: d})
	if err != nil {
		t.Fatal(err)
	}
	rt := bridge.NewRuntime(cat)
	for _, tool := range cat.Tools() {
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: tool.Name(), Args: toolArgs(t, tool, map[string]any{"x": "ok", "lat": 1, "body": map[string]any{"p": "v"}, "X-H": "h", "c": "c", "q": map[string]any{"k": "v"}})})
		if err != nil || out.Result.IsError {
			t.Errorf("%s: %v %+v", tool.Name(), err, out)
		}
	}
	if d.sent != 2 || d.bad != nil {
		t.Errorf("%d requests sent (want 2), violation %v", d.sent, d.bad)
	}
}

// toolArgs fits the fuzzed arguments to tool: each property of its input
// schema takes the given value of its name, or else one of the given
// values (round robin, by sorted name), so fuzzed values reach every
// parameter of every tool.
func toolArgs(t *testing.T, tool *bridge.Tool, given map[string]any) json.RawMessage {
	t.Helper()
	def, err := json.Marshal(tool.Def().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	json.Unmarshal(def, &in)
	var vals []any
	for _, k := range slices.Sorted(maps.Keys(given)) {
		vals = append(vals, given[k])
	}
	args := map[string]any{}
	for i, p := range slices.Sorted(maps.Keys(in.Properties)) {
		if v, ok := given[p]; ok {
			args[p] = v
		} else if len(vals) > 0 {
			args[p] = vals[i%len(vals)]
		}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
