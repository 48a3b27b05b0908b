package bridge_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

const argSpec = `openapi: 3.0.3
info: {title: args, version: "1"}
paths:
  /items:
    post:
      operationId: addItem
      parameters:
        - {name: limit, in: query, required: true, schema: {type: integer, minimum: 1}}
        - {name: dryRun, in: query, schema: {type: boolean}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              properties:
                count: {type: number}
                name: {type: string, minLength: 2}
      responses: {"200": {description: ok}}
`

// TestArgumentMessages calls a tool with bad and coercible arguments and
// checks what the agent reads, and what the upstream receives.
func TestArgumentMessages(t *testing.T) {
	rt, got := argRuntime(t, argSpec, false)
	tests := []argCase{
		{`{"limit": "ten"}`, `invalid arguments: "limit" must be an integer >= 1, got "ten"`, ""},
		{`{"limit": 0}`, `invalid arguments: "limit" must be an integer >= 1, got 0`, ""},
		{`{}`, `invalid arguments: "limit" is required (an integer >= 1)`, ""},
		{`{"limit": 1, "dryrun": true}`, `invalid arguments: unknown argument "dryrun" (did you mean "dryRun"?); the tool takes "body", "dryRun", "limit"`, ""},
		{`{"limit": 1, "body": {"name": "x"}}`, `invalid arguments: "body.name" must be a string of at least 2 characters, got "x" (1 character)`, ""},
		{`{"limit": 1, "body": {"nmae": "xy"}}`, `invalid arguments: "body" has no property "nmae" (did you mean "name"?); it takes "count", "name"`, ""},
		{`{"limit": 1, "body": {"count": {"a": [1]}}}`, `invalid arguments: "body.count" must be a number, got {"a":[1]}`, ""},
		// A JSON number beyond float64's range is a number, too large to
		// read: said so, not "it must be a number".
		{`{"limit": 1, "body": {"count": 1e400}}`, `invalid arguments: "body.count" must be a number of magnitude below about 1.8e308 (a double), got 1e400`, ""},
		{`{"limit": 1, "body": {"count": -2E+999}}`, `invalid arguments: "body.count" must be a number of magnitude below about 1.8e308 (a double), got -2E+999`, ""},
		// Coercible strings are accepted and sent typed.
		{`{"limit": "2", "dryRun": "true", "body": {"count": "1.5"}}`, `{"ok":true}`, `limit=2&dryRun=true {"count":1.5}`},
		// A coercible string next to a real problem: the problem is reported.
		{`{"limit": "2", "dryRun": "maybe"}`, `invalid arguments: "dryRun" must be a boolean, got "maybe"`, ""},
		// What the agent sent is quoted as it sent it: no \u0026 for &.
		{`{"limit": "1&admin=<x>"}`, `invalid arguments: "limit" must be an integer >= 1, got "1&admin=<x>"`, ""},
	}
	for _, tt := range tests {
		checkArgCase(t, rt, "addItem", tt, got)
	}
}

const intFormatSpec = `openapi: 3.0.3
info: {title: ints, version: "1"}
paths:
  /n/{n}:
    post:
      operationId: putNum
      parameters:
        - {name: n, in: path, required: true, schema: {type: integer, format: int32}}
        - {name: big, in: query, schema: {type: integer, format: int64}}
        - {name: ids, in: query, schema: {type: array, items: {type: integer, format: int32}}}
        - {name: pat, in: query, schema: {type: string, pattern: "^[a-z]+$"}}
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {count: {type: integer, format: int32, minimum: 0}}}
      responses: {"200": {description: ok}}
`

// TestIntFormatRange calls a tool with integers outside their format's
// range (int32, int64), which jsonschema-go does not assert: they are
// refused as bad arguments, not sent to an upstream that would wrap them
// around or fail; values at the bounds, exact beyond float64, still go.
func TestIntFormatRange(t *testing.T) {
	rt, got := argRuntime(t, intFormatSpec, true)
	const i32 = "within the int32 range, -2147483648 to 2147483647"
	const i64 = "within the int64 range, -9223372036854775808 to 9223372036854775807"
	tests := []argCase{
		{`{"n": 2147483648}`, `invalid arguments: "n" must be an integer ` + i32 + `, got 2147483648`, ""},
		{`{"n": -2147483649}`, `invalid arguments: "n" must be an integer ` + i32 + `, got -2147483649`, ""},
		{`{"n": "4294967296"}`, `invalid arguments: "n" must be an integer ` + i32 + `, got 4294967296`, ""},
		{`{"n": 3e9}`, `invalid arguments: "n" must be an integer ` + i32 + `, got 3000000000`, ""},
		{`{"n": 1, "big": 9223372036854775808}`, `invalid arguments: "big" must be an integer ` + i64 + `, got 9223372036854775808`, ""},
		{`{"n": 1, "big": -99999999999999999999999}`, `invalid arguments: "big" must be an integer ` + i64 + `, got -99999999999999999999999`, ""},
		{`{"n": 1, "big": 9.3e18}`, `invalid arguments: "big" must be an integer ` + i64 + `, got 9300000000000000000`, ""},
		{`{"n": 1, "ids": [1, 2147483648]}`, `invalid arguments: "ids[1]" must be an integer ` + i32 + `, got 2147483648`, ""},
		{`{"n": 1, "body": {"count": 2147483648}}`, `invalid arguments: "body.count" must be an integer >= 0 ` + i32 + `, got 2147483648`, ""},
		// With another keyword the one-pass checker leaves to the
		// validator (a pattern that needs it is not one here, but an
		// escaped string is): the same refusal.
		{`{"n": 2147483648, "pat": "a\u0062"}`, `invalid arguments: "n" must be an integer ` + i32 + `, got 2147483648`, ""},
		// Beside another problem, the range is one the message may name.
		{`{"n": 2147483648, "pat": "A"}`, `invalid arguments: "n" must be an integer ` + i32 + `, got 2147483648`, ""},
		// The bounds themselves go, as written.
		{`{"n": 2147483647, "big": 9223372036854775807}`, `{"ok":true}`, `/n/2147483647?big=9223372036854775807 `},
		{`{"n": -2147483648, "big": -9223372036854775808, "body": {"count": 0}}`, `{"ok":true}`, `/n/-2147483648?big=-9223372036854775808 {"count":0}`},
		{`{"n": 2147483647.0}`, `{"ok":true}`, `/n/2147483647? `},
	}
	for _, tt := range tests {
		checkArgCase(t, rt, "putNum", tt, got)
	}
}

