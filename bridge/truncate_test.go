package bridge_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// TestTruncate checks that an answer over the limit becomes a valid result
// saying it was truncated: a JSON array keeps the whole items that fit,
// text is cut with a marker, and a secret the limit cut in half does not
// leak its first half.
func TestTruncate(t *testing.T) {
	const secret = "tok-abcdefghijklmnopqrstuvwxyz0123456789"
	var body, ct string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ct)
		w.Write([]byte(body))
	}))
	defer up.Close()
	res, err := specloader.LoadData(t.Context(), []byte(credSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), MaxResponseBytes: 1000, Truncate: true,
		Credentials: bridge.Credentials{BearerToken: secret}})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, b)
	call := func() *mcp.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"q": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	items := make([]string, 100)
	for i := range items {
		items[i] = `{"id":` + strings.Repeat("1", 3) + `,"name":"item number ` + strings.Repeat("x", 20) + `"}`
	}
	body, ct = "["+strings.Join(items, ",")+"]", "application/json"
	r := call()
	if r.IsError || len(r.Content) != 2 {
		t.Fatalf("JSON array: %+v", r)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &got); err != nil {
		t.Fatalf("truncated JSON is not valid: %v", err)
	}
	if len(got) == 0 || len(got) >= 100 || !strings.Contains(r.Content[1].(*mcp.TextContent).Text, "Truncated answer") {
		t.Errorf("kept %d items; note %q", len(got), r.Content[1].(*mcp.TextContent).Text)
	}

	body, ct = strings.Repeat("word ", 195)+secret+strings.Repeat(" tail", 100), "text/plain"
	r = call()
	text := r.Content[0].(*mcp.TextContent).Text
	if r.IsError || !strings.HasSuffix(text, "…(truncated)") || len(text) > 1100 {
		t.Errorf("text: isError %v, %d bytes, ends %q", r.IsError, len(text), text[max(0, len(text)-30):])
	}
	if strings.Contains(text, secret[:12]) {
		t.Errorf("half of the secret leaked: %q", text[len(text)-60:])
	}

	// No spaces to cut at: the limit falls inside the secret after padding
	// chosen by whoever shapes the answer (an agent's arguments, an
	// upstream echoing them), at every offset, in compact JSON, plain text
	// and a query string. No part of the secret may come back.
	for _, tc := range []struct{ ct, head, pre, post string }{
		{"text/plain", "", "", strings.Repeat("B", 100)},
		{"application/json", `{"v":"`, "", strings.Repeat("B", 100) + `"}`},
		{"application/x-www-form-urlencoded", "a=1&", "k=", "&z=" + strings.Repeat("B", 100)},
	} {
		for off := 1; off < len(secret); off += 3 {
			pad := 1000 - off - len(tc.head) - len(tc.pre)
			body, ct = tc.head+strings.Repeat("A", pad)+tc.pre+secret+tc.post, tc.ct
			r = call()
			text := r.Content[0].(*mcp.TextContent).Text
			if cut := strings.TrimSuffix(text, " …(truncated)"); strings.HasSuffix(cut, secret[:2]) || strings.Contains(cut, secret[:off]) || len(cut) > 1000 {
				t.Fatalf("%s, limit %d bytes into the secret: %d bytes, ends %q", tc.ct, off, len(cut), text[max(0, len(text)-40):])
			}
			note := r.Content[1].(*mcp.TextContent).Text
			if want := "stops after " + strconv.Itoa(len(strings.TrimSuffix(text, " …(truncated)"))) + " of them"; !strings.Contains(note, want) {
				t.Fatalf("note %q, want %q", note, want)
			}
		}
	}

	// No oracle: where the cut falls does not depend on whether the text
	// before it starts the secret. Guesses of every length, right and
	// wrong, padded past the limit, come back cut at the same place (a
	// trim of what starts the secret told right from wrong, one character
	// at a time).
	for _, sep := range []string{" ", ""} {
		lengths := map[int]bool{}
		for _, guess := range []string{secret[:4], "tok-X", secret[:10], "tok-abcdefgXij", secret[:len(secret)-1], "Zok-abcdefghijklmnopqrstuvwxyz012345678"} {
			body, ct = "hello world "+guess+sep+strings.Repeat("z", 2000), "text/plain"
			text := strings.TrimSuffix(call().Content[0].(*mcp.TextContent).Text, " …(truncated)")
			if sep == "" {
				lengths[len(text)] = true // the guess is part of the last word
			} else {
				lengths[len(text)-len(guess)] = true
			}
		}
		if len(lengths) != 1 {
			t.Errorf("sep %q: cut text lengths %v differ with the guess", sep, lengths)
		}
	}

	// Binary media: no bytes of it as text.
	body, ct = strings.Repeat("\x89PNG", 300), "image/png"
	r = call()
	if len(r.Content) != 1 || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "none of it is shown") {
		t.Errorf("truncated image: %+v", r.Content)
	}

	// Without Truncate the same answer is a too_large error.
	b2, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client(), MaxResponseBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out, err := bridge.NewRuntime(b2).Call(t.Context(), &bridge.Call{Tool: "echo", Args: []byte(`{"q":"x"}`)})
	if err != nil || out.Kind != bridge.TooLarge {
		t.Errorf("without Truncate: %v %v", err, out.Kind)
	}
}
