package whitelist_test

import (
	"errors"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

func ptr[T any](v T) *T { return &v }

// messages splits an error returned by Parse or Select into its problems.
func messages(err error) []string {
	if err == nil {
		return nil
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range joined.Unwrap() {
		out = append(out, e.Error())
	}
	return out
}

func TestParse(t *testing.T) {
	full, err := os.ReadFile("testdata/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	quiet := &whitelist.Annotations{OpenWorldHint: ptr(false)}
	tests := []struct {
		name string
		in   string
		want *whitelist.Policy
	}{
		{
			name: "operationId only",
			in:   "tools:\n  - operationId: listPets\n",
			want: &whitelist.Policy{Entries: []whitelist.Entry{{OperationID: "listPets", Line: 2}}},
		},
		{
			name: "every key",
			in:   string(full),
			want: &whitelist.Policy{Entries: []whitelist.Entry{
				{
					Method: "GET", Path: "/pets/:petId",
					Name: "get_pet", Title: "Get pet", Description: "Fetch one pet.",
					Annotations: &whitelist.Annotations{
						ReadOnlyHint: ptr(true), DestructiveHint: ptr(false),
						IdempotentHint: ptr(true), OpenWorldHint: ptr(false),
					},
					Timeout:      90 * time.Second,
					NestedStyle:  "dots",
					AllowSlashes: []string{"petId"},
					Line:         4,
				},
				{OperationID: "listPets", Line: 17},
				{Tag: "store", Annotations: quiet, Timeout: 500 * time.Millisecond, Line: 18},
				{Method: "DELETE", Path: "/pets/{petId}", Annotations: quiet, Line: 21},
			}},
		},
		{
			name: "flow style",
			in:   `{version: 1, tools: [{method: patch, path: /a}, {tag: t}]}`,
			want: &whitelist.Policy{Entries: []whitelist.Entry{
				{Method: "PATCH", Path: "/a", Line: 1},
				{Tag: "t", Line: 1},
			}},
		},
		{
			name: "numbers and booleans as names",
			in:   "tools:\n  - operationId: 123\n    name: true\n",
			want: &whitelist.Policy{Entries: []whitelist.Entry{{OperationID: "123", Name: "true", Line: 2}}},
		},
		{
			name: "empty annotations",
			in:   "tools:\n  - tag: t\n    annotations: {}\n",
			want: &whitelist.Policy{Entries: []whitelist.Entry{{Tag: "t", Annotations: &whitelist.Annotations{}, Line: 2}}},
		},
		{
			name: "document marker and comments",
			in:   "# c\n---\ntools: # c\n  - tag: t # c\n...\n",
			want: &whitelist.Policy{Entries: []whitelist.Entry{{Tag: "t", Line: 4}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := whitelist.Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	const allowedEntry = "method, path, operationId, tag, name, description, title, annotations, timeout, nestedStyle, allowSlashes, pinned, allow, fields, maxItems, redact, resource"
	tests := []struct {
		name string
		in   string
		want []string
	}{
		// The document as a whole.
		{"empty", "", []string{"line 1: whitelist is empty: expected a mapping with a tools list"}},
		{"comments only", "# nothing\n# here\n", []string{"line 1: whitelist is empty: expected a mapping with a tools list"}},
		{"null document", "---\n", []string{"line 1: whitelist is empty: expected a mapping with a tools list"}},
		{"syntax", "tools:\n  - tag: [a,\n", []string{"line 2: invalid YAML: did not find expected node content"}},
		{"tab indentation", "tools:\n\t- tag: a\n", []string{"line 2: invalid YAML: found character that cannot start any token"}},
		{"unknown anchor", "tools: *nope\n", []string{"invalid YAML: unknown anchor 'nope' referenced"}},
		{"two documents", "tools: [{tag: a}]\n---\ntools: [{tag: b}]\n", []string{"line 2: only one YAML document is allowed"}},
		{"top-level list", "- tag: a\n", []string{`line 1: the top level must be a mapping with a tools list (put the list under a "tools" key)`}},
		{"top-level scalar", "hello\n", []string{"line 1: the top level must be a mapping with a tools list"}},
		{"missing tools", "version: 1\n", []string{"line 1: missing the tools list"}},
		{"tools empty", "tools: []\n", []string{"line 1: tools is empty: list at least one operation"}},
		{"tools null", "tools:\n", []string{"line 1: tools must be a list of entries"}},
		{"tools mapping", "tools:\n  tag: a\n", []string{"line 1: tools must be a list of entries"}},
		{"bad version", "version: 2\ntools: [{tag: a}]\n", []string{`line 1: unsupported version "2": the only version is 1`}},
		{"string version", "version: \"1\"\ntools: [{tag: a}]\n", []string{`line 1: unsupported version "1": the only version is 1`}},
		{
			"unknown top-level key", "tools: [{tag: a}]\nservers: []\n",
			[]string{`line 2: unknown key "servers" in the top level (allowed: version, tools)`},
		},
		{
			"repeated top-level key", "tools: [{tag: a}]\ntools: [{tag: b}]\n",
			[]string{`line 2: key "tools" repeated in the top level (first at line 1)`},
		},
		{"non-string key", "tools:\n  - [a]: b\n    tag: t\n", []string{"line 2: a tools entry keys must be strings"}},

		// Entries.
		{
			"scalar entry", "tools:\n  - listPets\n",
			[]string{"line 2: a tools entry must be a mapping (to select by operationId write `- operationId: listPets`)"},
		},
		{
			"unknown key with suggestion", "tools:\n  - tag: a\n  - operationID: listPets\n",
			[]string{`line 3: unknown key "operationID" in a tools entry (allowed: ` + allowedEntry + `); did you mean "operationId"?`},
		},
		{
			"unknown key without suggestion", "tools:\n  - tag: a\n    summary: x\n",
			[]string{`line 3: unknown key "summary" in a tools entry (allowed: ` + allowedEntry + `)`},
		},
		{
			"repeated entry key", "tools:\n  - tag: a\n    tag: b\n",
			[]string{`line 3: key "tag" repeated in a tools entry (first at line 2)`},
		},
		{
			"bad method", "tools:\n  - path: /pets\n    method: fetch\n",
			[]string{`line 3: method "FETCH" is not one of GET, PUT, POST, DELETE, OPTIONS, HEAD, PATCH, TRACE`},
		},
		{
			"connect is not exposed", "tools:\n  - {method: CONNECT, path: /x}\n",
			[]string{`line 2: method "CONNECT" is not one of GET, PUT, POST, DELETE, OPTIONS, HEAD, PATCH, TRACE`},
		},
		{
			"two selectors", "tools:\n  - operationId: listPets\n    tag: pets\n",
			[]string{"line 2: entry has more than one selector (operationId, tag): use exactly one"},
		},
		{
			"three selectors", "tools:\n  - {method: GET, path: /a, operationId: a, tag: b}\n",
			[]string{"line 2: entry has more than one selector (method+path, operationId, tag): use exactly one"},
		},
		{
			"no selector", "tools:\n  - name: x\n    timeout: 1s\n",
			[]string{"line 2: entry has no selector: set method and path, operationId, or tag"},
		},
		{
			"path without method", "tools:\n  - tag: a\n  - path: /pets\n",
			[]string{`line 3: path "/pets" requires a method`},
		},
		{
			"method without path", "tools:\n  - method: GET\n",
			[]string{"line 2: method GET requires a path"},
		},
		{
			"method and operationId", "tools:\n  - method: GET\n    operationId: a\n",
			[]string{
				"line 2: entry has more than one selector (method+path, operationId): use exactly one",
				"line 2: method GET requires a path",
			},
		},
		{
			"relative path", "tools:\n  - {method: GET, path: pets}\n",
			[]string{`line 2: path "pets": must start with "/" (write it as under the spec's paths)`},
		},
		{
			"path with query", "tools:\n  - {method: GET, path: '/pets?limit=1'}\n",
			[]string{`line 2: path "/pets?limit=1": must not contain a query or fragment`},
		},
		{
			"path with a space", "tools:\n  - {method: GET, path: '/pets /x'}\n",
			[]string{`line 2: path "/pets /x": must not contain whitespace`},
		},
		{
			"unbalanced braces", "tools:\n  - {method: GET, path: '/pets/{id'}\n",
			[]string{`line 2: path "/pets/{id": has unbalanced braces`},
		},
		{
			"brace across segments", "tools:\n  - {method: GET, path: '/pets/{a/b}'}\n",
			[]string{`line 2: path "/pets/{a/b}": has unbalanced braces`},
		},
		{
			"bad duration", "tools:\n  - tag: a\n    timeout: soon\n",
			[]string{`line 3: timeout "soon" is not a duration such as 10s, 1m30s or 500ms`},
		},
		{
			"duration without unit", "tools:\n  - tag: a\n    timeout: 10\n",
			[]string{`line 3: timeout "10" is not a duration such as 10s, 1m30s or 500ms`},
		},
		{
			"negative duration", "tools:\n  - tag: a\n    timeout: -5s\n",
			[]string{"line 3: timeout -5s must be positive (omit it to keep the default)"},
		},
		{
			"zero duration", "tools:\n  - tag: a\n    timeout: 0s\n",
			[]string{"line 3: timeout 0s must be positive (omit it to keep the default)"},
		},
		{
			"tag with name", "tools:\n  - tag: store\n    name: store_ops\n",
			[]string{"line 3: name cannot be used with tag (a tag selects several operations): list the operation by method and path or operationId to override it"},
		},
		{
			"tag with description and title", "tools:\n  - tag: store\n    description: d\n    title: t\n",
			[]string{
				"line 3: description cannot be used with tag (a tag selects several operations): list the operation by method and path or operationId to override it",
				"line 4: title cannot be used with tag (a tag selects several operations): list the operation by method and path or operationId to override it",
			},
		},
		{
			"problems in line order within an entry", "tools:\n  - tag: a\n    bogus: x\n    title: t\n",
			[]string{
				`line 3: unknown key "bogus" in a tools entry (allowed: ` + allowedEntry + `)`,
				"line 4: title cannot be used with tag (a tag selects several operations): list the operation by method and path or operationId to override it",
			},
		},
		{"empty string", "tools:\n  - operationId: ''\n", []string{"line 2: operationId is empty"}},
		{"null value", "tools:\n  - tag:\n", []string{"line 2: tag is empty"}},
		{"list value", "tools:\n  - tag: [a, b]\n", []string{"line 2: tag must be a string"}},
		{
			"annotation not a boolean", "tools:\n  - tag: a\n    annotations: {readOnlyHint: yes}\n",
			[]string{"line 3: readOnlyHint must be true or false"},
		},
		{
			"annotations not a mapping", "tools:\n  - tag: a\n    annotations: true\n",
			[]string{"line 3: annotations must be a mapping of readOnlyHint, destructiveHint, idempotentHint, openWorldHint to true or false"},
		},
		{
			"unknown annotation", "tools:\n  - tag: a\n    annotations:\n      readonlyHint: true\n",
			[]string{`line 4: unknown key "readonlyHint" in annotations (allowed: readOnlyHint, destructiveHint, idempotentHint, openWorldHint); did you mean "readOnlyHint"?`},
		},
		{
			"duplicate names", "tools:\n  - {operationId: a, name: x}\n  - {operationId: b, name: y}\n  - {operationId: c, name: x}\n",
			[]string{`line 4: name "x" is already used by the entry at line 2`},
		},
		{
			"unknown nested style", "tools:\n  - tag: a\n    nestedStyle: dot\n",
			[]string{`line 3: nestedStyle "dot" is not one of brackets, brackets-empty, dots, json; did you mean "dots"?`},
		},
		{"empty nested style", "tools:\n  - tag: a\n    nestedStyle: ''\n", []string{"line 3: nestedStyle is empty"}},
		{"nested style list", "tools:\n  - tag: a\n    nestedStyle: [json]\n", []string{"line 3: nestedStyle must be a string"}},
		{
			"allowSlashes scalar", "tools:\n  - tag: a\n    allowSlashes: path\n",
			[]string{"line 3: allowSlashes must be a list of path parameter names (write allowSlashes: [path])"},
		},
		{
			"allowSlashes boolean", "tools:\n  - tag: a\n    allowSlashes: true\n",
			[]string{"line 3: allowSlashes must be a list of path parameter names"},
		},
		{"allowSlashes null", "tools:\n  - tag: a\n    allowSlashes:\n", []string{"line 3: allowSlashes must be a list of path parameter names"}},
		{
			"allowSlashes empty", "tools:\n  - tag: a\n    allowSlashes: []\n",
			[]string{"line 3: allowSlashes is empty: list at least one path parameter (or leave the key out)"},
		},
		{
			"allowSlashes items", "tools:\n  - tag: a\n    allowSlashes:\n      - path\n      - ''\n      - [x]\n      - path\n",
			[]string{
				"line 5: allowSlashes items must be non-empty path parameter names",
				"line 6: allowSlashes items must be non-empty path parameter names",
				`line 7: allowSlashes lists "path" twice`,
			},
		},
		// fields and allow's lists were said to hold path parameters, and a
		// bad allow list was also reported as listing nobody.
		{
			"fields scalar", "tools:\n  - operationId: a\n    fields: total\n",
			[]string{"line 3: fields must be a list of field paths (write fields: [total])"},
		},
		{
			"fields empty", "tools:\n  - operationId: a\n    fields: []\n",
			[]string{"line 3: fields is empty: list at least one field path (or leave the key out)"},
		},
		{
			"allow keys scalar", "tools:\n  - operationId: a\n    allow: {keys: api-key:0}\n",
			[]string{"line 3: keys must be a list of caller identities (api-key:0, jwt:ISSUER|SUBJECT) (write keys: [api-key:0])"},
		},
		{
			"allow scopes empty", "tools:\n  - operationId: a\n    allow: {scopes: []}\n",
			[]string{"line 3: scopes is empty: list at least one scope (or leave the key out)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := whitelist.Parse(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("Parse = %+v, want an error", got)
			}
			if got != nil {
				t.Errorf("Parse returned a policy with an error: %+v", got)
			}
			if diff := cmp.Diff(tt.want, messages(err)); diff != "" {
				t.Errorf("Parse errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseReportsEverything checks that one call reports every problem of
// a file, in line order, each with its own line.
func TestParseReportsEverything(t *testing.T) {
	f, err := os.Open("testdata/broken.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = whitelist.Parse(f)
	want := []string{
		`line 2: unsupported version "2": the only version is 1`,
		`line 4: method "FETCH" is not one of GET, PUT, POST, DELETE, OPTIONS, HEAD, PATCH, TRACE`,
		`line 6: unknown key "operationID" in a tools entry (allowed: method, path, operationId, tag, name, description, title, annotations, timeout, nestedStyle, allowSlashes, pinned, allow, fields, maxItems, redact, resource); did you mean "operationId"?`,
		"line 8: name cannot be used with tag (a tag selects several operations): list the operation by method and path or operationId to override it",
		`line 9: path "/pets" requires a method`,
		`line 12: timeout "soon" is not a duration such as 10s, 1m30s or 500ms`,
		"line 13: readOnlyHint must be true or false",
	}
	if diff := cmp.Diff(want, messages(err)); diff != "" {
		t.Errorf("Parse errors mismatch (-want +got):\n%s", diff)
	}
}

func TestParseReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := whitelist.Parse(iotest.ErrReader(boom))
	if !errors.Is(err, boom) {
		t.Fatalf("Parse error = %v, want it to wrap %v", err, boom)
	}
}

func TestParseTooLarge(t *testing.T) {
	in := "tools:\n  - tag: a\n" + strings.Repeat("# padding\n", 500_000)
	_, err := whitelist.Parse(strings.NewReader(in))
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("Parse error = %v, want a size error", err)
	}
}

func TestParsePinnedAndAllow(t *testing.T) {
	p, err := whitelist.Parse(strings.NewReader(`tools:
  - operationId: a
    pinned: true
    allow: {keys: ["api-key:0"], subjects: [alice], scopes: ["pets:read"]}
  - operationId: b
`))
	if err != nil {
		t.Fatal(err)
	}
	e := p.Entries[0]
	if !e.Pinned || e.Allow == nil || e.Allow.Keys[0] != "api-key:0" || e.Allow.Subjects[0] != "alice" || e.Allow.Scopes[0] != "pets:read" {
		t.Errorf("entry 0: %+v %+v", e, e.Allow)
	}
	if p.Entries[1].Pinned || p.Entries[1].Allow != nil {
		t.Errorf("entry 1: %+v", p.Entries[1])
	}
	for _, bad := range []struct{ doc, want string }{
		{"tools:\n  - operationId: a\n    pinned: yes please\n", "pinned must be true or false"},
		{"tools:\n  - operationId: a\n    allow: {}\n", "allow lists nobody"},
		{"tools:\n  - operationId: a\n    allow: {roles: [x]}\n", `unknown key "roles"`},
		{"tools:\n  - operationId: a\n    allow: [x]\n", "allow must be a mapping"},
		// A caller's id is api-key:… or jwt:…: a bare key name matched no
		// caller, locking out the one it meant, without a word.
		{"tools:\n  - operationId: a\n    allow: {keys: [admin]}\n", `line 3: allow keys: "admin" is no caller's id: an API key is api-key:NAME`},
		{"tools:\n  - operationId: a\n    allow: {keys: [\"api-key:\"]}\n", `"api-key:" is no caller's id`},
		{"tools:\n  - operationId: a\n    allow: {keys: [\"apikey:admin\"]}\n", `"apikey:admin" is no caller's id`},
	} {
		_, err := whitelist.Parse(strings.NewReader(bad.doc))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v; want %q", bad.doc, err, bad.want)
		}
	}
}
