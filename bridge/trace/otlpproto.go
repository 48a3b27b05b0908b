package trace

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// The OTLP trace messages, written with protowire alone: the generated
// types (go.opentelemetry.io/proto/otlp) would bring the collector service
// package and with it gRPC and grpc-gateway. The field numbers are those of
// opentelemetry/proto/{collector/trace,trace,common,resource}/v1/*.proto,
// which the OTLP stability guarantees freeze.
//
// Scalars at their zero value are left out, as proto3 does; the members of
// AnyValue's oneof are always written, since there presence is the value.

// ExportTraceServiceRequest, ResourceSpans, ScopeSpans.
const (
	reqResourceSpans protowire.Number = 1

	rsResource   protowire.Number = 1
	rsScopeSpans protowire.Number = 2
	rsSchemaURL  protowire.Number = 3

	ssScope     protowire.Number = 1
	ssSpans     protowire.Number = 2
	ssSchemaURL protowire.Number = 3
)

// Resource, InstrumentationScope.
const (
	resAttributes protowire.Number = 1

	scopeName       protowire.Number = 1
	scopeVersion    protowire.Number = 2
	scopeAttributes protowire.Number = 3
)

// Span.
const (
	spanTraceID       protowire.Number = 1
	spanSpanID        protowire.Number = 2
	spanTraceState    protowire.Number = 3
	spanParentSpanID  protowire.Number = 4
	spanName          protowire.Number = 5
	spanKind          protowire.Number = 6
	spanStart         protowire.Number = 7
	spanEnd           protowire.Number = 8
	spanAttributes    protowire.Number = 9
	spanDroppedAttrs  protowire.Number = 10
	spanEvents        protowire.Number = 11
	spanDroppedEvents protowire.Number = 12
	spanLinks         protowire.Number = 13
	spanDroppedLinks  protowire.Number = 14
	spanStatus        protowire.Number = 15
	spanFlags         protowire.Number = 16
	eventTime         protowire.Number = 1
	eventName         protowire.Number = 2
	eventAttributes   protowire.Number = 3
	eventDroppedAttrs protowire.Number = 4
	linkTraceID       protowire.Number = 1
	linkSpanID        protowire.Number = 2
	linkTraceState    protowire.Number = 3
	linkAttributes    protowire.Number = 4
	linkDroppedAttrs  protowire.Number = 5
	linkFlags         protowire.Number = 6
	statusMessage     protowire.Number = 2
	statusCode        protowire.Number = 3
)

// SpanFlags: bits 8 and 9 of Span.flags and Link.flags, above the W3C
// trace flags.
const (
	flagContextHasIsRemote = 0x100 // SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
	flagContextIsRemote    = 0x200 // SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
)

// KeyValue, AnyValue, ArrayValue, KeyValueList.
const (
	kvKey   protowire.Number = 1
	kvValue protowire.Number = 2

	anyString protowire.Number = 1
	anyBool   protowire.Number = 2
	anyInt    protowire.Number = 3
	anyDouble protowire.Number = 4
	anyArray  protowire.Number = 5
	anyKVList protowire.Number = 6
	anyBytes  protowire.Number = 7

	listValues protowire.Number = 1 // ArrayValue.values, KeyValueList.values
)

// ExportTraceServiceResponse, ExportTracePartialSuccess, google.rpc.Status.
const (
	respPartialSuccess   protowire.Number = 1
	partialRejectedSpans protowire.Number = 1
	partialErrorMessage  protowire.Number = 2
	rpcStatusMessage     protowire.Number = 2
)

