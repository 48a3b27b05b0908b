package mcpx

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/transport/handoff"
)

// encodeLikeJSONRPC is how go-sdk's jsonrpc2 turns a result into the
// response's bytes (jsonMarshal: an Encoder without HTML escaping).
func encodeLikeJSONRPC(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encode: %v", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// TestCallResultMatchesSDK: a callResult encodes to the very bytes go-sdk's
// CallToolResult does, for every shape of result the bridge sends and a
// few it does not.
func TestCallResultMatchesSDK(t *testing.T) {
	big := `{"items":[` + strings.Repeat(`{"name":"a <b> & c","url":"https://x/?a=1&b=2","note":"line\nbreak \u2028 é"},`, 2000) + `{}]}`
	cases := map[string]*mcp.CallToolResult{
		"text only":            {Content: []mcp.Content{&mcp.TextContent{Text: `{"a":1}`}}},
		"text and structured":  {Content: []mcp.Content{&mcp.TextContent{Text: big}}, StructuredContent: json.RawMessage(big)},
		"structured, no html":  {Content: []mcp.Content{&mcp.TextContent{Text: `{"a":"b"}`}}, StructuredContent: json.RawMessage(`{"a":"b"}`)},
		"structured, spaced":   {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage("{ \"a\" : [1, 2,\n 3] }")},
		"line separators":      {Content: []mcp.Content{&mcp.TextContent{Text: "x\u2028y"}}, StructuredContent: json.RawMessage("{\"a\":\"x\u2028y\u2029z\"}")},
		"big, separators":      {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(strings.ReplaceAll(big, "é", "é\u2028"))},
		"big, spaced":          {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(strings.ReplaceAll(big, `","`, `", "`))},
		"big, pretty":          {Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(strings.ReplaceAll(big, `},{`, "},\n  {"))},
		"structured only":      {Content: []mcp.Content{}, StructuredContent: json.RawMessage(`[1,2]`)},
		"structured array top": {Content: []mcp.Content{&mcp.TextContent{Text: "[1]"}}, StructuredContent: json.RawMessage(`[1]`)},
		"error":                {Content: []mcp.Content{&mcp.TextContent{Text: "upstream said 500 <html>"}}, IsError: true},
		"error structured":     {Content: []mcp.Content{&mcp.TextContent{Text: "bad"}}, StructuredContent: json.RawMessage(`{"error":"bad"}`), IsError: true},
		"meta":                 {Meta: mcp.Meta{"io.mcpbridge/partial": map[string]any{"reason": "a<b"}, "z": 1}, Content: []mcp.Content{&mcp.TextContent{Text: "t"}}, StructuredContent: json.RawMessage(`{}`)},
		"empty meta":           {Meta: mcp.Meta{}, Content: []mcp.Content{&mcp.TextContent{Text: "t"}}},
		"nil content":          {},
		"two blocks":           {Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b", Meta: mcp.Meta{"k": "v"}, Annotations: &mcp.Annotations{Priority: 0.5}}}},
		"image":                {Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"}, &mcp.TextContent{Text: "caption"}}},
		"resource":             {Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "openapi://spec", MIMEType: "application/json", Text: "{}"}}}},
		"map structured":       {Content: []mcp.Content{&mcp.TextContent{Text: "m"}}, StructuredContent: map[string]any{"a": "<b>"}},
		"request state":        {Content: []mcp.Content{&mcp.TextContent{Text: "s"}}, RequestState: "opaque&state"},
		"input requests":       {InputRequests: mcp.InputRequestMap{"q1": &mcp.ElicitParams{Message: "name?"}}},
	}
	for name, res := range cases {
		t.Run(name, func(t *testing.T) {
			want := encodeLikeJSONRPC(t, res)
			got := encodeLikeJSONRPC(t, &callResult{CallToolResult: res})
			if !bytes.Equal(got, want) {
				t.Fatalf("callResult encoding differs from go-sdk's\n got: %.400s\nwant: %.400s", got, want)
			}
			// Handed off to a transport (stdio), the bytes it writes.
			taker := handoff.NewTaker()
			got = encodeLikeJSONRPC(t, &callResult{CallToolResult: res, taker: taker})
			parts, handed := taker.Take(got)
			if handed {
				got = bytes.Join(parts, nil)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("handed-off encoding differs from go-sdk's\n got: %.400s\nwant: %.400s", got, want)
			}
			if wantHanded := len(want) >= handoff.MinBytes && !strings.Contains(name, "spaced") && !strings.Contains(name, "pretty"); handed != wantHanded {
				t.Errorf("handed off: %v, want %v (%d bytes)", handed, wantHanded, len(want))
			}
		})
	}
}

// TestCallResultInvalidStructured: an invalid structuredContent is still an
// encoding error, as with go-sdk's own MarshalJSON, not bytes on the wire.
func TestCallResultInvalidStructured(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(`{"a":`)}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(&callResult{CallToolResult: res}); err == nil {
		t.Fatalf("invalid structuredContent encoded: %s", buf.Bytes())
	}
	// Nor is a large one cut short handed off to be written as it is.
	cut := `{"items":[` + strings.Repeat(`{"a":1},`, 4000)
	res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StructuredContent: json.RawMessage(cut)}
	buf.Reset()
	if err := json.NewEncoder(&buf).Encode(&callResult{CallToolResult: res, taker: handoff.NewTaker()}); err == nil {
		t.Fatalf("a structuredContent cut short was encoded: %.100s", buf.Bytes())
	}
}

// BenchmarkCallResultEncode is jsonrpc2's encoding of a 1 MiB answer sent
// as text and structuredContent, by go-sdk's MarshalJSON and by callResult.
//
// handedOff is the same result handed off (transport/handoff): encoding/json
// then meets a stand-in, and the transport takes the bytes.
func BenchmarkCallResultEncode(b *testing.B) {
	body := `{"items":[` + strings.Repeat(`{"id":12345,"name":"widget","url":"https://example.com/items/12345","tags":["a","b"]},`, 12000) + `{}]}`
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: body}}, StructuredContent: json.RawMessage(body)}
	for _, c := range []struct {
		name string
		v    any
	}{{"sdk", res}, {"callResult", &callResult{CallToolResult: res}}, {"handedOff", &callResult{CallToolResult: res, taker: handoff.NewTaker()}}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var buf bytes.Buffer
				enc := json.NewEncoder(&buf)
				enc.SetEscapeHTML(false)
				if err := enc.Encode(c.v); err != nil {
					b.Fatal(err)
				}
				// What the stdio transport does with the stand-in.
				if r, ok := c.v.(*callResult); ok && r.taker != nil {
					if _, ok := r.taker.Take(bytes.TrimRight(buf.Bytes(), "\n")); !ok {
						b.Fatal("not handed off")
					}
				}
			}
		})
	}
}
