package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge/schema"
)

// MetaKey is the _meta member of a result whose structuredContent is not
// the whole answer. Its value is an object: "reduced": true; "removed",
// the JSON pointers of what was left out (at most 20) and "removedCount";
// or "replaced": true when structuredContent is {}; and "reason", the
// first difference between the answer and the output schema. The first
// text content always carries the whole answer (redacted), except for an
// answer cut at the size limit, marked "truncated": true.
const MetaKey = "mcpbridge/structuredContent"

// structure sets res.StructuredContent for a successful result of a tool
// with an output schema, so that clients which require it (the TypeScript
// SDK fails a call whose tool declares an outputSchema and whose result
// has no structuredContent) accept every answer:
//
//   - a JSON object that validates goes as it is;
//   - one that does not is reduced: object members and array items that
//     do not conform to their subschemas are removed ([schema.Reduce]),
//     and the remainder goes if it validates;
//   - otherwise (a scalar or array at the top, a text or binary answer, a
//     remainder that still does not validate) structuredContent is {},
//     provided the schema admits it, as every tolerant output schema does
//     (an answer without a body is {} and nothing more: no drift);
//   - with a strict schema that admits neither, there is none, and the
//     result is an error result (isError), which strict clients accept
//     without structuredContent, its text the whole answer and a reason.
//
// Anything short of the whole answer is said under [MetaKey]. The first
// mismatch of each tool is logged at WARN with where it was, later ones
// at DEBUG; values are never logged.
func (s *Shaper) structure(t Tool, res *mcp.CallToolResult, red []byte, empty, cut bool) {
	out, err := t.Output.Resolved()
	if err != nil {
		s.Log.Debug("output schema does not resolve", zap.String("tool", t.Name), zap.Error(err))
		return
	}
	reason, logged := "the answer is not JSON", false
	if cut {
		reason = "the answer was cut at the size limit (--max-response-bytes)"
	}
	switch {
	case empty:
		// 201, 202, 204 and the like: a success with nothing to say, not
		// drift; {} stands for it (the text says the status), not marked
		// as a substitute, which would make it an error result for hosts
		// that read structuredContent alone, and an agent retry a call
		// that worked.
		if out.Validate(map[string]any{}) == nil {
			res.StructuredContent = json.RawMessage("{}")
			return
		}
		reason, logged = "the answer has no body", true
	case red != nil && t.Output.RecursiveChoice() && schema.Depth(red) > MaxRecursiveChoiceDepth:
		// Checking it could take time exponential in its nesting.
		reason = fmt.Sprintf("the answer nests deeper than %d levels, too deep to check against this tool's self-referring output schema", MaxRecursiveChoiceDepth)
	case red != nil && t.Output.Fast().Valid(red):
		// The common case, checked in one pass over the bytes: the answer
		// conforms (Fast accepts only what the validator accepts).
		res.StructuredContent = json.RawMessage(red)
		return
	case red != nil:
		m, err := decodeObject(red)
		switch {
		case err != nil || m == nil: // m is nil for the answer null
			reason = "the answer is not a JSON object"
		case out.Validate(m) == nil && (!t.Output.UsesFormat() || schema.Check(m, out.Schema()) == ""):
			res.StructuredContent = json.RawMessage(red)
			return
		default:
			ok, first := s.reduce(t, out, res, red)
			if ok {
				return
			}
			reason, logged = "the answer does not match the output schema", true
			if first != "" {
				// Where and how, as the reduced result's _meta says it:
				// the agent (and whoever reads the error) can tell a
				// drifted answer from a broken call.
				reason += " (first difference: " + first + ")"
			}
		}
	}
	if out.Validate(map[string]any{}) != nil {
		// A result without structuredContent fails the call in strict
		// clients (the TypeScript SDK's), and no structuredContent would
		// conform: the answer goes as an error result, which clients take
		// without one, its text whole, with the reason.
		s.mismatch(t.Name, reason+"; the schema rejects {} too, so the answer goes as an error result")
		res.IsError = true
		res.Content = append(res.Content, &mcp.TextContent{Text: "The upstream's answer (above) does not match this tool's output schema, which admits no substitute (--output-schema strict): " + reason + "."})
		return
	}
	if !logged {
		s.mismatch(t.Name, reason)
	}
	res.StructuredContent = json.RawMessage("{}")
	meta := map[string]any{"replaced": true, "reason": reason}
	if cut {
		meta["truncated"] = true
	}
	setMeta(res, meta)
}