// appendTraces appends the ExportTraceServiceRequest carrying spans to b:
// one ResourceSpans per resource and, in each, one ScopeSpans per
// instrumentation scope, both in the order the spans first name them.
func appendTraces(b []byte, spans []sdktrace.ReadOnlySpan) []byte {
	type scopeGroup struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resourceGroup struct {
		res    *resource.Resource
		scopes []*scopeGroup
	}
	type scopeKey struct {
		res   attribute.Distinct
		scope instrumentation.Scope
	}
	var groups []*resourceGroup
	byRes := map[attribute.Distinct]*resourceGroup{}
	byScope := map[scopeKey]*scopeGroup{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		rk := s.Resource().Equivalent()
		rg := byRes[rk]
		if rg == nil {
			rg = &resourceGroup{res: s.Resource()}
			byRes[rk] = rg
			groups = append(groups, rg)
		}
		sk := scopeKey{rk, s.InstrumentationScope()}
		sg := byScope[sk]
		if sg == nil {
			sg = &scopeGroup{scope: sk.scope}
			byScope[sk] = sg
			rg.scopes = append(rg.scopes, sg)
		}
		sg.spans = append(sg.spans, s)
	}

	for _, rg := range groups {
		var rs, r, ss, sc, sp int
		b, rs = beginMessage(b, reqResourceSpans)
		b, r = beginMessage(b, rsResource)
		for it := rg.res.Iter(); it.Next(); {
			b = appendKeyValue(b, resAttributes, it.Attribute())
		}
		b = endMessage(b, r)
		for _, sg := range rg.scopes {
			b, ss = beginMessage(b, rsScopeSpans)
			b, sc = beginMessage(b, ssScope)
			b = appendString(b, scopeName, sg.scope.Name)
			b = appendString(b, scopeVersion, sg.scope.Version)
			for it := sg.scope.Attributes.Iter(); it.Next(); {
				b = appendKeyValue(b, scopeAttributes, it.Attribute())
			}
			b = endMessage(b, sc)
			for _, s := range sg.spans {
				b, sp = beginMessage(b, ssSpans)
				b = appendSpan(b, s)
				b = endMessage(b, sp)
			}
			b = appendString(b, ssSchemaURL, sg.scope.SchemaURL)
			b = endMessage(b, ss)
		}
		b = appendString(b, rsSchemaURL, rg.res.SchemaURL())
		b = endMessage(b, rs)
	}
	return b
}

// appendSpan appends the fields of one Span.
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, spanTraceID, tid[:])
	b = appendBytes(b, spanSpanID, sid[:])
	b = appendString(b, spanTraceState, sc.TraceState().String())
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, spanParentSpanID, psid[:])
	}
	b = appendString(b, spanName, s.Name())
	b = appendVarint(b, spanKind, uint64(otlpKind(s.SpanKind())))
	b = appendFixed64(b, spanStart, unixNano(s.StartTime().UnixNano()))
	b = appendFixed64(b, spanEnd, unixNano(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		b = appendKeyValue(b, spanAttributes, kv)
	}
	b = appendVarint(b, spanDroppedAttrs, count(s.DroppedAttributes()))
	for _, e := range s.Events() {
		var m int
		b, m = beginMessage(b, spanEvents)
		b = appendFixed64(b, eventTime, unixNano(e.Time.UnixNano()))
		b = appendString(b, eventName, e.Name)
		for _, kv := range e.Attributes {
			b = appendKeyValue(b, eventAttributes, kv)
		}
		b = appendVarint(b, eventDroppedAttrs, count(e.DroppedAttributeCount))
		b = endMessage(b, m)
	}
	b = appendVarint(b, spanDroppedEvents, count(s.DroppedEvents()))
	for _, l := range s.Links() {
		var m int
		b, m = beginMessage(b, spanLinks)
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b = appendBytes(b, linkTraceID, ltid[:])
		b = appendBytes(b, linkSpanID, lsid[:])
		b = appendString(b, linkTraceState, l.SpanContext.TraceState().String())
		for _, kv := range l.Attributes {
			b = appendKeyValue(b, linkAttributes, kv)
		}
		b = appendVarint(b, linkDroppedAttrs, count(l.DroppedAttributeCount))
		b = protowire.AppendTag(b, linkFlags, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, spanFlags32(l.SpanContext.TraceFlags(), l.SpanContext))
		b = endMessage(b, m)
	}
	b = appendVarint(b, spanDroppedLinks, count(s.DroppedLinks()))
	var m int
	b, m = beginMessage(b, spanStatus)
	st := s.Status()
	b = appendString(b, statusMessage, st.Description)
	b = appendVarint(b, statusCode, otlpStatus(st.Code))
	b = endMessage(b, m)
	b = protowire.AppendTag(b, spanFlags, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, spanFlags32(sc.TraceFlags(), parent))
}

