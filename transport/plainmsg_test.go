package transport

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

var plainRequestCases = []struct {
	msg   string
	plain bool // plainRequest takes it
}{
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_user","arguments":{"username":"octocat"}}}`, true},
	{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, true},
	{` { "method" : "ping" , "id" : "abc-1" , "jsonrpc" : "2.0" } `, true},
	{`{"jsonrpc":"2.0","id":-42,"method":"x","params":[1,"two",{"three":[3]},null,true,false,-1.5e3]}`, true},
	{`{"jsonrpc":"2.0","id":999999999999999,"method":"x"}`, true},
	{`{"jsonrpc":"2.0","id":"<&>","method":"x","params":{"s":"a\"b\\c\u0041"}}`, true},
	{`{"jsonrpc":"2.0","id":0,"method":"x","params":"text"}`, true},

	// Left to jsonrpc.DecodeMessage.
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"q":"héllo"}}`, false},
	{`{"jsonrpc":"2.0","id":1.5,"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":1e3,"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":1234567890123456,"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":null,"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":true,"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":"a\nb","method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":"a\u0041","method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"x","id":2}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":""}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"a\/b"}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":null}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":5}`, false},
	{`{"jsonrpc":"1.0","id":1,"method":"x"}`, false},
	{`{"id":1,"method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":1,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"m"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"x","extra":1}`, false},
	{`{"jsonrpc":"2.0","id":1,"Method":"x"}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"x","params":{},"params":[]}`, false},
	{`{}`, false},
}

// TestPlainRequest checks the shortcut against go-sdk's own decoder: what
// it takes, go-sdk decodes to the same request.
func TestPlainRequest(t *testing.T) {
	for _, tt := range plainRequestCases {
		data := []byte(tt.msg)
		if !json.Valid(data) {
			t.Fatalf("test case %s is not JSON", tt.msg)
		}
		got, ok := plainRequest(data, DefaultMaxJSONDepth)
		if ok != tt.plain {
			t.Errorf("plainRequest(%s) ok = %v, want %v", tt.msg, ok, tt.plain)
		}
		if ok {
			samePlainRequest(t, data, got)
		}
	}
}

func samePlainRequest(t *testing.T, data []byte, got *jsonrpc.Request) {
	t.Helper()
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		t.Fatalf("plainRequest(%s) took what go-sdk refuses: %v", data, err)
	}
	want, isReq := m.(*jsonrpc.Request)
	if !isReq {
		t.Fatalf("plainRequest(%s) took a %T", data, m)
	}
	if got.Method != want.Method || got.ID != want.ID || !bytes.Equal(got.Params, want.Params) {
		t.Fatalf("plainRequest(%s) = {%q %v %s}, go-sdk {%q %v %s}", data, got.Method, got.ID.Raw(), got.Params, want.Method, want.ID.Raw(), want.Params)
	}
}

// TestPlainRequestDepth: over go-sdk's own nesting limit (a configured
// MaxJSONDepth may be higher), go-sdk decides.
func TestPlainRequestDepth(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"method":"x","params":` + string(bytes.Repeat([]byte("["), sdkMaxDepth)) + string(bytes.Repeat([]byte("]"), sdkMaxDepth)) + `}`
	if _, ok := plainRequest([]byte(deep), 2*sdkMaxDepth); ok {
		t.Error("plainRequest took a message nested deeper than go-sdk allows")
	}
}

// FuzzPlainRequest: whatever the shortcut takes, go-sdk decodes to the
// same request.
func FuzzPlainRequest(f *testing.F) {
	for _, tt := range plainRequestCases {
		f.Add([]byte(tt.msg))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || exceedsDepth(data, DefaultMaxJSONDepth) {
			return
		}
		if got, ok := plainRequest(data, DefaultMaxJSONDepth); ok {
			samePlainRequest(t, data, got)
		}
	})
}

// TestPlainResponseID checks the shortcut for go-sdk's responses against
// the decoder, on what go-sdk writes and on near misses.
func TestPlainResponseID(t *testing.T) {
	var lines [][]byte
	for _, id := range []any{0.0, 7.0, -3.0, float64(1 << 52), "abc", "a<b>&c", "é", "a\"b", "tab\t"} {
		jid, err := jsonrpc.MakeID(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []jsonrpc.Message{
			&jsonrpc.Response{ID: jid, Result: json.RawMessage(`{"content":[]}`)},
			&jsonrpc.Response{ID: jid, Error: &jsonrpc.Error{Code: -32600, Message: "no"}},
			&jsonrpc.Request{ID: jid, Method: "roots/list"},
		} {
			b, err := jsonrpc.EncodeMessage(m)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, b)
		}
	}
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`,
		`{"jsonrpc":"2.0","id":12`, `{"jsonrpc":"2.0","id":"ab`, `{"jsonrpc":"2.0","id":null,"error":{}}`,
		`{"jsonrpc":"2.0","id":1,"params":{}}`, `{"id":1,"jsonrpc":"2.0","result":{}}`, `{"jsonrpc": "2.0", "id": 1, "result": {}}`,
	} {
		lines = append(lines, []byte(s))
	}
	plain := 0
	for _, line := range lines {
		prefix := line[:min(len(line), outPeek)]
		id, isResponse, ok := plainResponseID(prefix)
		if !ok {
			continue
		}
		plain++
		wantID, wantResponse := decodeResponseID(prefix)
		if isResponse != wantResponse || !bytes.Equal(id, wantID) {
			t.Errorf("plainResponseID(%s) = %s %v, decoder %s %v", prefix, id, isResponse, wantID, wantResponse)
		}
	}
	if plain < 15 {
		t.Errorf("the shortcut took %d of %d lines; go-sdk's own responses should all go through it", plain, len(lines))
	}
}

// FuzzPlainResponseID: whatever the shortcut takes, the decoder reads the
// same way.
func FuzzPlainResponseID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","error":{"code":1}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"m"}`))
	f.Fuzz(func(t *testing.T, prefix []byte) {
		id, isResponse, ok := plainResponseID(prefix)
		if !ok {
			return
		}
		wantID, wantResponse := decodeResponseID(prefix)
		if isResponse != wantResponse || !bytes.Equal(id, wantID) {
			t.Fatalf("plainResponseID(%q) = %s %v, decoder %s %v", prefix, id, isResponse, wantID, wantResponse)
		}
	})
}
