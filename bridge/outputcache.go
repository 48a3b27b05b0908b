package bridge

import (
	"encoding/json"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/jsonschema-go/jsonschema"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge/schema"
)

// outputCache builds each distinct output schema once per catalog: about
// half of a spec's operations answer with a response schema another
// operation already has (GitHub: 1,223 operations, 641 distinct; Okta:
// 340, 128), and the output schema depends on nothing else (the mode and
// the redactable keys are the catalog's). Tools with no shaping of their
// own then also share the encoded bytes and the lazily resolved validator.
type outputCache struct {
	m sync.Map // outputKey → *outputEntry
}

// shareOutputs turns the sharing on; a test turns it off to compare.
var shareOutputs = true

// outputKey is the response schema an output is converted from: the $ref
// (which names its $defs entry) and the schema it resolves to.
type outputKey struct {
	ref string
	v   *openapi3.Schema
}

// outputEntry is one output schema, built once.
type outputEntry struct {
	once    sync.Once
	raw     json.RawMessage // encoded; nil: none
	lazy    schema.Lazy     // over raw
	repairs []schema.Repair
	// why and field say, for the debug log, why an output was left out.
	why   string
	field zap.Field
}

// output returns the output schema of o, built or shared.
func (c *Catalog) output(o *openapi3.Operation) *outputEntry {
	build := func() *outputEntry {
		e := &outputEntry{}
		c.buildOutput(o, e)
		return e
	}
	src := schema.OutputSource(o)
	if c.outputs == nil || src == nil || !shareOutputs {
		return build()
	}
	v, _ := c.outputs.m.LoadOrStore(outputKey{src.Ref, src.Value}, &outputEntry{})
	e := v.(*outputEntry)
	e.once.Do(func() { c.buildOutput(o, e) })
	return e
}

// buildOutput fills e with o's output schema: left out when it certainly
// exceeds the size limit (without converting it), when it cannot be
// encoded, when it exceeds the limit once encoded, or when
// Options.VerifySchemas finds it does not resolve.
func (c *Catalog) buildOutput(o *openapi3.Operation, e *outputEntry) {
	if c.opts.MaxOutputSchemaBytes >= 0 && schema.OutputExceeds(o, c.maxOutputSchema()) {
		e.why, e.field = "output schema over the size limit, left out", zap.Int("limit", c.maxOutputSchema())
		return
	}
	e.repairs = schema.BuildOutputWith(o, c.opts.OutputSchema, c.redactor.IsSensitiveKey, func(out *jsonschema.Schema) {
		if out != nil {
			c.encodeOutput(out, e)
		}
	})
}

// encodeOutput fills e from the output schema out, which it must not keep
// (its nodes are reused once it returns).
func (c *Catalog) encodeOutput(out *jsonschema.Schema, e *outputEntry) {
	raw, err := schema.Marshal(out)
	switch {
	case err != nil:
		e.why, e.field = "output schema dropped", zap.Error(err)
		return
	case c.opts.MaxOutputSchemaBytes >= 0 && len(raw) > c.maxOutputSchema():
		e.why, e.field = "output schema over the size limit, left out", zap.Int("bytes", len(raw))
		return
	}
	if c.opts.VerifySchemas {
		if _, err := out.Resolve(&jsonschema.ResolveOptions{}); err != nil {
			e.why, e.field = "output schema dropped", zap.Error(err)
			return
		}
	}
	e.raw, e.lazy = raw, schema.NewLazy(raw)
}
