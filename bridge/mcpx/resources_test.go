package mcpx_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/mcpx"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

const petSecret = "s3cret-upstream-token-9f8e7d"

const resourcesSpec = `
openapi: 3.0.3
info:
  title: pets
  version: "1"
  description: "Authenticate with Bearer ` + petSecret + `."
paths:
  /pets:
    get:
      operationId: listPets
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Pet"}}
    post:
      operationId: createPet
      responses: {"201": {description: created}}
  /pets/{petId}:
    get:
      operationId: showPetById
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Pet"}
  /kinds/{kind}:
    get:
      operationId: showKind
      parameters:
        - {name: kind, in: path, required: true, schema: {type: string, enum: [cat, dog, cow, camel]}}
      responses: {"200": {description: ok}}
  /logo:
    get:
      operationId: logo
      responses:
        "200":
          description: ok
          content:
            image/png:
              schema: {type: string, format: binary}
  /unused:
    get:
      operationId: unused
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Unused"}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
  schemas:
    Pet:
      type: object
      properties:
        id: {type: integer}
        owner: {$ref: "#/components/schemas/Owner"}
        password: {type: string}
      example: {id: 1, password: hunter2-example-secret}
    Owner:
      type: object
      properties:
        name: {type: string}
    Unused:
      type: object
`

const resourcesWhitelist = `
tools:
  - operationId: listPets
    resource: {uri: "api://pets", name: pets, mimeType: application/json}
  - operationId: showPetById
    resource:
      uri: "api://pets/{petId}"
      name: pet
      complete: {petId: {tool: listPets, field: id}}
  - operationId: showKind
    resource: {uri: "api://kinds/{kind}", name: kind}
  - operationId: logo
    resource: {uri: "api://logo", name: logo}
`

var pngBytes = []byte("\x89PNG\r\n\x1a\nnot-really-a-png")

// petUpstream serves the pets API and records the paths it was asked for.
type petUpstream struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newPetUpstream(t *testing.T) *petUpstream {
	t.Helper()
	u := &petUpstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.paths = append(u.paths, r.URL.Path)
		u.mu.Unlock()
		switch {
		case r.URL.Path == "/pets":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`[{"id":1},{"id":12},{"id":123}]`))
		case r.URL.Path == "/pets/404":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"message":"no such pet"}`))
		case r.URL.Path == "/pets/500":
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`database on fire`))
		case strings.HasPrefix(r.URL.Path, "/pets/"):
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":` + strings.TrimPrefix(r.URL.Path, "/pets/") + `}`))
		case r.URL.Path == "/logo":
			w.Header().Set("Content-Type", "image/png")
			w.Write(pngBytes)
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("path " + r.URL.Path))
		}
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *petUpstream) seen() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := slices.Clone(u.paths)
	u.paths = nil
	return out
}