// TestArgumentsNotObjectPlainWords: arguments that are not an object, to a
// tool or to call_operation, are refused in JSON's words, not the
// decoder's (which name Go types).
func TestArgumentsNotObjectPlainWords(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`[1]`, "arguments must be a JSON object, not an array"},
		{`"x"`, "arguments must be a JSON object, not a string"},
		{`1.5`, "arguments must be a JSON object, not a number"},
		{`true`, "arguments must be a JSON object, not a boolean"},
	} {
		_, err := bridge.DecodeArgsForTest(json.RawMessage(tc.raw))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "map[") {
			t.Errorf("%s: %v; want %q", tc.raw, err, tc.want)
		}
	}
}

// argCase is a call's arguments, the result's text it must give, and what
// the upstream must receive ("" for nothing: refused as bad arguments).
type argCase struct {
	args     string
	want     string // the result's text
	upstream string // what the upstream received, "" for nothing
}

// argRuntime serves every operation of spec against an upstream that
// answers {"ok":true} and records each request as its query (path and
// query with withPath) and body, in the slice returned.
func argRuntime(t *testing.T, spec string, withPath bool) (*bridge.Runtime, *[]string) {
	t.Helper()
	got := new([]string)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		line := r.URL.RawQuery + " " + string(body)
		if withPath {
			line = r.URL.EscapedPath() + "?" + line
		}
		*got = append(*got, line)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(up.Close)
	return bridge.NewRuntime(specCatalog(t, spec, bridge.Options{BaseURL: up.URL, Client: up.Client()})), got
}

// checkArgCase calls tool with tt's arguments; got collects what the
// upstream receives.
func checkArgCase(t *testing.T, rt *bridge.Runtime, tool string, tt argCase, got *[]string) {
	t.Helper()
	*got = nil
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: tool, Args: json.RawMessage(tt.args), Caller: bridge.Local})
	if err != nil {
		t.Fatalf("%s: %v", tt.args, err)
	}
	text := out.Result.Content[0].(*mcp.TextContent).Text
	if text != tt.want {
		t.Errorf("%s:\n got %s\nwant %s", tt.args, text, tt.want)
	}
	if wantErr := tt.upstream == ""; out.Result.IsError != wantErr || (wantErr && out.Kind != bridge.BadArguments) {
		t.Errorf("%s: isError %v, kind %s", tt.args, out.Result.IsError, out.Kind)
	}
	if tt.upstream == "" && len(*got) > 0 {
		t.Errorf("%s: the upstream was called: %q", tt.args, *got)
	}
	if tt.upstream != "" && (len(*got) != 1 || (*got)[0] != tt.upstream) {
		t.Errorf("%s: upstream got %q, want %q", tt.args, *got, tt.upstream)
	}
}

const keywordMsgSpec = `openapi: 3.1.0
info: {title: keywords, version: "1"}
paths:
  /k:
    post:
      operationId: kw
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                scores: {type: array, contains: {type: integer, minimum: 10}, minContains: 2, maxContains: 3}
                tags: {type: array, contains: {const: x}}
                labels:
                  type: object
                  propertyNames: {maxLength: 5}
                  additionalProperties: {type: string}
                merged:
                  allOf:
                    - {type: object, properties: {base: {type: string}}}
                  properties: {own: {type: integer}}
                  unevaluatedProperties: false
      responses: {"200": {description: ok}}
`

// TestKeywordMessages: a refusal by contains/minContains, propertyNames or
// unevaluatedProperties says what the keyword wants in the agent's words,
// not that an array "must be an array" or that a name is a value.
func TestKeywordMessages(t *testing.T) {
	rt, got := argRuntime(t, keywordMsgSpec, false)
	for _, tt := range []argCase{
		{`{"body": {"scores": [10, 1]}}`, `invalid arguments: "body.scores" must contain 2 to 3 items that are an integer >= 10, got [10,1] (1 such)`, ""},
		{`{"body": {"scores": [10, 11, 12, 13]}}`, `invalid arguments: "body.scores" must contain 2 to 3 items that are an integer >= 10, got [10,11,12,13] (4 such)`, ""},
		{`{"body": {"tags": ["y"]}}`, `invalid arguments: "body.tags" must contain at least 1 item that is exactly "x", got ["y"] (0 such)`, ""},
		{`{"body": {"scores": [10, 11], "tags": ["x"]}}`, `{"ok":true}`, ` {"scores":[10,11],"tags":["x"]}`},
		{`{"body": {"labels": {"colour": "red"}}}`, `invalid arguments: "body.labels" has a property named "colour": its property names must be a string of at most 5 characters`, ""},
		{`{"body": {"merged": {"base": "a", "own": 1, "bsae": 2}}}`, `invalid arguments: "body.merged" has no property "bsae" (did you mean "base"?); it takes "base", "own"`, ""},
	} {
		checkArgCase(t, rt, "kw", tt, got)
	}
}
