package result_test

import (
	"net/http"
	"testing"
	"unicode/utf16"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/result"
	"github.com/mcpbridge/mcpbridge/bridge/schema"
)

func utf16le(s string, bom bool) []byte {
	var b []byte
	if bom {
		b = append(b, 0xff, 0xfe)
	}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

func utf32le(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), byte(r>>8), byte(r>>16), 0)
	}
	return b
}

// TestCharsets: a textual answer in the charset its Content-Type names
// reaches the agent as the same characters in UTF-8 (nothing turned into
// U+FFFD or NUL-riddled text); a byte order mark does not make JSON "not
// JSON"; binary kinds are never transcoded.
func TestCharsets(t *testing.T) {
	s, _ := newShaper(t)
	tolerant := testOutput(t, schema.OutputTolerant, petSchema, s.Redactor.IsSensitiveKey)
	for _, tc := range []struct {
		name, ct string
		body     []byte
		text     string
		sc       bool // structuredContent is the answer itself
	}{
		{"latin-1 text", "text/plain; charset=iso-8859-1", []byte("caf\xe9 cr\xe8me"), "café crème", false},
		{"windows-1252 JSON", "application/json; charset=windows-1252", []byte(`{"id":1,"name":"` + "\x93Rex\x94 \x80" + `"}`), `{"id":1,"name":"“Rex” €"}`, true},
		{"UTF-16LE JSON, charset", "application/json; charset=utf-16le", utf16le(`{"id":2,"name":"Zoë"}`, false), `{"id":2,"name":"Zoë"}`, true},
		{"UTF-16 JSON, BOM, no charset", "application/json", utf16le(`{"id":3,"name":"Ann"}`, true), `{"id":3,"name":"Ann"}`, true},
		{"UTF-8 BOM JSON", "application/json", []byte("\xef\xbb\xbf" + `{"id":4,"name":"Bo"}`), `{"id":4,"name":"Bo"}`, true},
		{"Shift_JIS text", "text/plain; charset=Shift_JIS", []byte("\x93\xfa\x96\x7b"), "日本", false},
		{"UTF-32LE JSON, charset", "application/json; charset=utf-32le", utf32le(`{"id":5,"name":"Zoë"}`), `{"id":5,"name":"Zoë"}`, true},
		{"UTF-32 text, BOM", "text/plain; charset=UTF-32", append([]byte{0xff, 0xfe, 0, 0}, utf32le("token abc")...), "token abc", false},
		{"unknown charset left alone", "text/plain; charset=x-nonsense", []byte("plain"), "plain", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Shape(result.Tool{Name: "x", Output: tolerant}, 200, http.Header{"Content-Type": {tc.ct}}, tc.body)
			if r.IsError {
				t.Fatalf("error result: %+v", r.Content)
			}
			if got := r.Content[0].(*mcp.TextContent).Text; got != tc.text {
				t.Errorf("text %q, want %q", got, tc.text)
			}
			if tc.sc {
				if got := structured(t, r); got != tc.text || r.Meta[result.MetaKey] != nil {
					t.Errorf("structuredContent %s (meta %v), want the answer whole", got, r.Meta)
				}
			}
		})
	}
	// An image is bytes, whatever charset its header claims.
	png := []byte("\x89PNG\r\n\x1a\n\xff\xfe")
	r := s.Shape(result.Tool{Name: "x"}, 200, http.Header{"Content-Type": {"image/png; charset=utf-16le"}}, png)
	if img, ok := r.Content[0].(*mcp.ImageContent); !ok || string(img.Data) != string(png) {
		t.Errorf("image changed: %#v", r.Content[0])
	}
}

// TestNumberBeyondFloat64: an answer holding a number beyond float64's
// range is JSON still: the text keeps it, and structuredContent keeps the
// rest rather than becoming {} for "not a JSON object".
func TestNumberBeyondFloat64(t *testing.T) {
	s, _ := newShaper(t)
	tolerant := testOutput(t, schema.OutputTolerant, petSchema, s.Redactor.IsSensitiveKey)
	body := `{"id":1e400,"name":"Rex"}`
	r := s.Shape(result.Tool{Name: "x", Output: tolerant}, 200, http.Header{"Content-Type": {"application/json"}}, []byte(body))
	if got := r.Content[0].(*mcp.TextContent).Text; got != body {
		t.Errorf("text %q", got)
	}
	if got := structured(t, r); got != `{"name":"Rex"}` {
		t.Errorf("structuredContent %s (meta %v), want the answer without id", got, r.Meta)
	}
}
