package observe_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/observe"
)

// secrets are argument values that must never reach a usage record.
var secrets = []string{"item-SECRET-id-41", "widget-SECRET-name-42", "hunter2-SECRET-43", "SECRET-COLOR-44"}

// secretCalls pass every secret as an argument: in a path parameter, in a
// body, and in a value that fails validation (the validation reason may
// quote it).
func secretCalls(t *testing.T) []*bridge.Call {
	caller := &bridge.Identity{ID: "api-key:1", Remote: "10.0.0.9:5555"}
	return []*bridge.Call{
		{Tool: "getItem", Args: args(t, map[string]any{"id": secrets[0]}), Caller: caller, Transport: "http"},
		{Tool: "createItem", Args: args(t, map[string]any{"body": map[string]any{"name": secrets[1], "password": secrets[2]}}), Caller: caller, Transport: "http"},
		{Tool: "getItem", Args: args(t, map[string]any{"id": "a1", "color": secrets[3]}), Caller: caller, Transport: "http"},
	}
}

// entryText is everything an entry carries, as text.
func entryText(e observer.LoggedEntry) string {
	return fmt.Sprintf("%s %v", e.Message, e.ContextMap())
}

// TestUsageNeverLogsArguments checks the default record: the fields, and
// that no argument value appears in any of them.
func TestUsageNeverLogsArguments(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	rt := newRuntime(t, observe.Usage(zap.New(core), observe.UsageOptions{}))
	for _, c := range secretCalls(t) {
		call(t, rt, c)
	}
	call(t, rt, &bridge.Call{Tool: "flaky", Caller: &bridge.Identity{Remote: "10.0.0.7:1234"}, Transport: "rest"})
	call(t, rt, &bridge.Call{Tool: "ping", Caller: bridge.Local, Transport: "stdio"})

	entries := logs.AllUntimed()
	if len(entries) != 5 {
		t.Fatalf("got %d records, want 5: %v", len(entries), entries)
	}
	for _, e := range entries {
		text := entryText(e)
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("record %s carries the argument value %q", text, s)
			}
		}
		if e.Level != zapcore.InfoLevel || e.Message != "tool call" {
			t.Errorf("record %s: level %s message %q, want info \"tool call\"", text, e.Level, e.Message)
		}
	}

	// Durations vary: check they are there, then compare the rest.
	var got []map[string]any
	for _, e := range entries {
		m := e.ContextMap()
		if d, ok := m["duration"].(time.Duration); !ok || d <= 0 {
			t.Errorf("record %v: duration %v, want > 0", m, m["duration"])
		}
		delete(m, "duration")
		if _, ok := m["upstream_ms"]; ok {
			if ms, _ := m["upstream_ms"].(float64); ms < 0 {
				t.Errorf("record %v: negative upstream_ms", m)
			}
			m["upstream_ms"] = "set"
		}
		got = append(got, m)
	}
	bodyLen := func(c *bridge.Call) int64 { return int64(len(c.Args)) }
	calls := secretCalls(t)
	want := []map[string]any{
		{"tool": "getItem", "caller": "api-key:1", "transport": "http", "status": int64(200), "outcome": "ok",
			"upstream_ms": "set", "bytes_in": bodyLen(calls[0]), "bytes_out": int64(len(itemBody)), "retries": int64(0)},
		{"tool": "createItem", "caller": "api-key:1", "transport": "http", "status": int64(201), "outcome": "ok",
			"upstream_ms": "set", "bytes_in": bodyLen(calls[1]), "bytes_out": int64(len(`{"id":"b2"}`)), "retries": int64(0)},
		{"tool": "getItem", "caller": "api-key:1", "transport": "http", "status": int64(0), "outcome": "bad_arguments",
			"bytes_in": bodyLen(calls[2]), "bytes_out": int64(0), "retries": int64(0)},
		{"tool": "flaky", "caller": "10.0.0.7:1234", "transport": "rest", "status": int64(200), "outcome": "ok",
			"upstream_ms": "set", "bytes_in": int64(0), "bytes_out": int64(len(`{"ok":true}`)), "retries": int64(1)},
		{"tool": "ping", "caller": "local", "transport": "stdio", "status": int64(0), "outcome": "ok",
			"bytes_in": int64(0), "bytes_out": int64(0), "retries": int64(0)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage records mismatch (-want +got):\n%s", diff)
	}
}

