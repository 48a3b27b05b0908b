package schema

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// lazySchema is a tool's JSON Schema, kept as the bytes tools/list sends
// and resolved into a validator on first use. Startup then does no resolving
// (GitHub's 1,223 tools would cost ~0.3 s and tens of MiB), and tools that
// are never called never pay for it.
type Lazy struct {
	raw     json.RawMessage
	once    *sync.Once
	res     **jsonschema.Resolved
	err     *error
	formats *bool  // the schema declares a format the checker asserts
	ints    *bool  // the schema declares the format int32 or int64
	fast    **Fast // formats need the validator
	fastIn  **Fast // formats are annotations
	branchy *bool  // recursive through oneOf/anyOf (RecursiveChoice)
}

// resolved returns the validator, resolving it once. It is safe for
// concurrent use.
func (l *Lazy) Resolved() (*jsonschema.Resolved, error) {
	if l.raw == nil {
		return nil, fmt.Errorf("no schema")
	}
	l.once.Do(func() {
		var s jsonschema.Schema
		if err := json.Unmarshal(l.raw, &s); err != nil {
			*l.err = fmt.Errorf("decoding schema: %w", err)
			return
		}
		r, err := s.Resolve(&jsonschema.ResolveOptions{})
		if err != nil {
			*l.err = fmt.Errorf("resolving schema: %w", err)
			return
		}
		*l.res = r
		*l.formats = UsesFormat(&s)
		*l.ints = UsesIntFormat(&s)
		*l.fast = CompileFast(&s, false)
		*l.fastIn = CompileFast(&s, true)
		*l.branchy = RecursiveChoice(&s)
	})
	return *l.res, *l.err
}

// Fast returns the one-pass checker of the schema ([CompileFast]), nil
// when the schema needs the full validator or does not resolve. Formats
// need the validator: this is the checker for output schemas.
func (l *Lazy) Fast() *Fast {
	if _, err := l.Resolved(); err != nil {
		return nil
	}
	return *l.fast
}

// FastArgs is [Lazy.Fast] for arguments, which jsonschema-go validates
// without asserting formats (neither does the fast checker then).
func (l *Lazy) FastArgs() *Fast {
	if _, err := l.Resolved(); err != nil {
		return nil
	}
	return *l.fastIn
}

// UsesFormat reports whether the schema declares a format that
// jsonschema-go does not assert and JavaScript clients do (see [Check]);
// false when there is no schema or it does not resolve.
func (l *Lazy) UsesFormat() bool {
	if _, err := l.Resolved(); err != nil {
		return false
	}
	return *l.formats
}

// UsesIntFormat reports whether the schema declares the format int32 or
// int64 ([UsesIntFormat]); false when there is no schema or it does not
// resolve.
func (l *Lazy) UsesIntFormat() bool {
	if _, err := l.Resolved(); err != nil {
		return false
	}
	return *l.ints
}

// RecursiveChoice reports whether the schema refers to itself through
// alternatives (see the function of that name); false when there is no
// schema or it does not resolve.
func (l *Lazy) RecursiveChoice() bool {
	if _, err := l.Resolved(); err != nil {
		return false
	}
	return *l.branchy
}

// Schema returns the decoded schema the validator was resolved from, for
// walks such as [Reduce]. It is shared: never modify it.
func (l *Lazy) Schema() (*jsonschema.Schema, error) {
	r, err := l.Resolved()
	if err != nil {
		return nil, err
	}
	return r.Schema(), nil
}

// Raw returns the schema bytes, nil when there is no schema.
func (l *Lazy) Raw() json.RawMessage { return l.raw }

// newLazySchema wraps raw schema bytes; nil raw means no schema.
func NewLazy(raw json.RawMessage) Lazy {
	if raw == nil {
		return Lazy{}
	}
	var r *jsonschema.Resolved
	var err error
	var fast, fastIn *Fast
	return Lazy{raw: raw, once: new(sync.Once), res: &r, err: &err, formats: new(bool), ints: new(bool), fast: &fast, fastIn: &fastIn, branchy: new(bool)}
}