// resourceCatalog builds the catalog of resourcesSpec with whitelist wl
// against up, with the spec document (openapi://spec) and an upstream
// credential.
func resourceCatalog(t *testing.T, wl string, up *petUpstream) *bridge.Catalog {
	t.Helper()
	res, err := specloader.LoadData(t.Context(), []byte(resourcesSpec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := whitelist.Parse(strings.NewReader(wl))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := pol.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{
		BaseURL: up.URL, Client: up.Client(), Version: "test", Spec: res.Doc,
		Credentials: bridge.Credentials{BearerToken: petSecret},
	})
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// connectResources connects a client to srv in memory; notes, when not
// nil, receives one value per resources/list_changed notification.
func connectResources(t *testing.T, srv *mcp.Server, notes chan<- struct{}) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatalf("server.Connect: %v", err)
	}
	opts := &mcp.ClientOptions{}
	if notes != nil {
		opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) { notes <- struct{}{} }
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "test"}, opts).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatalf("client.Connect: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

func listed(t *testing.T, cs *mcp.ClientSession) (resources, templates []string) {
	t.Helper()
	lr, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	for _, r := range lr.Resources {
		resources = append(resources, r.URI)
	}
	lt, err := cs.ListResourceTemplates(t.Context(), nil)
	if err != nil {
		t.Fatalf("resources/templates/list: %v", err)
	}
	for _, r := range lt.ResourceTemplates {
		templates = append(templates, r.URITemplate)
	}
	slices.Sort(resources)
	slices.Sort(templates)
	return resources, templates
}

func TestResourcesListAndRead(t *testing.T) {
	up := newPetUpstream(t)
	rec := &recorder{}
	rt := bridge.NewRuntime(resourceCatalog(t, resourcesWhitelist, up), rec.middleware)
	cs := connectResources(t, mcpx.New(rt, mcpx.Options{}).MCP(), nil)

	resources, templates := listed(t, cs)
	if diff := cmp.Diff([]string{"api://logo", "api://pets", "openapi://spec"}, resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"api://kinds/{kind}", "api://pets/{petId}"}, templates); diff != "" {
		t.Errorf("templates (-want +got):\n%s", diff)
	}

	tests := []struct {
		uri, path, mime, text string
		blob                  []byte
	}{
		{uri: "api://pets", path: "/pets", mime: "application/json", text: `[{"id":1},{"id":12},{"id":123}]`},
		{uri: "api://pets/12", path: "/pets/12", mime: "application/json", text: `{"id":12}`},
		{uri: "api://kinds/cow", path: "/kinds/cow", mime: "text/plain", text: "path /kinds/cow"},
		{uri: "api://logo", path: "/logo", mime: "image/png", blob: pngBytes},
	}
	for _, tt := range tests {
		res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: tt.uri})
		if err != nil {
			t.Errorf("read %s: %v", tt.uri, err)
			continue
		}
		want := []*mcp.ResourceContents{{URI: tt.uri, MIMEType: tt.mime, Text: tt.text, Blob: tt.blob}}
		if diff := cmp.Diff(want, res.Contents); diff != "" {
			t.Errorf("read %s (-want +got):\n%s", tt.uri, diff)
		}
		if diff := cmp.Diff([]string{tt.path}, up.seen()); diff != "" {
			t.Errorf("read %s: upstream paths (-want +got):\n%s", tt.uri, diff)
		}
	}
	// Every read went through the runtime's middleware chain.
	var tools []string
	for _, c := range rec.all() {
		tools = append(tools, c.Tool+"/"+c.Transport)
	}
	if diff := cmp.Diff([]string{"listPets/stdio", "showPetById/stdio", "showKind/stdio", "logo/stdio"}, tools); diff != "" {
		t.Errorf("calls seen by the middleware (-want +got):\n%s", diff)
	}
}

func TestResourceReadErrors(t *testing.T) {
	up := newPetUpstream(t)
	rt := bridge.NewRuntime(resourceCatalog(t, resourcesWhitelist, up))
	cs := connectResources(t, mcpx.New(rt, mcpx.Options{}).MCP(), nil)
	tests := []struct {
		uri     string
		code    int64
		message string
	}{
		{"api://pets/404", mcp.CodeResourceNotFound, "Resource not found"},
		{"api://pets/500", jsonrpc.CodeInternalError, "database on fire"},
		{"api://pets/abc", jsonrpc.CodeInvalidParams, `"abc" is not a valid integer`},
		{"api://nothing/here", mcp.CodeResourceNotFound, "Resource not found"},
	}
	for _, tt := range tests {
		_, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: tt.uri})
		var jerr *jsonrpc.Error
		if !errors.As(err, &jerr) {
			t.Errorf("read %s: err = %v, want a JSON-RPC error", tt.uri, err)
			continue
		}
		if jerr.Code != tt.code || !strings.Contains(jerr.Message, tt.message) {
			t.Errorf("read %s: error %d %q, want %d containing %q", tt.uri, jerr.Code, jerr.Message, tt.code, tt.message)
		}
	}
	if got := up.seen(); !slices.Equal(got, []string{"/pets/404", "/pets/500"}) {
		t.Errorf("upstream paths = %q, want the 404 and 500 reads only (a bad variable is never sent)", got)
	}
}

