// Package zapredact wraps a zapcore.Core so that everything logged through
// it is redacted by a [sanitizer.Redactor] before any core writes it: no
// call site can forget to redact.
//
// What is redacted, with [sanitizer.Redactor.RedactString] unless said
// otherwise:
//
//   - the entry's message and stack trace;
//   - every field whose key is a sensitive key ([sanitizer.Redactor.IsSensitiveKey]):
//     its value becomes [sanitizer.Mask], whatever its type;
//   - the keys of fields, string fields (zap.String, zap.Strings, ...),
//     zap.ByteString, and zap.Binary (with the binary rule of
//     [sanitizer.Redactor.RedactBody]: same length);
//   - errors (zap.Error, zap.Errors, zap.NamedError): the message, the
//     verbose form zap logs for rich errors ("errorVerbose", %+v) and the
//     causes of error groups ("errorCauses");
//   - stringers (zap.Stringer, and zap.Any of a fmt.Stringer);
//   - reflected values (zap.Any of maps, structs...): encoded to JSON,
//     redacted with [sanitizer.Redactor.RedactJSON] and logged as that JSON
//     (a json.RawMessage);
//   - objects and arrays (zap.Object, zap.Array, zap.Dict, zap.Inline,
//     zap.Objects...): what they add to the encoder, with the rules above,
//     nested ones included.
//
// Numbers, booleans, times and durations are kept unless their key is
// sensitive. The redaction runs as a [zapcore.CheckedEntry.Before] hook, so
// the wrapped core's own Check (levels, sampling, a Tee's per-core levels)
// is honoured; as a consequence, when the wrapped core is one branch of a
// zapcore.NewTee, the other branches that log the same entry receive the
// redacted entry too.
package zapredact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// Wrap returns a core that redacts entries and fields with r before c, or
// any core logging the same entry, writes them. A nil r means the default
// rules (sanitizer.Rules{}).
func Wrap(c zapcore.Core, r *sanitizer.Redactor) zapcore.Core {
	if r == nil {
		var err error
		if r, err = sanitizer.New(sanitizer.Rules{}); err != nil {
			panic("zapredact: the default rules do not build: " + err.Error())
		}
	}
	w := &core{Core: c, r: r}
	w.hook = w.redactEntry
	return w
}

type core struct {
	zapcore.Core
	r    *sanitizer.Redactor
	hook zapcore.CheckPreWriteHook // w.redactEntry, bound once
}

func (c *core) With(fields []zapcore.Field) zapcore.Core {
	w := &core{Core: c.Core.With(redactFields(c.r, fields)), r: c.r}
	w.hook = w.redactEntry
	return w
}

func (c *core) Check(ent zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if !c.Core.Enabled(ent.Level) {
		return ce
	}
	out := c.Core.Check(ent, ce)
	if out == nil {
		return nil
	}
	return out.Before(ent, c.hook)
}

// Write redacts and writes: it serves callers that write to the core
// directly, without Check.
func (c *core) Write(ent zapcore.Entry, fields []zapcore.Field) error {
	ent, fields = c.redactEntry(ent, fields)
	return c.Core.Write(ent, fields)
}

func (c *core) redactEntry(ent zapcore.Entry, fields []zapcore.Field) (zapcore.Entry, []zapcore.Field) {
	ent.Message = c.r.RedactString(ent.Message)
	if ent.Stack != "" {
		ent.Stack = c.r.RedactString(ent.Stack)
	}
	return ent, redactFields(c.r, fields)
}

// redactFields returns fields redacted; the caller's slice is never
// modified, and returned as is when nothing changes.
func redactFields(r *sanitizer.Redactor, fields []zapcore.Field) []zapcore.Field {
	var out []zapcore.Field
	for i, f := range fields {
		g, changed := redactField(r, f)
		if changed && out == nil {
			out = make([]zapcore.Field, len(fields))
			copy(out, fields)
		}
		if out != nil {
			out[i] = g
		}
	}
	if out == nil {
		return fields
	}
	return out
}