// MaxRecursiveChoiceDepth bounds the nesting of a value checked against a
// schema that refers to itself through alternatives
// (schema.RecursiveChoice): each level can double the checkers' work (an
// argument 22 levels deep once took 39 s); 12 levels stay within
// milliseconds.
const MaxRecursiveChoiceDepth = 12

// decodeObject decodes a JSON answer for the validator: numbers as
// float64, except one beyond float64's range (1e400, valid JSON), which
// stays a json.Number rather than failing the whole answer as "not JSON";
// the validator then refuses just that member, and reduce drops it.
func decodeObject(red []byte) (map[string]any, error) {
	var m map[string]any
	err := json.Unmarshal(red, &m)
	var ute *json.UnmarshalTypeError
	if !errors.As(err, &ute) || !strings.HasPrefix(ute.Value, "number") {
		return m, err
	}
	dec := json.NewDecoder(bytes.NewReader(red))
	dec.UseNumber()
	m = nil
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return floatNumbers(m).(map[string]any), nil
}

// floatNumbers turns the json.Numbers in v that fit a float64 into one.
func floatNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
	case map[string]any:
		for k, e := range x {
			x[k] = floatNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = floatNumbers(e)
		}
	}
	return v
}

// reduce tries structuredContent made of what of red conforms; it
// reports whether it set it, and the first difference between the answer
// and the schema ("" when it cannot say).
func (s *Shaper) reduce(t Tool, out *jsonschema.Resolved, res *mcp.CallToolResult, red []byte) (bool, string) {
	dec := json.NewDecoder(bytes.NewReader(red))
	dec.UseNumber() // numbers keep their digits
	var v any
	if err := dec.Decode(&v); err != nil {
		return false, ""
	}
	reduced, info, ok := schema.Reduce(v, out.Schema())
	first := info.First
	if first == "" {
		first = "the validator rejects it where this bridge's checker does not"
	}
	s.mismatch(t.Name, first)
	if !ok {
		return false, info.First
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(reduced); err != nil {
		return false, info.First
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || out.Validate(m) != nil {
		return false, info.First
	}
	if t.Output.UsesFormat() && schema.Check(m, out.Schema()) != "" {
		return false, info.First
	}
	res.StructuredContent = json.RawMessage(b)
	meta := map[string]any{"reduced": true, "removedCount": info.Count, "reason": first}
	if len(info.Removed) > 0 {
		meta["removed"] = info.Removed
	}
	setMeta(res, meta)
	return true, first
}

func setMeta(res *mcp.CallToolResult, v map[string]any) {
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	res.Meta[MetaKey] = v
}

// mismatch logs that an answer of tool did not match its output schema:
// at WARN the first time for the tool, at DEBUG afterwards.
func (s *Shaper) mismatch(tool, first string) {
	if _, seen := s.warned.LoadOrStore(tool, struct{}{}); !seen {
		s.Log.Warn("answer does not match the tool's output schema; structuredContent reduced (logged once per tool)",
			zap.String("tool", tool), zap.String("first_difference", first))
		return
	}
	if ce := s.Log.Check(zap.DebugLevel, "answer does not match the tool's output schema"); ce != nil {
		ce.Write(zap.String("tool", tool), zap.String("first_difference", first))
	}
}

// StructureTruncated gives res, the result of an answer cut at the size
// limit, the structuredContent its tool's output schema requires: {},
// marked as a substitute for an answer that was cut, or, when the schema
// refuses {}, an error result.
func (s *Shaper) StructureTruncated(name string, output *schema.Lazy, res *mcp.CallToolResult) {
	if output == nil || output.Raw() == nil {
		return
	}
	s.structure(Tool{Name: name, Output: output}, res, nil, false, true)
}