func TestResourceCompletion(t *testing.T) {
	up := newPetUpstream(t)
	rt := bridge.NewRuntime(resourceCatalog(t, resourcesWhitelist, up))
	cs := connectResources(t, mcpx.New(rt, mcpx.Options{}).MCP(), nil)
	if cs.InitializeResult().Capabilities.Completions == nil {
		t.Error("completions capability not declared though templates exist")
	}
	complete := func(ref *mcp.CompleteReference, arg, value string) mcp.CompletionResultDetails {
		t.Helper()
		res, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
		if err != nil {
			t.Fatalf("complete %s=%q: %v", arg, value, err)
		}
		return res.Completion
	}
	kind := &mcp.CompleteReference{Type: "ref/resource", URI: "api://kinds/{kind}"}
	pet := &mcp.CompleteReference{Type: "ref/resource", URI: "api://pets/{petId}"}
	tests := []struct {
		name  string
		ref   *mcp.CompleteReference
		arg   string
		value string
		want  mcp.CompletionResultDetails
	}{
		{"enum by prefix", kind, "kind", "c", mcp.CompletionResultDetails{Values: []string{"cat", "cow", "camel"}, Total: 3}},
		{"enum ignores case", kind, "kind", "CA", mcp.CompletionResultDetails{Values: []string{"cat", "camel"}, Total: 2}},
		{"enum, nothing matches", kind, "kind", "x", mcp.CompletionResultDetails{Values: []string{}}},
		{"list operation", pet, "petId", "12", mcp.CompletionResultDetails{Values: []string{"12", "123"}, Total: 2}},
		{"list operation, all", pet, "petId", "", mcp.CompletionResultDetails{Values: []string{"1", "12", "123"}, Total: 3}},
		{"unknown variable", pet, "nope", "", mcp.CompletionResultDetails{Values: []string{}}},
		{"unknown template", &mcp.CompleteReference{Type: "ref/resource", URI: "api://x/{y}"}, "y", "", mcp.CompletionResultDetails{Values: []string{}}},
		{"prompt", &mcp.CompleteReference{Type: "ref/prompt", Name: "p"}, "a", "", mcp.CompletionResultDetails{Values: []string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, complete(tt.ref, tt.arg, tt.value)); diff != "" {
				t.Errorf("completion (-want +got):\n%s", diff)
			}
		})
	}
	if got := up.seen(); !slices.Equal(got, []string{"/pets", "/pets"}) {
		t.Errorf("upstream paths = %q, want /pets once per petId completion", got)
	}
}

func TestResourceCompletionCapped(t *testing.T) {
	// 150 list values: 100 sent, total 150, hasMore.
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var items []string
		for i := range 150 {
			items = append(items, `{"id":"p`+strings.Repeat("x", i%3)+string(rune('a'+i%26))+`-`+strconv.Itoa(i)+`"}`)
		}
		w.Write([]byte(`{"total":150,"items":[` + strings.Join(items, ",") + `]}`))
	}))
	t.Cleanup(up.Close)
	res, err := specloader.LoadData(t.Context(), []byte(`
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /items:
    get: {operationId: listItems, responses: {"200": {description: ok}}}
  /items/{id}:
    get:
      operationId: getItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
`), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := whitelist.Parse(strings.NewReader("tools:\n  - operationId: listItems\n  - operationId: getItem\n    resource: {uri: \"api://items/{id}\", complete: {id: {tool: listItems, field: id}}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := pol.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	if err != nil {
		t.Fatal(err)
	}
	cs := connectResources(t, mcpx.New(bridge.NewRuntime(cat), mcpx.Options{}).MCP(), nil)
	out, err := cs.Complete(t.Context(), &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "api://items/{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "p"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := out.Completion; len(c.Values) != 100 || c.Total != 150 || !c.HasMore {
		t.Errorf("completion: %d values, total %d, hasMore %v; want 100, 150, true", len(c.Values), c.Total, c.HasMore)
	}
}

func TestSpecResource(t *testing.T) {
	up := newPetUpstream(t)
	rt := bridge.NewRuntime(resourceCatalog(t, resourcesWhitelist, up))
	cs := connectResources(t, mcpx.New(rt, mcpx.Options{}).MCP(), nil)
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "openapi://spec"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "application/json" {
		t.Fatalf("contents = %+v, want one application/json document", res.Contents)
	}
	text := res.Contents[0].Text
	if strings.Contains(text, petSecret) || strings.Contains(text, "hunter2-example-secret") {
		t.Errorf("the spec resource leaks a secret:\n%s", text)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
		Comps   map[string]map[string]json.RawMessage `json:"components"`
	}
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("openapi://spec is not JSON: %v", err)
	}
	methods := map[string][]string{}
	for p, item := range doc.Paths {
		for m := range item {
			methods[p] = append(methods[p], m)
		}
	}
	want := map[string][]string{"/pets": {"get"}, "/pets/{petId}": {"get"}, "/kinds/{kind}": {"get"}, "/logo": {"get"}}
	if diff := cmp.Diff(want, methods); diff != "" {
		t.Errorf("paths and methods (-want +got):\n%s", diff)
	}
	var schemas []string
	for name := range doc.Comps["schemas"] {
		schemas = append(schemas, name)
	}
	slices.Sort(schemas)
	if diff := cmp.Diff([]string{"Owner", "Pet"}, schemas); diff != "" {
		t.Errorf("component schemas (-want +got):\n%s", diff)
	}
	if _, ok := doc.Comps["securitySchemes"]["key"]; !ok {
		t.Error("security schemes left out")
	}
	if !strings.Contains(text, `"password":{"type":"string"}`) {
		t.Errorf("a schema property named password lost its schema:\n%s", text)
	}
}