// redactField returns f redacted, and whether it differs.
func redactField(r *sanitizer.Redactor, f zapcore.Field) (zapcore.Field, bool) {
	switch f.Type {
	case zapcore.SkipType, zapcore.NamespaceType:
		return f, false
	case zapcore.InlineMarshalerType:
		// Inline fields have no key of their own.
		f.Interface = objectRedactor{f.Interface.(zapcore.ObjectMarshaler), r}
		return f, true
	}
	key := r.RedactString(f.Key)
	if r.IsSensitiveKey(f.Key) {
		return zapcore.Field{Key: key, Type: zapcore.StringType, String: sanitizer.Mask}, true
	}
	changed := key != f.Key
	f.Key = key
	switch f.Type {
	case zapcore.StringType:
		s := r.RedactString(f.String)
		changed = changed || s != f.String
		f.String = s
	case zapcore.ByteStringType:
		b, n := r.RedactBody("text/plain", f.Interface.([]byte))
		if n > 0 {
			f.Interface, changed = b, true
		}
	case zapcore.BinaryType:
		b, n := r.RedactBody("application/octet-stream", f.Interface.([]byte))
		if n > 0 {
			f.Interface, changed = b, true
		}
	case zapcore.ErrorType:
		f.Interface, changed = wrapError(r, f.Interface.(error)), true
	case zapcore.StringerType:
		f.Interface, changed = stringer{f.Interface.(fmt.Stringer), r}, true
	case zapcore.ReflectType:
		raw, err := reflected(r, f.Interface)
		if err != nil {
			return zapcore.Field{Key: key + "Error", Type: zapcore.StringType, String: r.RedactString(err.Error())}, true
		}
		f.Interface, changed = raw, true
	case zapcore.ObjectMarshalerType:
		f.Interface, changed = objectRedactor{f.Interface.(zapcore.ObjectMarshaler), r}, true
	case zapcore.ArrayMarshalerType:
		f.Interface, changed = arrayRedactor{f.Interface.(zapcore.ArrayMarshaler), r}, true
	}
	return f, changed
}

// reflected encodes v as zap's reflected encoder would (encoding/json,
// HTML characters kept) and redacts it.
func reflected(r *sanitizer.Redactor, v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out, _ := r.RedactBody("application/json", bytes.TrimRight(b.Bytes(), "\n"))
	return json.RawMessage(out), nil
}

// isNilPointer reports whether v is a nil pointer (zap logs "<nil>" for a
// nil error or stringer whose method panics).
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// stringer redacts what a fmt.Stringer says.
type stringer struct {
	s fmt.Stringer
	r *sanitizer.Redactor
}

func (s stringer) String() (out string) {
	defer func() {
		if p := recover(); p != nil {
			if !isNilPointer(s.s) {
				panic(p) // zap reports it as PANIC=
			}
			out = "<nil>"
		}
	}()
	return s.r.RedactString(s.s.String())
}

// wrapError returns err redacted, keeping the interfaces zap looks for: an
// error group (its causes redacted) or a fmt.Formatter (its %+v redacted).
// The wrapper does not unwrap: nothing reaches the unredacted error.
func wrapError(r *sanitizer.Redactor, err error) error {
	e := redactedError{err, r}
	switch err.(type) {
	case interface{ Errors() []error }:
		return redactedGroup{e}
	case fmt.Formatter:
		return redactedFormatter{e}
	}
	return e
}

type redactedError struct {
	err error
	r   *sanitizer.Redactor
}

func (e redactedError) Error() (out string) {
	defer func() {
		if p := recover(); p != nil {
			if !isNilPointer(e.err) {
				panic(p)
			}
			out = "<nil>"
		}
	}()
	return e.r.RedactString(e.err.Error())
}

type redactedFormatter struct{ redactedError }

func (e redactedFormatter) Format(s fmt.State, verb rune) {
	_, _ = io.WriteString(s, e.r.RedactString(fmt.Sprintf(fmt.FormatString(s, verb), e.err)))
}

type redactedGroup struct{ redactedError }

func (e redactedGroup) Errors() []error {
	errs := e.err.(interface{ Errors() []error }).Errors()
	out := make([]error, len(errs))
	for i, c := range errs {
		if c != nil {
			out[i] = wrapError(e.r, c)
		}
	}
	return out
}

// objectRedactor marshals an object through a redacting encoder.
type objectRedactor struct {
	m zapcore.ObjectMarshaler
	r *sanitizer.Redactor
}

func (o objectRedactor) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	return o.m.MarshalLogObject(objectEncoder{enc, o.r})
}

// arrayRedactor marshals an array through a redacting encoder.
type arrayRedactor struct {
	m zapcore.ArrayMarshaler
	r *sanitizer.Redactor
}

func (a arrayRedactor) MarshalLogArray(enc zapcore.ArrayEncoder) error {
	return a.m.MarshalLogArray(arrayEncoder{enc, a.r})
}

// objectEncoder redacts what an ObjectMarshaler adds: keys, strings, the
// values of sensitive keys, nested objects and arrays, reflected values.
type objectEncoder struct {
	zapcore.ObjectEncoder
	r *sanitizer.Redactor
}

// masked reports whether key is sensitive, adding Mask under it if so.
func (e objectEncoder) masked(key string) bool {
	if e.r.IsSensitiveKey(key) {
		e.ObjectEncoder.AddString(e.r.RedactString(key), sanitizer.Mask)
		return true
	}
	return false
}

func (e objectEncoder) key(k string) string { return e.r.RedactString(k) }

func (e objectEncoder) AddString(k, v string) {
	if !e.masked(k) {
		e.ObjectEncoder.AddString(e.key(k), e.r.RedactString(v))
	}
}

func (e objectEncoder) AddByteString(k string, v []byte) {
	if !e.masked(k) {
		b, _ := e.r.RedactBody("text/plain", v)
		e.ObjectEncoder.AddByteString(e.key(k), b)
	}
}