// TestUsageLogArguments checks that arguments, when asked for, are logged
// only through Redact, and never without it.
func TestUsageLogArguments(t *testing.T) {
	redact := func(s string) string {
		for _, secret := range secrets {
			s = strings.ReplaceAll(s, secret, "[REDACTED]")
		}
		return s
	}
	tests := []struct {
		name      string
		opts      observe.UsageOptions
		wantArgs  []any // the arguments field per call; nil: absent
		wantWarns int
	}{
		{"redacted", observe.UsageOptions{LogArguments: true, Redact: redact}, []any{
			`{"id":"[REDACTED]"}`,
			`{"body":{"name":"[REDACTED]","password":"[REDACTED]"}}`,
			`{"color":"[REDACTED]","id":"a1"}`,
		}, 0},
		{"cut", observe.UsageOptions{LogArguments: true, Redact: redact, MaxArgumentBytes: 12}, []any{
			`{"id":"[REDA…`, `{"body":{"na…`, `{"color":"[R…`,
		}, 0},
		{"no redactor", observe.UsageOptions{LogArguments: true}, []any{nil, nil, nil}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zap.InfoLevel)
			rt := newRuntime(t, observe.Usage(zap.New(core), tt.opts))
			if n := logs.FilterLevelExact(zapcore.WarnLevel).Len(); n != tt.wantWarns {
				t.Errorf("%d warnings at construction, want %d", n, tt.wantWarns)
			}
			for _, c := range secretCalls(t) {
				call(t, rt, c)
			}
			var got []any
			for _, e := range logs.FilterMessage("tool call").AllUntimed() {
				for _, s := range secrets {
					if strings.Contains(entryText(e), s) {
						t.Errorf("record %s carries the argument value %q", entryText(e), s)
					}
				}
				got = append(got, e.ContextMap()["arguments"])
			}
			if diff := cmp.Diff(tt.wantArgs, got); diff != "" {
				t.Errorf("arguments mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUsageRefused checks the record of a call a middleware refused:
// kind and retry_after from the outcome, no upstream fields.
func TestUsageRefused(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	refuse := func(bridge.Invoker) bridge.Invoker {
		return bridge.InvokerFunc(func(context.Context, *bridge.Call) (*bridge.Outcome, error) {
			return bridge.Reject(bridge.Busy, "busy", 2*time.Second), nil
		})
	}
	rt := newRuntime(t, observe.Usage(zap.New(core), observe.UsageOptions{}), refuse)
	call(t, rt, &bridge.Call{Tool: "getItem", Args: []byte(`{"id":"a1"}`), Transport: "http"})
	m := logs.All()[0].ContextMap()
	delete(m, "duration")
	want := map[string]any{"tool": "getItem", "caller": "", "transport": "http", "status": int64(0), "outcome": "busy",
		"bytes_in": int64(11), "bytes_out": int64(0), "retries": int64(0), "retry_after": 2 * time.Second}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("record mismatch (-want +got):\n%s", diff)
	}
}

func TestCut(t *testing.T) {
	tests := []struct {
		s    string
		max  int
		want string
	}{
		{"abcdef", 6, "abcdef"},
		{"abcdef", 3, "abc…"},
		{"abcdef", -1, "abcdef"},
		{"aé", 2, "a…"}, // é is 2 bytes: never split a rune
		{"éé", 1, "…"},
	}
	for _, tt := range tests {
		if got := observe.Cut(tt.s, tt.max); got != tt.want {
			t.Errorf("cut(%q, %d) = %q, want %q", tt.s, tt.max, got, tt.want)
		}
	}
}