func TestResourcesFollowReload(t *testing.T) {
	up := newPetUpstream(t)
	rt := bridge.NewRuntime(resourceCatalog(t, resourcesWhitelist, up))
	srv := mcpx.New(rt, mcpx.Options{})
	notes := make(chan struct{}, 16)
	cs := connectResources(t, srv.MCP(), notes)

	// The same catalog again: nothing changes, nobody is told.
	rt.Swap(resourceCatalog(t, resourcesWhitelist, up))
	select {
	case <-notes:
		t.Fatal("resources/list_changed after a reload that changed nothing")
	case <-time.After(300 * time.Millisecond):
	}
	// Without the logo resource, with a new one for the unused operation,
	// and pets under another name.
	next := strings.Replace(resourcesWhitelist, `  - operationId: logo
    resource: {uri: "api://logo", name: logo}
`, `  - operationId: logo
  - operationId: unused
    resource: {uri: "api://unused", name: unused}
`, 1)
	next = strings.Replace(next, "name: pets,", "name: all-pets,", 1)
	rt.Swap(resourceCatalog(t, next, up))
	select {
	case <-notes:
	case <-time.After(5 * time.Second):
		t.Fatal("no resources/list_changed notification after the reload")
	}
	resources, _ := listed(t, cs)
	if diff := cmp.Diff([]string{"api://pets", "api://unused", "openapi://spec"}, resources); diff != "" {
		t.Errorf("resources after reload (-want +got):\n%s", diff)
	}
	lr, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range lr.Resources {
		if r.URI == "api://pets" && r.Name != "all-pets" {
			t.Errorf("api://pets is named %q after the reload, want all-pets", r.Name)
		}
	}
	if _, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "api://logo"}); err == nil {
		t.Error("api://logo can still be read after the reload removed it")
	}
	res, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "api://unused"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "path /unused" {
		t.Errorf("read api://unused = %+v, %v", res, err)
	}
	// The spec follows: /unused is whitelisted now.
	spec, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "openapi://spec"})
	if err != nil || !strings.Contains(spec.Contents[0].Text, `"/unused"`) || !strings.Contains(spec.Contents[0].Text, `"Unused"`) {
		t.Errorf("openapi://spec after the reload lacks /unused and its schema: %v", err)
	}
}

func TestNoTemplatesNoCompletions(t *testing.T) {
	up := newPetUpstream(t)
	rt := bridge.NewRuntime(resourceCatalog(t, "tools:\n  - operationId: listPets\n    resource: {uri: \"api://pets\"}\n", up))
	cs := connectResources(t, mcpx.New(rt, mcpx.Options{}).MCP(), nil)
	caps := cs.InitializeResult().Capabilities
	if caps.Completions != nil {
		t.Error("completions declared without any resource template")
	}
	if caps.Resources == nil || !caps.Resources.ListChanged {
		t.Errorf("resources capability = %+v, want listChanged", caps.Resources)
	}
	// The resource's name defaults to its tool's.
	lr, err := cs.ListResources(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(lr.Resources, func(r *mcp.Resource) bool { return r.URI == "api://pets" }); i < 0 || lr.Resources[i].Name != "listPets" {
		t.Errorf("resources = %+v, want api://pets named listPets", lr.Resources)
	}
}