// spanFlags32 is Span.flags (and Link.flags): the W3C trace flags in the
// low byte, and whether the parent (for a link, the linked span) is
// remote.
func spanFlags32(tf oteltrace.TraceFlags, parent oteltrace.SpanContext) uint32 {
	f := uint32(tf) | flagContextHasIsRemote
	if parent.IsRemote() {
		f |= flagContextIsRemote
	}
	return f
}

// otlpKind maps the API's span kinds to Span.SpanKind; the numbering is
// the same, this only keeps an unknown kind out of the wire.
func otlpKind(k oteltrace.SpanKind) oteltrace.SpanKind {
	if k < oteltrace.SpanKindInternal || k > oteltrace.SpanKindConsumer {
		return oteltrace.SpanKindUnspecified
	}
	return k
}

// otlpStatus maps the API's status codes (Unset 0, Error 1, Ok 2) to
// Status.StatusCode (UNSET 0, OK 1, ERROR 2).
func otlpStatus(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	default:
		return 0
	}
}

func appendKeyValue(b []byte, num protowire.Number, kv attribute.KeyValue) []byte {
	var m, v int
	b, m = beginMessage(b, num)
	b = appendString(b, kvKey, string(kv.Key))
	b, v = beginMessage(b, kvValue)
	b = appendAnyValue(b, kv.Value)
	b = endMessage(b, v)
	return endMessage(b, m)
}

// appendAnyValue appends the fields of the AnyValue for v.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	var m int
	switch v.Type() {
	case attribute.EMPTY:
		return b
	case attribute.BOOL:
		return appendBool(b, v.AsBool())
	case attribute.INT64:
		return appendInt(b, v.AsInt64())
	case attribute.FLOAT64:
		return appendDouble(b, v.AsFloat64())
	case attribute.STRING:
		return appendOneofString(b, v.AsString())
	case attribute.BYTESLICE:
		b = protowire.AppendTag(b, anyBytes, protowire.BytesType)
		return protowire.AppendBytes(b, v.AsByteSlice())
	case attribute.MAP:
		b, m = beginMessage(b, anyKVList)
		for _, kv := range v.AsMap() {
			b = appendKeyValue(b, listValues, kv)
		}
		return endMessage(b, m)
	case attribute.BOOLSLICE, attribute.INT64SLICE, attribute.FLOAT64SLICE, attribute.STRINGSLICE, attribute.SLICE:
		b, m = beginMessage(b, anyArray)
		return endMessage(appendArrayValues(b, v), m)
	default:
		// A type this code does not know yet: say so rather than send
		// nothing, as the OpenTelemetry exporters do.
		return appendOneofString(b, "INVALID")
	}
}

// appendArrayValues appends the values of the ArrayValue for the slice v,
// each an AnyValue.
func appendArrayValues(b []byte, v attribute.Value) []byte {
	var m int
	switch v.Type() {
	case attribute.BOOLSLICE:
		for _, x := range v.AsBoolSlice() {
			b, m = beginMessage(b, listValues)
			b = endMessage(appendBool(b, x), m)
		}
	case attribute.INT64SLICE:
		for _, x := range v.AsInt64Slice() {
			b, m = beginMessage(b, listValues)
			b = endMessage(appendInt(b, x), m)
		}
	case attribute.FLOAT64SLICE:
		for _, x := range v.AsFloat64Slice() {
			b, m = beginMessage(b, listValues)
			b = endMessage(appendDouble(b, x), m)
		}
	case attribute.STRINGSLICE:
		for _, x := range v.AsStringSlice() {
			b, m = beginMessage(b, listValues)
			b = endMessage(appendOneofString(b, x), m)
		}
	case attribute.SLICE:
		for _, x := range v.AsSlice() {
			b, m = beginMessage(b, listValues)
			b = endMessage(appendAnyValue(b, x), m)
		}
	}
	return b
}

