package zapredact_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcpbridge/mcpbridge/sanitizer"
	"github.com/mcpbridge/mcpbridge/sanitizer/zapredact"
)

const (
	secret = "upstream-S3cr3t-key"
	ghTok  = "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	mask   = sanitizer.Mask
)

func setup(t *testing.T, level zapcore.Level) (*zap.Logger, *observer.ObservedLogs, *sanitizer.Redactor) {
	t.Helper()
	r, err := sanitizer.New(sanitizer.Rules{Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(level)
	return zap.New(zapredact.Wrap(core, r)), logs, r
}

// richError formats differently with %+v, as github.com/pkg/errors does.
type richError struct{ msg, stack string }

func (e richError) Error() string { return e.msg }
func (e richError) Format(s fmt.State, verb rune) {
	if verb == 'v' && s.Flag('+') {
		fmt.Fprint(s, e.msg+"\n"+e.stack)
		return
	}
	fmt.Fprint(s, e.msg)
}

// groupError is an error group as go.uber.org/multierr makes them.
type groupError []error

func (g groupError) Error() string   { return "several errors" }
func (g groupError) Errors() []error { return g }

type stringerVal struct{ s string }

func (v stringerVal) String() string { return v.s }

type creds struct{ user, password, note string }

func (c creds) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	enc.AddString("user", c.user)
	enc.AddString("password", c.password)
	enc.AddInt("api_key", 1234)
	enc.AddString("note", c.note)
	return enc.AddObject("inner", zapcore.ObjectMarshalerFunc(func(e zapcore.ObjectEncoder) error {
		e.AddString("token", "t")
		e.AddByteString("b", []byte("x "+secret))
		return nil
	}))
}

func TestWrap(t *testing.T) {
	log, logs, _ := setup(t, zapcore.DebugLevel)
	log.With(zap.String("ctx", "c "+secret), zap.String("session_id", "s1")).
		Info("calling with "+secret+" and Bearer abcdefghijklmnop",
			zap.String("url", "https://x/?k="+secret),
			zap.String("password", "hunter2"),
			zap.Int("api_key", 42),
			zap.String("token_type", "bearer"),
			zap.Int("status", 502),
			zap.ByteString("raw", []byte(`{"m":"`+secret+`"}`)),
			zap.Binary("bin", []byte("\x00\x01"+secret)),
			zap.Error(errors.New("dial: "+ghTok)),
			zap.NamedError("rich", richError{"rich " + secret, "at main.go:1 " + ghTok}),
			zap.NamedError("group", groupError{errors.New("a " + secret), nil, errors.New("b")}),
			zap.Stringer("str", stringerVal{"s " + secret}),
			zap.Any("any", map[string]any{"token": "x", "msg": "m " + secret, "n": 1}),
			zap.Strings("list", []string{"ok", secret}),
			zap.Object("creds", creds{"bob", "pw", "n " + secret}),
			zap.Duration("took", time.Second),
			zap.String(ghTok, "key holds a token"),
		)
	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("%d entries, want 1", len(entries))
	}
	e := entries[0]
	if want := "calling with " + mask + " and Bearer " + mask; e.Message != want {
		t.Errorf("message = %q, want %q", e.Message, want)
	}
	got := e.ContextMap()
	anyJSON, _ := got["any"].(json.RawMessage)
	delete(got, "any")
	want := map[string]any{
		"ctx":         "c " + mask,
		"session_id":  mask,
		"url":         "https://x/?k=" + mask,
		"password":    mask,
		"api_key":     mask,
		"token_type":  "bearer",
		"status":      int64(502),
		"raw":         `{"m":"` + mask + `"}`,
		"bin":         []byte("\x00\x01" + strings.Repeat("*", len(secret))),
		"error":       "dial: " + mask,
		"rich":        "rich " + mask,
		"richVerbose": "rich " + mask + "\nat main.go:1 " + mask,
		"group":       "several errors",
		"groupCauses": []any{map[string]any{"error": "a " + mask}, map[string]any{"error": "b"}},
		"str":         "s " + mask,
		"list":        []any{"ok", mask},
		"creds": map[string]any{"user": "bob", "password": mask, "api_key": mask, "note": "n " + mask,
			"inner": map[string]any{"token": mask, "b": "x " + mask}},
		"took": time.Second,
		mask:   "key holds a token",
	}
	for k, w := range want {
		if g := fmt.Sprint(got[k]); g != fmt.Sprint(w) {
			t.Errorf("field %q = %#v, want %#v", k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected field %q = %#v", k, got[k])
		}
	}
	var anyVal map[string]any
	if err := json.Unmarshal(anyJSON, &anyVal); err != nil {
		t.Fatalf("zap.Any field: %v (%s)", err, anyJSON)
	}
	if anyVal["token"] != mask || anyVal["msg"] != "m "+mask || anyVal["n"] != 1.0 {
		t.Errorf("zap.Any field = %s", anyJSON)
	}
}

// TestWrapEncoded checks the bytes a JSON encoder writes: nothing of the
// secret, in any field type, reaches the output.
func TestWrapEncoded(t *testing.T) {
	r, err := sanitizer.New(sanitizer.Rules{Secrets: []string{secret}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig())
	log := zap.New(zapredact.Wrap(zapcore.NewCore(enc, zapcore.AddSync(&buf), zapcore.DebugLevel), r), zap.AddStacktrace(zapcore.ErrorLevel))
	log.Error("boom "+secret,
		zap.Any("err", fmt.Errorf("wrapped: %w", errors.New(secret))),
		zap.Reflect("r", struct{ A, Password string }{secret, "p"}),
		zap.Binary("b", []byte(secret)),
		zap.Inline(creds{"u", "p", secret}),
		zap.Dict("d", zap.String("x", secret)),
		zap.Stringers("ss", []stringerVal{{secret}}),
		zap.Errors("errs", []error{errors.New(secret)}),
	)
	out := buf.String()
	for _, form := range []string{secret, base64.StdEncoding.EncodeToString([]byte(secret))} {
		if strings.Contains(out, form) {
			t.Errorf("output holds %q:\n%s", form, out)
		}
	}
	if !strings.Contains(out, `"Password":"`+mask+`"`) || !strings.Contains(out, `"password":"`+mask+`"`) {
		t.Errorf("sensitive keys not masked:\n%s", out)
	}
}

// TestWrapHonoursCheck: levels and sampling of the wrapped core still
// decide, and a Tee branch at another level is not written to.
func TestWrapHonoursCheck(t *testing.T) {
	r, _ := sanitizer.New(sanitizer.Rules{})
	obs, logs := observer.New(zapcore.InfoLevel)
	sampled := zapcore.NewSamplerWithOptions(obs, time.Hour, 1, 0)
	log := zap.New(zapredact.Wrap(sampled, r))
	log.Debug("not enabled")
	for range 3 {
		log.Info("same message")
	}
	if n := logs.Len(); n != 1 {
		t.Errorf("%d entries logged, want 1 (Debug disabled, the rest sampled)", n)
	}

	debug, dlogs := observer.New(zapcore.DebugLevel)
	errs, elogs := observer.New(zapcore.ErrorLevel)
	tee := zap.New(zapredact.Wrap(zapcore.NewTee(debug, errs), r))
	tee.Info("info " + ghTok)
	if dlogs.Len() != 1 || elogs.Len() != 0 {
		t.Errorf("Tee: %d debug, %d error entries; want 1, 0", dlogs.Len(), elogs.Len())
	}
	if m := dlogs.All()[0].Message; m != "info "+mask {
		t.Errorf("Tee message = %q", m)
	}
}

// TestWrapDirectWrite: a caller writing to the core without Check is
// redacted too, and its fields slice is left alone.
func TestWrapDirectWrite(t *testing.T) {
	r, _ := sanitizer.New(sanitizer.Rules{Secrets: []string{secret}})
	obs, logs := observer.New(zapcore.DebugLevel)
	c := zapredact.Wrap(obs, r)
	fields := []zapcore.Field{zap.String("k", secret), zap.Int("n", 1)}
	if err := c.Write(zapcore.Entry{Message: secret}, fields); err != nil {
		t.Fatal(err)
	}
	e := logs.All()[0]
	if e.Message != mask || e.ContextMap()["k"] != mask {
		t.Errorf("direct Write: message %q, k %v", e.Message, e.ContextMap()["k"])
	}
	if fields[0].String != secret {
		t.Errorf("the caller's fields were modified")
	}
	// Nil redactor: the default rules.
	obs2, logs2 := observer.New(zapcore.DebugLevel)
	zap.New(zapredact.Wrap(obs2, nil)).Info("x", zap.String("password", "p"))
	if v := logs2.All()[0].ContextMap()["password"]; v != mask {
		t.Errorf("Wrap(core, nil): password = %v", v)
	}
}

// nilErr panics in Error when nil, as careless error types do.
type nilErr struct{ msg string }

func (e *nilErr) Error() string { return e.msg }

func TestWrapNilErrorAndStringer(t *testing.T) {
	log, logs, _ := setup(t, zapcore.DebugLevel)
	var e *nilErr
	var s *stringerPtr
	log.Info("x", zap.Error(e), zap.Stringer("s", s))
	got := logs.All()[0].ContextMap()
	if got["error"] != "<nil>" || got["s"] != "<nil>" {
		t.Errorf("nil error / stringer logged as %v / %v, want <nil>", got["error"], got["s"])
	}
}

type stringerPtr struct{ s string }

func (v *stringerPtr) String() string { return v.s }

// TestWrapEncodedQueryPair: a log line quoting a URL whose credential pair
// is percent-encoded (a name with an escaped byte, or a callback URL quoted
// in another's query) carries the mask, not the credential.
func TestWrapEncodedQueryPair(t *testing.T) {
	log, logs, _ := setup(t, zapcore.DebugLevel)
	log.Warn("redirect to https://h.example/x?api%5Fkey=Zx9Qw8Er7Ty6&page=2",
		zap.String("location", "https://a.example/login?next=%2Fcb%3Faccess_token%3DZx9Qw8Er7Ty6%26page%3D2"))
	e := logs.All()[0]
	if want := "redirect to https://h.example/x?api%5Fkey=" + mask + "&page=2"; e.Message != want {
		t.Errorf("message = %q, want %q", e.Message, want)
	}
	if got, want := e.ContextMap()["location"], "https://a.example/login?next=%2Fcb%3Faccess_token%3D"+mask+"%26page%3D2"; got != want {
		t.Errorf("location = %q, want %q", got, want)
	}
}
