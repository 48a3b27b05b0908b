package bridge_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

const exactNumberSpec = `openapi: 3.0.3
info: {title: numbers, version: "1"}
paths:
  /ledger/{account}:
    post:
      operationId: post
      parameters:
        - {name: account, in: path, required: true, schema: {type: integer}}
        - {name: amount, in: query, schema: {type: number}}
        - {name: ids, in: query, schema: {type: array, items: {type: integer}}}
        - {name: limit, in: query, schema: {type: integer, minimum: 1}}
        - {name: fee, in: query, schema: {type: number, multipleOf: 0.01}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                id: {type: integer}
                price: {type: number}
                nested: {type: object, properties: {big: {type: integer}}}
      responses: {"200": {description: ok}}
`

// TestNumbersSentAsWritten: an integer beyond int64 or a decimal with
// more digits than a float64 keeps reaches the upstream as the client
// wrote it (an account number or an amount changed in the last digits is a
// different one), on the fast and the general decoding path, and also when
// another argument needs coercion; ordinary numbers are formatted as
// before.
func TestNumbersSentAsWritten(t *testing.T) {
	var mu sync.Mutex
	var gotURL, gotBody string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		gotURL, gotBody = r.URL.RequestURI(), string(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer up.Close()
	rt := bridge.NewRuntime(specCatalog(t, exactNumberSpec, bridge.Options{BaseURL: up.URL, Client: up.Client()}))
	for _, tc := range []struct {
		name, args, url, body string
	}{
		{"flat", `{"account":123456789012345678901234567890,"amount":0.10000000000000000001}`,
			"/ledger/123456789012345678901234567890?amount=0.10000000000000000001", ""},
		{"body", `{"account":1,"body":{"id":98765432109876543210,"price":19.990000000000000001,"nested":{"big":-99999999999999999999}}}`,
			"/ledger/1", `{"id":98765432109876543210,"nested":{"big":-99999999999999999999},"price":19.990000000000000001}`},
		{"array", `{"account":1,"ids":[1,18446744073709551616]}`,
			"/ledger/1?ids=1&ids=18446744073709551616", ""},
		{"coerced neighbour", `{"account":18446744073709551617,"limit":"5"}`,
			"/ledger/18446744073709551617?limit=5", ""},
		{"ordinary", `{"account":42,"amount":12.50,"limit":3}`,
			"/ledger/42?amount=12.5&limit=3", ""},
		{"exponent", `{"account":1,"amount":1.5e3}`,
			"/ledger/1?amount=1500", ""},
		// 19.99 / 0.01 is 1998.9999999999998 in floating point.
		{"decimal multipleOf", `{"account":1,"fee":19.99}`,
			"/ledger/1?fee=19.99", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: "post", Args: []byte(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			if out.Kind != bridge.OK {
				t.Fatalf("kind %v: %s", out.Kind, out.Result.Content[0].(*mcp.TextContent).Text)
			}
			mu.Lock()
			defer mu.Unlock()
			if gotURL != tc.url {
				t.Errorf("upstream got %s, want %s", gotURL, tc.url)
			}
			if strings.TrimSpace(gotBody) != tc.body {
				t.Errorf("upstream body %s, want %s", gotBody, tc.body)
			}
		})
	}
	// An exact number is still checked: below the minimum is refused.
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "post", Args: []byte(`{"account":1,"limit":-123456789012345678901}`)})
	if err != nil {
		t.Fatal(err)
	}
	if text := out.Result.Content[0].(*mcp.TextContent).Text; out.Kind != bridge.BadArguments || !strings.Contains(text, "limit") {
		t.Errorf("got kind %v, %q; want bad_arguments about limit", out.Kind, text)
	}
}