func appendBool(b []byte, x bool) []byte {
	b = protowire.AppendTag(b, anyBool, protowire.VarintType)
	return protowire.AppendVarint(b, protowire.EncodeBool(x))
}

func appendInt(b []byte, x int64) []byte {
	b = protowire.AppendTag(b, anyInt, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(x))
}

func appendDouble(b []byte, x float64) []byte {
	b = protowire.AppendTag(b, anyDouble, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(x))
}

func appendOneofString(b []byte, x string) []byte {
	b = protowire.AppendTag(b, anyString, protowire.BytesType)
	return protowire.AppendString(b, x)
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, p []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, p)
}

func appendVarint(b []byte, num protowire.Number, x uint64) []byte {
	if x == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, x)
}

func appendFixed64(b []byte, num protowire.Number, x uint64) []byte {
	if x == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, x)
}

func unixNano(n int64) uint64 { return uint64(max(0, n)) }

func count(n int) uint64 { return min(uint64(max(0, n)), math.MaxUint32) }

// beginMessage appends the tag of an embedded message and a one-byte
// length placeholder; it returns where the message's body starts, for
// [endMessage].
func beginMessage(b []byte, num protowire.Number) ([]byte, int) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = append(b, 0)
	return b, len(b)
}

// endMessage writes the length of the message whose body starts at start.
// A body of 128 bytes or more needs a longer varint: the body moves up to
// make room, which costs a copy of the body per nesting level, no more
// than encoding each message into its own buffer would.
func endMessage(b []byte, start int) []byte {
	n := len(b) - start
	if n < 0x80 {
		b[start-1] = byte(n)
		return b
	}
	size := protowire.SizeVarint(uint64(n))
	var pad [binary.MaxVarintLen64]byte
	b = append(b, pad[:size-1]...)
	copy(b[start-1+size:], b[start:start+n])
	protowire.AppendVarint(b[:start-1], uint64(n))
	return b
}

// decodePartialSuccess reads ExportTraceServiceResponse.partial_success:
// the spans the collector rejected and why. What does not parse counts as
// full success; the collector said 2xx.
func decodePartialSuccess(b []byte) (rejected int64, msg string) {
	eachField(b, func(n protowire.Number, typ protowire.Type, v []byte) {
		if n != respPartialSuccess || typ != protowire.BytesType {
			return
		}
		ps, _ := protowire.ConsumeBytes(v)
		eachField(ps, func(n protowire.Number, typ protowire.Type, v []byte) {
			switch {
			case n == partialRejectedSpans && typ == protowire.VarintType:
				x, _ := protowire.ConsumeVarint(v)
				rejected = int64(x)
			case n == partialErrorMessage && typ == protowire.BytesType:
				s, _ := protowire.ConsumeBytes(v)
				msg = string(s)
			}
		})
	})
	return rejected, msg
}

// decodeRPCStatusMessage reads google.rpc.Status.message, which an OTLP
// collector may send with a failure status.
func decodeRPCStatusMessage(b []byte) (msg string) {
	eachField(b, func(n protowire.Number, typ protowire.Type, v []byte) {
		if n == rpcStatusMessage && typ == protowire.BytesType {
			s, _ := protowire.ConsumeBytes(v)
			msg = string(s)
		}
	})
	return msg
}

// eachField calls fn with the number, wire type and encoded value of every
// field of message b, up to the first that does not parse.
func eachField(b []byte, fn func(protowire.Number, protowire.Type, []byte)) {
	for len(b) > 0 {
		n, typ, tl := protowire.ConsumeTag(b)
		if tl < 0 {
			return
		}
		b = b[tl:]
		vl := protowire.ConsumeFieldValue(n, typ, b)
		if vl < 0 {
			return
		}
		fn(n, typ, b[:vl])
		b = b[vl:]
	}
}
