package whitelist_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

// loadInline loads a spec written in the test.
func loadInline(t testing.TB, spec string) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(spec))
	if err != nil {
		t.Fatalf("loading inline spec: %v", err)
	}
	return doc
}

func mustParse(t testing.TB, in string) *whitelist.Policy {
	t.Helper()
	p, err := whitelist.Parse(strings.NewReader(in))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

// selected is the comparable part of a whitelist.Operation.
type selected struct {
	Route, OperationID, Name, Description, Title string
	Annotations                                  *whitelist.Annotations
	Timeout                                      time.Duration
}

// summarize checks that each operation points into doc and returns the
// comparable part.
func summarize(t testing.TB, doc *openapi3.T, ops []whitelist.Operation) []selected {
	t.Helper()
	var out []selected
	for _, op := range ops {
		item := doc.Paths.Value(op.Path)
		if item == nil || op.PathItem != item {
			t.Errorf("%s %s: PathItem does not point into the document", op.Method, op.Path)
		} else if op.Op == nil || op.Op != item.GetOperation(op.Method) {
			t.Errorf("%s %s: Op does not point into the document", op.Method, op.Path)
		}
		s := selected{
			Route: op.Method + " " + op.Path, Name: op.Name, Description: op.Description, Title: op.Title,
			Annotations: op.Annotations, Timeout: op.Timeout,
		}
		if op.Op != nil {
			s.OperationID = op.Op.OperationID
		}
		out = append(out, s)
	}
	return out
}

func TestSelect(t *testing.T) {
	doc := loadSpec(t, "petstore.3.0.yaml")
	tests := []struct {
		name      string
		whitelist string
		want      []selected
	}{
		{
			name:      "method and path with the spec's parameter name",
			whitelist: "tools:\n  - {method: GET, path: '/pet/{petId}'}\n",
			want:      []selected{{Route: "GET /pet/{petId}", OperationID: "getPetById"}},
		},
		{
			name:      "other parameter name",
			whitelist: "tools:\n  - {method: delete, path: '/pet/{id}'}\n",
			want:      []selected{{Route: "DELETE /pet/{petId}", OperationID: "deletePet"}},
		},
		{
			name:      "colon parameter",
			whitelist: "tools:\n  - {method: POST, path: '/pet/:petId/uploadImage'}\n",
			want:      []selected{{Route: "POST /pet/{petId}/uploadImage", OperationID: "uploadFile"}},
		},
		{
			name:      "operationId with overrides",
			whitelist: "tools:\n  - operationId: loginUser\n    name: login\n    title: Log in\n    description: d\n    timeout: 2s\n    annotations: {idempotentHint: true}\n",
			want: []selected{{
				Route: "GET /user/login", OperationID: "loginUser", Name: "login", Title: "Log in", Description: "d",
				Timeout: 2 * time.Second, Annotations: &whitelist.Annotations{IdempotentHint: ptr(true)},
			}},
		},
		{
			name:      "tag",
			whitelist: "tools:\n  - tag: store\n    timeout: 5s\n",
			want: []selected{
				{Route: "GET /store/inventory", OperationID: "getInventory", Timeout: 5 * time.Second},
				{Route: "POST /store/order", OperationID: "placeOrder", Timeout: 5 * time.Second},
				{Route: "GET /store/order/{orderId}", OperationID: "getOrderById", Timeout: 5 * time.Second},
				{Route: "DELETE /store/order/{orderId}", OperationID: "deleteOrder", Timeout: 5 * time.Second},
			},
		},
		{
			name: "output sorted by path then method whatever the entry order",
			whitelist: `tools:
  - operationId: deleteUser
  - operationId: updateUser
  - operationId: getUserByName
  - {method: POST, path: /pet}
  - {method: PUT, path: /pet}
  - operationId: logoutUser
`,
			want: []selected{
				{Route: "PUT /pet", OperationID: "updatePet"},
				{Route: "POST /pet", OperationID: "addPet"},
				{Route: "GET /user/logout", OperationID: "logoutUser"},
				{Route: "GET /user/{username}", OperationID: "getUserByName"},
				{Route: "PUT /user/{username}", OperationID: "updateUser"},
				{Route: "DELETE /user/{username}", OperationID: "deleteUser"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, err := mustParse(t, tt.whitelist).Select(doc)
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			if diff := cmp.Diff(tt.want, summarize(t, doc, ops)); diff != "" {
				t.Errorf("Select mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSelectErrors(t *testing.T) {
	doc := loadSpec(t, "petstore.3.0.yaml")
	tests := []struct {
		name      string
		whitelist string
		want      []string
	}{
		{
			name:      "operationId typo",
			whitelist: "tools:\n  - operationId: getPetByID\n",
			want:      []string{`line 2: operationId "getPetByID" matches no operation; did you mean "getPetById" or "getOrderById"?`},
		},
		{
			name:      "operationId far from everything",
			whitelist: "tools:\n  - operationId: listAllTheThings\n",
			want:      []string{`line 2: operationId "listAllTheThings" matches no operation`},
		},
		{
			name:      "path typo",
			whitelist: "tools:\n  - {method: GET, path: '/pets/{id}'}\n",
			want:      []string{`line 2: GET /pets/{id} matches no operation; did you mean "GET /pet/{petId}", "POST /pet/{petId}" or "GET /user/{username}"?`},
		},
		{
			name:      "trailing slash is significant",
			whitelist: "tools:\n  - {method: GET, path: /user/login/}\n",
			want:      []string{`line 2: GET /user/login/ matches no operation; did you mean "GET /user/login", "GET /user/logout" or "GET /user/{username}"?`},
		},
		{
			name:      "path with the server base path",
			whitelist: "tools:\n  - {method: GET, path: /v2/store/inventory}\n",
			want:      []string{`line 2: GET /v2/store/inventory matches no operation; did you mean "GET /store/inventory" or "GET /store/order/{orderId}"?`},
		},
		{
			name:      "method the path lacks",
			whitelist: "tools:\n  - {method: PATCH, path: /pet}\n",
			want:      []string{`line 2: PATCH /pet matches no operation; did you mean "PUT /pet" or "POST /pet"?`},
		},
		{
			name:      "tag typo",
			whitelist: "tools:\n  - tag: stores\n",
			want:      []string{`line 2: tag "stores" matches no operation; did you mean "store"?`},
		},
		{
			name:      "same operation twice",
			whitelist: "tools:\n  - operationId: getPetById\n  - {method: GET, path: '/pet/:id'}\n",
			want:      []string{"line 3: GET /pet/{petId} already selected by the entry at line 2 (each operation may be listed once)"},
		},
		{
			name:      "two entries naming one operation",
			whitelist: "tools:\n  - operationId: placeOrder\n  - {method: POST, path: /store/order}\n",
			want:      []string{"line 3: POST /store/order already selected by the entry at line 2 (each operation may be listed once)"},
		},
		{
			name:      "same tag twice",
			whitelist: "tools:\n  - tag: store\n  - tag: store\n",
			want:      []string{"line 3: GET /store/inventory, POST /store/order, GET /store/order/{orderId}, DELETE /store/order/{orderId} already selected by the entry at line 2 (each operation may be listed once)"},
		},
		{
			name:      "long overlaps are elided",
			whitelist: "tools:\n  - tag: pet\n  - tag: pet\n",
			want:      []string{"line 3: PUT /pet, POST /pet, GET /pet/findByStatus, GET /pet/findByTags, GET /pet/{petId} and 3 more already selected by the entry at line 2 (each operation may be listed once)"},
		},
		{
			name: "every problem at once, in entry order",
			whitelist: `tools:
  - operationId: getInventory
  - tag: user
  - operationId: nope
  - {method: GET, path: /store/inventory}
  - tag: user
`,
			want: []string{
				`line 4: operationId "nope" matches no operation`,
				"line 5: GET /store/inventory already selected by the entry at line 2 (each operation may be listed once)",
				"line 6: POST /user, POST /user/createWithArray, POST /user/createWithList, GET /user/login, GET /user/logout and 3 more already selected by the entry at line 3 (each operation may be listed once)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, err := mustParse(t, tt.whitelist).Select(doc)
			if err == nil {
				t.Fatalf("Select = %d operations, want an error", len(ops))
			}
			if diff := cmp.Diff(tt.want, messages(err)); diff != "" {
				t.Errorf("Select errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSelectCodePolicies covers policies built in code, which Parse has not
// checked: Select validates them itself and names entries by index.
func TestSelectCodePolicies(t *testing.T) {
	doc := loadSpec(t, "petstore.3.0.yaml")
	tests := []struct {
		name    string
		entries []whitelist.Entry
		want    []string
	}{
		{
			name: "duplicate names",
			entries: []whitelist.Entry{
				{OperationID: "getPetById", Name: "pet"},
				{OperationID: "addPet", Name: "add"},
				{OperationID: "deletePet", Name: "pet"},
			},
			want: []string{`entry #3: name "pet" is already used by the entry at entry #1`},
		},
		{
			name: "invalid entries",
			entries: []whitelist.Entry{
				{Tag: "pet", Name: "pets"},
				{Method: "FETCH", Path: "/pet"},
				{},
				{OperationID: "addPet", Timeout: -time.Second},
			},
			want: []string{
				"entry #1: name cannot be used with tag (a tag selects several operations): list the operation by method and path or operationId to override it",
				`entry #2: method "FETCH" is not one of GET, PUT, POST, DELETE, OPTIONS, HEAD, PATCH, TRACE`,
				"entry #3: entry has no selector: set method and path, operationId, or tag",
				"entry #4: timeout -1s is negative",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := (&whitelist.Policy{Entries: tt.entries}).Select(doc)
			if diff := cmp.Diff(tt.want, messages(err)); diff != "" {
				t.Errorf("Select errors mismatch (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("lower-case method", func(t *testing.T) {
		ops, err := (&whitelist.Policy{Entries: []whitelist.Entry{{Method: "get", Path: "/store/inventory"}}}).Select(doc)
		if err != nil {
			t.Fatal(err)
		}
		want := []selected{{Route: "GET /store/inventory", OperationID: "getInventory"}}
		if diff := cmp.Diff(want, summarize(t, doc, ops)); diff != "" {
			t.Errorf("Select mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("nil policy and document", func(t *testing.T) {
		if _, err := (*whitelist.Policy)(nil).Select(doc); err == nil {
			t.Error("nil policy: no error")
		}
		if _, err := whitelist.All().Select(nil); err == nil {
			t.Error("nil document: no error")
		}
	})

	t.Run("zero policy selects nothing", func(t *testing.T) {
		ops, err := (&whitelist.Policy{}).Select(doc)
		if err != nil || len(ops) != 0 {
			t.Errorf("Select = %d operations, %v; want none and no error", len(ops), err)
		}
	})
}

// tricky is a spec with the cases petstore lacks: every method on one path,
// paths out of order, two templates of one shape, a repeated operationId, a
// tag declared but unused, a tag listed twice, a callback and a webhook.
const tricky = `
openapi: 3.1.0
info: {title: tricky, version: "1"}
tags: [{name: unused}, {name: t}]
paths:
  /z:
    get: {operationId: zGet, responses: {"200": {description: ok}}}
  /a:
    trace: {operationId: aTrace, responses: {"200": {description: ok}}}
    patch: {operationId: aPatch, responses: {"200": {description: ok}}}
    head: {operationId: aHead, responses: {"200": {description: ok}}}
    options: {operationId: aOptions, responses: {"200": {description: ok}}}
    delete: {operationId: aDelete, responses: {"200": {description: ok}}}
    post:
      operationId: aPost
      tags: [t, t]
      responses: {"200": {description: ok}}
      callbacks:
        onEvent:
          "{$request.body#/url}":
            post: {operationId: callback, tags: [t], responses: {"200": {description: ok}}}
    put: {operationId: aPut, responses: {"200": {description: ok}}}
    get: {operationId: aGet, tags: [t], responses: {"200": {description: ok}}}
  /items/{id}:
    get: {operationId: dup, responses: {"200": {description: ok}}}
  /items/{name}:
    get: {operationId: dup, responses: {"200": {description: ok}}}
  /files/{name}.{ext}:
    get: {operationId: file, responses: {"200": {description: ok}}}
  /v1/{name}:cancel:
    post: {operationId: cancel, responses: {"200": {description: ok}}}
webhooks:
  hook:
    post: {operationId: hook, tags: [t], responses: {"200": {description: ok}}}
`

func TestSelectTricky(t *testing.T) {
	doc := loadInline(t, tricky)
	tests := []struct {
		name      string
		whitelist string
		want      []string // routes
		wantErr   []string
	}{
		{
			name:      "exact spelling chooses between templates of one shape",
			whitelist: "tools:\n  - {method: GET, path: '/items/{name}'}\n  - {method: GET, path: '/items/:id'}\n",
			want:      []string{"GET /items/{id}", "GET /items/{name}"},
		},
		{
			name:      "several templates of one shape",
			whitelist: "tools:\n  - {method: GET, path: '/items/{x}'}\n",
			wantErr:   []string{"line 2: GET /items/{x} is ambiguous: it matches GET /items/{id}, GET /items/{name}; write the path exactly as the spec does"},
		},
		{
			name:      "parameters inside a segment",
			whitelist: "tools:\n  - {method: GET, path: '/files/{n}.{e}'}\n  - {method: POST, path: '/v1/{id}:cancel'}\n",
			want:      []string{"GET /files/{name}.{ext}", "POST /v1/{name}:cancel"},
		},
		{
			name:      "repeated operationId selects every holder",
			whitelist: "tools:\n  - operationId: dup\n",
			want:      []string{"GET /items/{id}", "GET /items/{name}"},
		},
		{
			name:      "name override on a repeated operationId",
			whitelist: "tools:\n  - {operationId: dup, name: d}\n",
			wantErr:   []string{`line 2: name "d" would be given to 2 operations (GET /items/{id}, GET /items/{name}): a name override needs exactly one`},
		},
		{
			name:      "tag ignores callbacks and webhooks, and repeated tags",
			whitelist: "tools:\n  - tag: t\n",
			want:      []string{"GET /a", "POST /a"},
		},
		{
			name:      "declared tag that no operation carries",
			whitelist: "tools:\n  - tag: unused\n",
			wantErr:   []string{`line 2: tag "unused" is declared but no operation carries it`},
		},
		{
			name:      "webhooks and callbacks are not operations",
			whitelist: "tools:\n  - operationId: hook\n  - operationId: callback\n",
			wantErr: []string{
				`line 2: operationId "hook" matches no operation`,
				`line 3: operationId "callback" matches no operation`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ops, err := mustParse(t, tt.whitelist).Select(doc)
			if diff := cmp.Diff(tt.wantErr, messages(err)); diff != "" {
				t.Errorf("Select errors mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, routes(ops)); diff != "" {
				t.Errorf("Select mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func routes(ops []whitelist.Operation) []string {
	var out []string
	for _, op := range ops {
		out = append(out, op.Method+" "+op.Path)
	}
	return out
}

func TestAll(t *testing.T) {
	t.Run("order", func(t *testing.T) {
		ops, err := whitelist.All().Select(loadInline(t, tricky))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"GET /a", "PUT /a", "POST /a", "DELETE /a", "OPTIONS /a", "HEAD /a", "PATCH /a", "TRACE /a",
			"GET /files/{name}.{ext}", "GET /items/{id}", "GET /items/{name}", "POST /v1/{name}:cancel", "GET /z",
		}
		if diff := cmp.Diff(want, routes(ops)); diff != "" {
			t.Errorf("All().Select mismatch (-want +got):\n%s", diff)
		}
		for _, op := range ops {
			if op.Name != "" || op.Description != "" || op.Title != "" || op.Annotations != nil || op.Timeout != 0 {
				t.Errorf("%s %s has overrides: %+v", op.Method, op.Path, op)
			}
		}
	})

	t.Run("petstore", func(t *testing.T) {
		doc := loadSpec(t, "petstore.3.0.yaml")
		ops, err := whitelist.All().Select(doc)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"PUT /pet", "POST /pet", "GET /pet/findByStatus", "GET /pet/findByTags",
			"GET /pet/{petId}", "POST /pet/{petId}", "DELETE /pet/{petId}", "POST /pet/{petId}/uploadImage",
			"GET /store/inventory", "POST /store/order", "GET /store/order/{orderId}", "DELETE /store/order/{orderId}",
			"POST /user", "POST /user/createWithArray", "POST /user/createWithList", "GET /user/login", "GET /user/logout",
			"GET /user/{username}", "PUT /user/{username}", "DELETE /user/{username}",
		}
		if diff := cmp.Diff(want, routes(ops)); diff != "" {
			t.Errorf("All().Select mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("webhooks only", func(t *testing.T) {
		ops, err := whitelist.All().Select(loadSpec(t, "webhooks-only.3.1.yaml"))
		if err != nil || len(ops) != 0 {
			t.Errorf("All().Select = %v, %v; want no operations and no error", routes(ops), err)
		}
	})

	t.Run("entries add overrides", func(t *testing.T) {
		doc := loadSpec(t, "petstore.3.0.yaml")
		p := &whitelist.Policy{All: true, Entries: []whitelist.Entry{{OperationID: "getInventory", Name: "inventory"}}}
		ops, err := p.Select(doc)
		if err != nil {
			t.Fatal(err)
		}
		if len(ops) != 20 {
			t.Errorf("got %d operations, want 20", len(ops))
		}
		i := slices.IndexFunc(ops, func(op whitelist.Operation) bool { return op.Name != "" })
		if i < 0 || ops[i].Op.OperationID != "getInventory" || ops[i].Name != "inventory" {
			t.Errorf("the override did not land on getInventory: %v", routes(ops))
		}
		p.Entries = append(p.Entries, whitelist.Entry{OperationID: "nope"})
		if _, err := p.Select(doc); err == nil {
			t.Error("an unmatched entry in an All policy gave no error")
		}
	})
}

// TestSelectCopiesAnnotations checks that operations selected by one entry
// do not share the entry's annotations.
func TestSelectCopiesAnnotations(t *testing.T) {
	doc := loadSpec(t, "petstore.3.0.yaml")
	p := mustParse(t, "tools:\n  - tag: store\n    annotations: {readOnlyHint: true}\n")
	ops, err := p.Select(doc)
	if err != nil {
		t.Fatal(err)
	}
	*ops[0].Annotations.ReadOnlyHint = false
	if !*ops[1].Annotations.ReadOnlyHint || !*p.Entries[0].Annotations.ReadOnlyHint {
		t.Error("changing one operation's annotations changed another's or the entry's")
	}
}

// TestSelectSpecificRefinesTag: an entry naming one operation refines a tag
// entry that selects it too, in either order.
func TestSelectSpecificRefinesTag(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromFile("../testdata/specs/petstore.3.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, wl := range []string{
		"tools:\n  - tag: store\n  - {operationId: placeOrder, name: order_pet, timeout: 5s}\n",
		"tools:\n  - {method: POST, path: /store/order, name: order_pet, timeout: 5s}\n  - tag: store\n",
	} {
		p, err := whitelist.Parse(strings.NewReader(wl))
		if err != nil {
			t.Fatal(err)
		}
		ops, err := p.Select(doc)
		if err != nil {
			t.Fatalf("Select(%q): %v", wl, err)
		}
		if len(ops) != 4 {
			t.Errorf("Select(%q) = %d operations, want the 4 store operations", wl, len(ops))
		}
		for _, op := range ops {
			if op.Op.OperationID == "placeOrder" && (op.Name != "order_pet" || op.Timeout != 5*time.Second) {
				t.Errorf("Select(%q): placeOrder got name %q timeout %v, want the specific entry's", wl, op.Name, op.Timeout)
			}
		}
	}
}

// slashSpec has GitHub's contents/{path} (a path-item level parameter
// overridden nowhere), a label-style parameter and a tag over both.
const slashSpec = `openapi: 3.0.3
info: {title: slashes, version: "1"}
paths:
  /repos/{owner}/{repo}/contents/{path}:
    parameters:
      - {name: owner, in: path, required: true, schema: {type: string}}
      - {name: repo, in: path, required: true, schema: {type: string}}
      - {name: path, in: path, required: true, schema: {type: string}}
    get:
      operationId: getContent
      tags: [repos]
      responses: {"200": {description: ok}}
    put:
      operationId: putContent
      tags: [repos]
      parameters:
        - {name: path, in: path, required: true, style: label, schema: {type: string}}
      responses: {"200": {description: ok}}
  /repos/{owner}/{repo}:
    get:
      operationId: getRepo
      tags: [repos]
      parameters:
        - {name: owner, in: path, required: true, schema: {type: string}}
        - {name: repo, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
  /meta:
    get:
      operationId: getMeta
      responses: {"200": {description: ok}}
`

// TestSelectNestedAndSlashes: nestedStyle and allowSlashes reach the
// operations; allowSlashes must name path parameters of style simple.
func TestSelectNestedAndSlashes(t *testing.T) {
	doc := loadInline(t, slashSpec)
	type got struct {
		ID, Nested string
		Slashes    []string
	}
	for _, tc := range []struct {
		name, whitelist string
		want            []got
		errs            []string
	}{
		{
			name:      "by operationId",
			whitelist: "tools:\n  - {operationId: getContent, allowSlashes: [path], nestedStyle: json}\n  - operationId: getRepo\n",
			want:      []got{{ID: "getRepo"}, {ID: "getContent", Nested: "json", Slashes: []string{"path"}}},
		},
		{
			// A tag applies allowSlashes where the parameter qualifies.
			name:      "by tag",
			whitelist: "tools:\n  - {tag: repos, allowSlashes: [path], nestedStyle: dots}\n",
			want: []got{
				{ID: "getRepo", Nested: "dots"},
				{ID: "getContent", Nested: "dots", Slashes: []string{"path"}},
				{ID: "putContent", Nested: "dots"},
			},
		},
		{
			name:      "not a path parameter",
			whitelist: "tools:\n  - {operationId: getContent, allowSlashes: [paht]}\n",
			errs:      []string{`line 2: allowSlashes: "paht" is not a path parameter of GET /repos/{owner}/{repo}/contents/{path} (path parameters: owner, path, repo); did you mean "path"?`},
		},
		{
			name:      "no path parameters",
			whitelist: "tools:\n  - {operationId: getMeta, allowSlashes: [path]}\n",
			errs:      []string{`line 2: allowSlashes: "path" is not a path parameter of GET /meta, which has none`},
		},
		{
			name:      "label style",
			whitelist: "tools:\n  - {operationId: putContent, allowSlashes: [path]}\n",
			errs:      []string{`line 2: allowSlashes: path parameter "path" of PUT /repos/{owner}/{repo}/contents/{path} has style label; allowSlashes needs style simple`},
		},
		{
			name:      "tag without it",
			whitelist: "tools:\n  - {tag: repos, allowSlashes: [file]}\n",
			errs:      []string{`line 2: allowSlashes: "file" is not a path parameter of any operation tagged "repos" (path parameters: owner, path, repo)`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := mustParse(t, tc.whitelist).Select(doc)
			if diff := cmp.Diff(tc.errs, messages(err)); diff != "" {
				t.Fatalf("Select errors mismatch (-want +got):\n%s", diff)
			}
			var g []got
			for _, op := range ops {
				g = append(g, got{ID: op.Op.OperationID, Nested: op.NestedStyle, Slashes: op.AllowSlashes})
			}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("Select mismatch (-want +got):\n%s", diff)
			}
		})
	}
	// Entries built in code are checked too.
	p := &whitelist.Policy{Entries: []whitelist.Entry{{OperationID: "getContent", NestedStyle: "rails", AllowSlashes: []string{"path", "path"}}}}
	_, err := p.Select(doc)
	want := []string{
		`entry #1: nestedStyle "rails" is not one of brackets, brackets-empty, dots, json`,
		`entry #1: allowSlashes lists "path" twice`,
	}
	if diff := cmp.Diff(want, messages(err)); diff != "" {
		t.Errorf("Select(code policy) errors mismatch (-want +got):\n%s", diff)
	}
}

// TestSelectTwoTagsOverRefinedOperation: two tags selecting one operation
// are an overlap in every order of the entries, also when an entry naming
// the operation refines it; before, the orders that put the specific entry
// before the second tag kept only that tag's settings, dropping the first
// tag's access list.
func TestSelectTwoTagsOverRefinedOperation(t *testing.T) {
	doc := loadInline(t, `openapi: 3.0.3
info: {title: two tags, version: "1"}
paths:
  /x:
    delete:
      operationId: dropX
      tags: [admin, public]
      responses: {"204": {description: gone}}
`)
	admin := "  - tag: admin\n    allow: {keys: [\"api-key:ops\"]}\n"
	public := "  - tag: public\n"
	specific := "  - {operationId: dropX, timeout: 5s}\n"
	for _, order := range [][]string{
		{admin, public, specific},
		{specific, admin, public},
		{admin, specific, public},
		{public, specific, admin},
		{specific, public, admin},
	} {
		p := mustParse(t, "tools:\n"+strings.Join(order, ""))
		ops, err := p.Select(doc)
		if err == nil {
			t.Errorf("order %q: selected %d operation(s), want an overlap error", order, len(ops))
			continue
		}
		if !strings.Contains(err.Error(), "already selected by the entry at") {
			t.Errorf("order %q: %v, want an overlap error", order, err)
		}
	}
}