func (e objectEncoder) AddBinary(k string, v []byte) {
	if !e.masked(k) {
		b, _ := e.r.RedactBody("application/octet-stream", v)
		e.ObjectEncoder.AddBinary(e.key(k), b)
	}
}

func (e objectEncoder) AddArray(k string, v zapcore.ArrayMarshaler) error {
	if e.masked(k) {
		return nil
	}
	return e.ObjectEncoder.AddArray(e.key(k), arrayRedactor{v, e.r})
}

func (e objectEncoder) AddObject(k string, v zapcore.ObjectMarshaler) error {
	if e.masked(k) {
		return nil
	}
	return e.ObjectEncoder.AddObject(e.key(k), objectRedactor{v, e.r})
}

func (e objectEncoder) AddReflected(k string, v any) error {
	if e.masked(k) {
		return nil
	}
	raw, err := reflected(e.r, v)
	if err != nil {
		return err
	}
	return e.ObjectEncoder.AddReflected(e.key(k), raw)
}

func (e objectEncoder) AddBool(k string, v bool) {
	if !e.masked(k) {
		e.ObjectEncoder.AddBool(e.key(k), v)
	}
}

func (e objectEncoder) AddDuration(k string, v time.Duration) {
	if !e.masked(k) {
		e.ObjectEncoder.AddDuration(e.key(k), v)
	}
}

func (e objectEncoder) AddTime(k string, v time.Time) {
	if !e.masked(k) {
		e.ObjectEncoder.AddTime(e.key(k), v)
	}
}

func (e objectEncoder) AddComplex128(k string, v complex128) {
	if !e.masked(k) {
		e.ObjectEncoder.AddComplex128(e.key(k), v)
	}
}

func (e objectEncoder) AddComplex64(k string, v complex64) {
	if !e.masked(k) {
		e.ObjectEncoder.AddComplex64(e.key(k), v)
	}
}

func (e objectEncoder) AddFloat64(k string, v float64) {
	if !e.masked(k) {
		e.ObjectEncoder.AddFloat64(e.key(k), v)
	}
}

func (e objectEncoder) AddFloat32(k string, v float32) {
	if !e.masked(k) {
		e.ObjectEncoder.AddFloat32(e.key(k), v)
	}
}

func (e objectEncoder) AddInt(k string, v int)       { e.AddInt64(k, int64(v)) }
func (e objectEncoder) AddInt32(k string, v int32)   { e.AddInt64(k, int64(v)) }
func (e objectEncoder) AddInt16(k string, v int16)   { e.AddInt64(k, int64(v)) }
func (e objectEncoder) AddInt8(k string, v int8)     { e.AddInt64(k, int64(v)) }
func (e objectEncoder) AddUint(k string, v uint)     { e.AddUint64(k, uint64(v)) }
func (e objectEncoder) AddUint32(k string, v uint32) { e.AddUint64(k, uint64(v)) }
func (e objectEncoder) AddUint16(k string, v uint16) { e.AddUint64(k, uint64(v)) }
func (e objectEncoder) AddUint8(k string, v uint8)   { e.AddUint64(k, uint64(v)) }

func (e objectEncoder) AddUintptr(k string, v uintptr) {
	if !e.masked(k) {
		e.ObjectEncoder.AddUintptr(e.key(k), v)
	}
}

func (e objectEncoder) AddInt64(k string, v int64) {
	if !e.masked(k) {
		e.ObjectEncoder.AddInt64(e.key(k), v)
	}
}

func (e objectEncoder) AddUint64(k string, v uint64) {
	if !e.masked(k) {
		e.ObjectEncoder.AddUint64(e.key(k), v)
	}
}

func (e objectEncoder) OpenNamespace(k string) { e.ObjectEncoder.OpenNamespace(e.key(k)) }

// arrayEncoder redacts what an ArrayMarshaler appends.
type arrayEncoder struct {
	zapcore.ArrayEncoder
	r *sanitizer.Redactor
}

func (e arrayEncoder) AppendString(v string) { e.ArrayEncoder.AppendString(e.r.RedactString(v)) }

func (e arrayEncoder) AppendByteString(v []byte) {
	b, _ := e.r.RedactBody("text/plain", v)
	e.ArrayEncoder.AppendByteString(b)
}

func (e arrayEncoder) AppendArray(v zapcore.ArrayMarshaler) error {
	return e.ArrayEncoder.AppendArray(arrayRedactor{v, e.r})
}

func (e arrayEncoder) AppendObject(v zapcore.ObjectMarshaler) error {
	return e.ArrayEncoder.AppendObject(objectRedactor{v, e.r})
}

func (e arrayEncoder) AppendReflected(v any) error {
	raw, err := reflected(e.r, v)
	if err != nil {
		return err
	}
	return e.ArrayEncoder.AppendReflected(raw)
}
