package transport_test

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/transport"
)

const stdioInit = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// answer is what a test reads of one JSON-RPC response on stdout.
type answer struct {
	ID   string // the raw id: `1`, `"a"`, `null`
	Code int64  // the error code; 0 for a result
}

// runStdio serves input (every line the client sends, then EOF) and returns
// the answers in a stable order. Every line on stdout must be a JSON-RPC
// response (or a batch of them): nothing else may reach it.
func runStdio(t *testing.T, opts transport.StdioOptions, input string) []answer {
	t.Helper()
	var out bytes.Buffer
	err := transport.ServeStdioWithOptions(t.Context(), newMCPServer(newGate()), io.NopCloser(strings.NewReader(input)), nopWC{&out}, opts, nil)
	if err != nil {
		t.Fatalf("ServeStdioWithOptions = %v; want nil (the session must survive bad input)", err)
	}
	var got []answer
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		type resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code    int64  `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		var batch []resp
		line := sc.Bytes()
		if len(line) > 0 && line[0] == '[' {
			if err := json.Unmarshal(line, &batch); err != nil {
				t.Fatalf("stdout line %q is not a JSON-RPC batch response: %v", line, err)
			}
		} else {
			var r resp
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("stdout line %q is not JSON: %v", line, err)
			}
			batch = []resp{r}
		}
		for _, r := range batch {
			if r.JSONRPC != "2.0" || len(r.ID) == 0 || (r.Result == nil) == (r.Error == nil) {
				t.Fatalf("stdout line %q is not a JSON-RPC response", line)
			}
			a := answer{ID: string(r.ID)}
			if r.Error != nil {
				a.Code = r.Error.Code
				if r.Error.Message == "" {
					t.Errorf("error response %q has no message", line)
				}
			}
			got = append(got, a)
		}
	}
	slices.SortFunc(got, func(a, b answer) int { return cmp.Or(strings.Compare(a.ID, b.ID), cmp.Compare(a.Code, b.Code)) })
	return got
}

func ping(id string) string { return `{"jsonrpc":"2.0","id":"` + id + `","method":"ping"}` }

// TestStdioBadInput sends each kind of input that used to end (or wedge)
// the session, followed by a ping: the bad line gets its JSON-RPC error,
// with the id when the line shows one, and the ping is still answered.
func TestStdioBadInput(t *testing.T) {
	deep := func(n int) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","pad":` +
			strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`
	}
	tests := []struct {
		name string
		line string
		want []answer // the answers to line
	}{
		{"not JSON", `hello`, []answer{{"null", -32700}}},
		{"truncated JSON", `{"jsonrpc":"2.0","id":3,"method":"tools/list"`, []answer{{"3", -32700}}},
		{"two values on one line", `{"jsonrpc":"2.0","id":3,"method":"ping"} {"jsonrpc":"2.0","id":4,"method":"ping"}`, []answer{{"3", -32700}}},
		{"JSON that is not an object", `42`, []answer{{"null", -32600}}},
		{"no jsonrpc tag", `{"id":5,"method":"ping"}`, []answer{{"5", -32600}}},
		{"id of a wrong type", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, []answer{{"null", -32600}}},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, []answer{{"null", -32600}}},
		{"batch of calls", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"tools/list"}]`,
			[]answer{{`"b"`, -32600}, {"1", -32600}}},
		{"batch of notifications", `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, []answer{{"null", -32600}}},
		{"empty batch", `[]`, []answer{{"null", -32600}}},
		{"nested deeper than the default 64", deep(64), []answer{{"7", -32600}}},
		{"nested 2,000 deep", deep(2000), []answer{{"7", -32600}}},
		{"brackets inside strings do not count", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` +
			strings.Repeat("[{", 200) + `"}}}`, []answer{{"8", 0}}},
		{"nested at the limit", deep(60), []answer{{"7", 0}}}, // 4 levels of envelope + 60
		{"blank line", ``, nil},
		{"CRLF line ending", ping("crlf") + "\r", []answer{{`"crlf"`, 0}}},
		{"byte order mark", "\xef\xbb\xbf" + ping("bom"), []answer{{`"bom"`, 0}}},
		// go-sdk would answer 1.5 as 1 and 2^64 as -2^63: refused instead.
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, []answer{{"1.5", -32600}}},
		{"id beyond int64", `{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`, []answer{{"12345678901234567890", -32600}}},
		{"id beyond 2^53", `{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`, []answer{{"9007199254740993", -32600}}},
		{"id 1e3", `{"jsonrpc":"2.0","id":1e3,"method":"ping"}`, []answer{{"1e3", -32600}}},
		{"id 2^53", `{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, []answer{{"9007199254740992", 0}}},
		// go-sdk would answer these under U+FFFD: refused instead.
		{"id with a lone surrogate", `{"jsonrpc":"2.0","id":"a\ud800","method":"ping"}`, []answer{{"null", -32600}}},
		{"id with invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"a\xff\",\"method\":\"ping\"}", []answer{{"null", -32600}}},
		{"id with U+FFFD", `{"jsonrpc":"2.0","id":"a\ufffd�","method":"ping"}`, []answer{{`"a��"`, 0}}},
		{"id with a lone low surrogate", `{"jsonrpc":"2.0","id":"\udc00x","method":"ping"}`, []answer{{"null", -32600}}},
		{"id with a high surrogate then another", `{"jsonrpc":"2.0","id":"\ud800\ud800","method":"ping"}`, []answer{{"null", -32600}}},
		{"id with an escaped backslash before u", `{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}`, []answer{{`"\\ud800"`, 0}}},
		{"id with a surrogate pair", `{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"ping"}`, []answer{{`"😀"`, 0}}},
		// JSON-RPC 2.0 Â§5: Invalid Request, with the id when it can be read.
		{"id and nothing else", `{"jsonrpc":"2.0","id":16}`, []answer{{"16", -32600}}},
		{"string id and nothing else", `{"jsonrpc":"2.0","id":"s"}`, []answer{{`"s"`, -32600}}},
		{"null id on a call", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, []answer{{"null", -32600}}},
		{"null id on a notification", `{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}`, []answer{{"null", -32600}}},
		{"null id, other case", `{"jsonrpc":"2.0","ID":null,"method":"notifications/initialized"}`, nil}, // not an id: go-sdk reads keys case-sensitively
		{"a response is not answered", `{"jsonrpc":"2.0","id":18,"result":null}`, nil},
		{"an error response is not answered", `{"jsonrpc":"2.0","id":19,"error":{"code":1,"message":"x"}}`, nil},
		// go-sdk answers initialize params it cannot decode with code 0.
		{"initialize params an array", `{"jsonrpc":"2.0","id":20,"method":"initialize","params":[]}`, []answer{{"20", -32602}}},
		{"initialize params null", `{"jsonrpc":"2.0","id":21,"method":"initialize","params":null}`, []answer{{"21", -32602}}},
		{"initialize params a string", `{"jsonrpc":"2.0","params":"x","method":"initialize","id":22}`, []answer{{"22", -32602}}},
		{"initialize protocolVersion a number", `{"jsonrpc":"2.0","id":23,"method":"initialize","params":{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, []answer{{"23", -32602}}},
		{"initialize roots a boolean", `{"jsonrpc":"2.0","id":24,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":true},"clientInfo":{"name":"c","version":"1"}}}`, []answer{{"24", -32602}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := stdioInit + "\n" + tt.line + "\n" + ping("after") + "\n"
			want := append([]answer{{`"after"`, 0}, {`"init"`, 0}}, tt.want...)
			slices.SortFunc(want, func(a, b answer) int { return cmp.Or(strings.Compare(a.ID, b.ID), cmp.Compare(a.Code, b.Code)) })
			if diff := gocmp.Diff(want, runStdio(t, transport.StdioOptions{}, input)); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStdioLastLineWithoutNewline checks the line before EOF: answered when
// complete, refused when truncated, and either way ServeStdio returns nil.
func TestStdioLastLineWithoutNewline(t *testing.T) {
	for _, tt := range []struct {
		name, last string
		want       answer
	}{
		{"complete", ping("z-last"), answer{`"z-last"`, 0}},
		{"truncated", `{"jsonrpc":"2.0","id":"z-last","method":"pi`, answer{`"z-last"`, -32700}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := []answer{{`"init"`, 0}, tt.want}
			if diff := gocmp.Diff(want, runStdio(t, transport.StdioOptions{}, stdioInit+"\n"+tt.last)); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStdioMessageSize checks MaxMessageBytes at its boundary, and that the
// id of an oversized message is recovered from its start.
func TestStdioMessageSize(t *testing.T) {
	const max = 1024
	sized := func(id string, n int) string {
		head := `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"echo","arguments":{"text":"`
		tail := `"}}}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	input := strings.Join([]string{stdioInit, sized("at", max), sized("over", max+1), sized("far-over", 10*max), ping("after")}, "\n") + "\n"
	want := []answer{{`"after"`, 0}, {`"at"`, 0}, {`"far-over"`, -32600}, {`"init"`, 0}, {`"over"`, -32600}}
	if diff := gocmp.Diff(want, runStdio(t, transport.StdioOptions{MaxMessageBytes: max}, input)); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
}

// TestStdioMaxJSONDepth checks that the depth limit is configurable.
func TestStdioMaxJSONDepth(t *testing.T) {
	nested := func(id string, n int) string {
		return `{"jsonrpc":"2.0","id":"` + id + `","method":"ping","params":{"_meta":{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`
	}
	input := strings.Join([]string{stdioInit, nested("ok", 4), nested("deep", 5), ping("after")}, "\n") + "\n"
	want := []answer{{`"after"`, 0}, {`"deep"`, -32600}, {`"init"`, 0}, {`"ok"`, 0}}
	if diff := gocmp.Diff(want, runStdio(t, transport.StdioOptions{MaxJSONDepth: 7}, input)); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
}

var xs = bytes.Repeat([]byte("x"), 64<<10)

// endless yields a line of n bytes of 'x' (after an initialize and a
// message prefix), then a newline and a ping, without ever holding the line.
type endless struct {
	head, tail string
	n          int // bytes of the line body left
}

func (e *endless) Read(p []byte) (int, error) {
	switch {
	case e.head != "":
		n := copy(p, e.head)
		e.head = e.head[n:]
		return n, nil
	case e.n > 0:
		n := copy(p[:min(len(p), e.n)], xs)
		e.n -= n
		return n, nil
	case e.tail != "":
		n := copy(p, e.tail)
		e.tail = e.tail[n:]
		return n, nil
	}
	return 0, io.EOF
}

// TestStdioOversizedLineNotBuffered streams a 32 MiB line to a server
// capped at 1 MiB: the line is refused, the session goes on, and the
// memory allocated meanwhile stays far below the line's size.
func TestStdioOversizedLineNotBuffered(t *testing.T) {
	const lineBytes = 32 << 20
	in := &endless{
		head: stdioInit + "\n" + `{"jsonrpc":"2.0","id":"huge","method":"tools/call","params":{"name":"echo","arguments":{"text":"`,
		n:    lineBytes,
		tail: `"}}}` + "\n" + ping("after") + "\n",
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var out bytes.Buffer
	err := transport.ServeStdioWithOptions(t.Context(), newMCPServer(newGate()), io.NopCloser(in), nopWC{&out}, transport.StdioOptions{MaxMessageBytes: 1 << 20}, nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("ServeStdioWithOptions = %v; want nil", err)
	}
	for _, want := range []string{`"id":"huge","error":{"code":-32600`, `"id":"after","result"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > lineBytes/2 {
		t.Errorf("allocated %d bytes while discarding a %d-byte line; want it streamed, not buffered", alloc, lineBytes)
	}
}

// TestStdioOptionsValidation checks that negative limits are refused.
func TestStdioOptionsValidation(t *testing.T) {
	for _, opts := range []transport.StdioOptions{{MaxMessageBytes: -1}, {MaxJSONDepth: -1}} {
		err := transport.ServeStdioWithOptions(t.Context(), newMCPServer(newGate()), io.NopCloser(strings.NewReader("")), nopWC{io.Discard}, opts, nil)
		if err == nil || !strings.Contains(err.Error(), "negative") {
			t.Errorf("ServeStdioWithOptions(%+v) = %v; want a negative-value error", opts, err)
		}
	}
}

// TestStdioManyBadLines checks that a burst of garbage neither ends the
// session nor loses an answer.
func TestStdioManyBadLines(t *testing.T) {
	var b strings.Builder
	b.WriteString(stdioInit + "\n")
	want := []answer{{`"init"`, 0}}
	for i := range 50 {
		fmt.Fprintf(&b, "garbage %d\n%s\n", i, ping(fmt.Sprint("p", i)))
		want = append(want, answer{"null", -32700}, answer{fmt.Sprintf(`"p%d"`, i), 0})
	}
	slices.SortFunc(want, func(a, b answer) int { return cmp.Or(strings.Compare(a.ID, b.ID), cmp.Compare(a.Code, b.Code)) })
	if diff := gocmp.Diff(want, runStdio(t, transport.StdioOptions{}, b.String())); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
}

// TestStdioCallBeforeInitialize: a call before initialize (but ping) is
// refused as an invalid request saying to initialize first; go-sdk
// answered it with error code 0. After initialize the same call is served.
func TestStdioCallBeforeInitialize(t *testing.T) {
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"a","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		ping("p"),
		stdioInit,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"c","method":"tools/list"}`,
	}, "\n") + "\n"
	want := []answer{{`"a"`, -32600}, {`"b"`, -32600}, {`"c"`, 0}, {`"init"`, 0}, {`"p"`, 0}}
	if diff := gocmp.Diff(want, runStdio(t, transport.StdioOptions{}, input)); diff != "" {
		t.Errorf("answers mismatch (-want +got):\n%s", diff)
	}
}
