package specloader_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// prunedDoc is what a test of Options.Keep looks at: whether the load
// pruned, the operations under paths, and the names of the components.
type prunedDoc struct {
	Pruned     bool
	Ops        []string // "GET /a"
	Components []string // "schemas/A"
	Webhooks   int
}

func summarizePruned(res *specloader.Result) prunedDoc {
	s := prunedDoc{Pruned: res.Pruned, Webhooks: len(res.Doc.Webhooks)}
	for path, item := range res.Doc.Paths.Map() {
		for method := range item.Operations() {
			s.Ops = append(s.Ops, method+" "+path)
		}
	}
	if c := res.Doc.Components; c != nil {
		add := func(section string, names []string) {
			for _, n := range names {
				s.Components = append(s.Components, section+"/"+n)
			}
		}
		add("schemas", keys(c.Schemas))
		add("parameters", keys(c.Parameters))
		add("headers", keys(c.Headers))
		add("requestBodies", keys(c.RequestBodies))
		add("responses", keys(c.Responses))
		add("securitySchemes", keys(c.SecuritySchemes))
		add("examples", keys(c.Examples))
		add("links", keys(c.Links))
		add("callbacks", keys(c.Callbacks))
		add("extensions", keys(c.Extensions))
	}
	slices.Sort(s.Ops)
	slices.Sort(s.Components)
	return s
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// keepRoutes is an Options.Keep that keeps the operations named "GET /a".
func keepRoutes(routes ...string) func(method, path, operationID string, tags []string) bool {
	return func(method, path, _ string, _ []string) bool { return slices.Contains(routes, method+" "+path) }
}

// spec30 wraps paths and components (JSON object bodies) in an OpenAPI
// 3.0 document.
func spec30(paths, components string) string {
	return `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
		"paths": {` + paths + `}, "components": {` + components + `}}`
}

// ok200 is a response whose JSON body has the given schema.
func ok200(schema string) string {
	return `"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": ` + schema + `}}}}`
}

func ref(to string) string { return `{"$ref": "` + to + `"}` }

func TestKeepFollowsRefs(t *testing.T) {
	tests := []struct {
		name string
		spec string
		keep []string
		want prunedDoc
	}{
		{
			name: "nested",
			spec: spec30(`
				"/a": {"get": {`+ok200(ref("#/components/schemas/A"))+`}, "post": {`+ok200(ref("#/components/schemas/E"))+`}},
				"/b": {"get": {`+ok200(ref("#/components/schemas/E"))+`}}`, `
				"schemas": {
					"A": {"type": "object", "properties": {"b": `+ref("#/components/schemas/B")+`}},
					"B": {"type": "array", "items": `+ref("#/components/schemas/C")+`},
					"C": {"allOf": [{"type": "object"}, {"not": {"type": "string"}}]},
					"D": {"type": "string"},
					"E": {"type": "object", "properties": {"d": `+ref("#/components/schemas/D")+`}}}`),
			keep: []string{"GET /a"},
			want: prunedDoc{Pruned: true, Ops: []string{"GET /a"}, Components: []string{"schemas/A", "schemas/B", "schemas/C"}},
		},
		{
			name: "cyclic",
			spec: spec30(`"/a": {"get": {`+ok200(ref("#/components/schemas/A"))+`}}`, `
				"schemas": {
					"A": {"type": "object", "properties": {"self": `+ref("#/components/schemas/A")+`, "b": `+ref("#/components/schemas/B")+`}},
					"B": {"type": "object", "properties": {"a": `+ref("#/components/schemas/A")+`}},
					"C": {"type": "object", "properties": {"c": `+ref("#/components/schemas/C")+`}}}`),
			keep: []string{"GET /a"},
			want: prunedDoc{Pruned: true, Ops: []string{"GET /a"}, Components: []string{"schemas/A", "schemas/B"}},
		},
		{
			name: "escaped names",
			spec: spec30(`"/a": {"get": {`+ok200(`{"type": "object", "properties": {
					"slash": `+ref("#/components/schemas/a~1b")+`,
					"tilde": `+ref("#/components/schemas/t~0ilde~01")+`,
					"space": `+ref("#/components/schemas/sp%20ace")+`,
					"utf8": `+ref("#/components/schemas/%C3%BC")+`,
					"json": `+ref(`#/components/schemas/q\"uote\u00e9`)+`}}`)+`}}`, `
				"schemas": {
					"a/b": {"type": "string"}, "t~ilde~1": {"type": "string"}, "sp ace": {"type": "string"},
					"ü": {"type": "string"}, "q\"uoteé": {"type": "string"},
					"a~1b": {"type": "integer"}, "sp%20ace": {"type": "integer"}}`),
			keep: []string{"GET /a"},
			want: prunedDoc{Pruned: true, Ops: []string{"GET /a"}, Components: []string{
				`schemas/a/b`, `schemas/q"uoteé`, `schemas/sp ace`, `schemas/t~ilde~1`, `schemas/ü`,
			}},
		},
		{
			name: "callbacks",
			spec: spec30(`"/subscribe": {"post": {`+ok200(`{"type": "string"}`)+`, "callbacks": {
					"inline": {"{$request.body#/url}": {"post": {"requestBody": `+ref("#/components/requestBodies/Event")+`, "responses": {"200": {"description": "ok"}}}}},
					"shared": `+ref("#/components/callbacks/Shared")+`}}},
				"/other": {"get": {`+ok200(ref("#/components/schemas/Other"))+`}}`, `
				"requestBodies": {"Event": {"content": {"application/json": {"schema": `+ref("#/components/schemas/Event")+`}}}, "Unused": {"content": {}}},
				"callbacks": {"Shared": {"{$request.body#/url}": {"put": {"parameters": [`+ref("#/components/parameters/Sig")+`], "responses": {"200": {"description": "ok"}}}}}},
				"parameters": {"Sig": {"name": "sig", "in": "header", "schema": `+ref("#/components/schemas/Sig")+`}},
				"schemas": {"Event": {"type": "object"}, "Sig": {"type": "string"}, "Other": {"type": "string"}}`),
			keep: []string{"POST /subscribe"},
			want: prunedDoc{Pruned: true, Ops: []string{"POST /subscribe"}, Components: []string{
				"callbacks/Shared", "parameters/Sig", "requestBodies/Event", "schemas/Event", "schemas/Sig",
			}},
		},
		{
			name: "discriminator mapping",
			spec: spec30(`"/pets": {"get": {`+ok200(ref("#/components/schemas/Pet"))+`}}`, `
				"schemas": {
					"Pet": {"oneOf": [`+ref("#/components/schemas/Cat")+`], "discriminator": {"propertyName": "kind",
						"mapping": {"cat": "#/components/schemas/Cat", "dog": "Dog", "lizard": "#/components/schemas/Lizard"}}},
					"Cat": {"type": "object", "properties": {"kind": {"type": "string"}}},
					"Dog": {"type": "object", "properties": {"kind": {"type": "string"}}},
					"Lizard": {"type": "object", "properties": {"kind": {"type": "string"}}},
					"Other": {"type": "object", "properties": {"mapping": {"type": "object", "properties": {"Dog": {"type": "string"}}}}}}`),
			keep: []string{"GET /pets"},
			want: prunedDoc{Pruned: true, Ops: []string{"GET /pets"}, Components: []string{
				"schemas/Cat", "schemas/Dog", "schemas/Lizard", "schemas/Pet",
			}},
		},
		{
			name: "path-level parameters and every section",
			spec: spec30(`"/items/{id}": {
					"parameters": [`+ref("#/components/parameters/Id")+`],
					"get": {"requestBody": `+ref("#/components/requestBodies/Query")+`, "responses": {
						"200": {"description": "ok", "links": {"next": `+ref("#/components/links/Next")+`},
							"content": {"application/json": {"examples": {"one": `+ref("#/components/examples/One")+`}}}},
						"404": `+ref("#/components/responses/NotFound")+`}},
					"delete": {"responses": {"204": `+ref("#/components/responses/Gone")+`}}}`, `
				"parameters": {"Id": {"name": "id", "in": "path", "required": true, "schema": `+ref("#/components/schemas/Id")+`}},
				"requestBodies": {"Query": {"content": {"application/json": {"schema": {"type": "object"}}}}},
				"links": {"Next": {"operationId": "next"}},
				"examples": {"One": {"value": {"id": 1}}, "Two": {"value": 2}},
				"responses": {"NotFound": {"description": "gone", "headers": {"X-Rate": `+ref("#/components/headers/Rate")+`}}, "Gone": {"description": "gone"}},
				"headers": {"Rate": {"schema": `+ref("#/components/schemas/Rate")+`}, "Unused": {"schema": {"type": "string"}}},
				"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "k"}, "basic": {"type": "http", "scheme": "basic"}},
				"schemas": {"Id": {"type": "integer"}, "Rate": {"type": "integer"}, "Unused": {"type": "string"}}`),
			keep: []string{"GET /items/{id}"},
			want: prunedDoc{Pruned: true, Ops: []string{"GET /items/{id}"}, Components: []string{
				"examples/One", "headers/Rate", "links/Next", "parameters/Id", "requestBodies/Query", "responses/NotFound",
				"schemas/Id", "schemas/Rate", "securitySchemes/basic", "securitySchemes/key",
			}},
		},
		{
			name: "refs into paths keep the operation they point into",
			spec: spec30(`
				"/a": {"get": {"responses": {"200": `+ref("#/paths/~1b/get/responses/200")+`}}},
				"/b": {"get": {`+ok200(ref("#/components/schemas/B"))+`}, "post": {`+ok200(ref("#/components/schemas/C"))+`}},
				"/c": {"parameters": [{"name": "p", "in": "query", "schema": `+ref("#/components/schemas/P")+`}], "get": {`+ok200(ref("#/components/schemas/C"))+`}},
				"/d": {"get": {"parameters": [`+ref("#/paths/~1c/parameters/0")+`], "responses": {"204": {"description": "none"}}}}`, `
				"schemas": {"B": {"type": "string"}, "C": {"type": "string"}, "P": {"type": "string"}}`),
			keep: []string{"GET /a", "GET /d"},
			want: prunedDoc{Pruned: true, Ops: []string{"GET /a", "GET /b", "GET /d"}, Components: []string{"schemas/B", "schemas/P"}},
		},
		{
			name: "webhooks and the root are followed, extensions are not",
			spec: `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
				"x-root": {"$ref": "#/components/schemas/X"},
				"paths": {"x-paths": {"$ref": "#/components/schemas/X"}, "/a": {"get": {"responses": {"204": {"description": "none"}}}}},
				"webhooks": {"ping": {"post": {"requestBody": {"content": {"application/json": {"schema": ` + ref("#/components/schemas/W") + `}}}, "responses": {"200": {"description": "ok"}}}}},
				"components": {"x-comps": {"$ref": "#/components/schemas/X"},
					"schemas": {"W": {"type": "object"}, "X": {"type": "object"}}}}`,
			keep: []string{"GET /a"},
			want: prunedDoc{Pruned: true, Ops: []string{"GET /a"}, Components: []string{"extensions/x-comps", "schemas/W"}, Webhooks: 1},
		},
		{
			name: "nothing kept",
			spec: spec30(`"/a": {"get": {`+ok200(ref("#/components/schemas/A"))+`}}`, `
				"schemas": {"A": {"type": "string"}},
				"securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "k"}}`),
			want: prunedDoc{Pruned: true, Components: []string{"securitySchemes/key"}},
		},
		{
			name: "an escaped $ref key makes it give up",
			spec: spec30(`
				"/a": {"get": {`+ok200(`{"\u0024ref": "#/components/schemas/A"}`)+`}},
				"/b": {"get": {`+ok200(ref("#/components/schemas/B"))+`}}`, `
				"schemas": {"A": {"type": "string"}, "B": {"type": "string"}}`),
			keep: []string{"GET /a"},
			want: prunedDoc{Ops: []string{"GET /a", "GET /b"}, Components: []string{"schemas/A", "schemas/B"}},
		},
		{
			name: "a ref to the whole components makes it give up",
			spec: spec30(`
				"/a": {"get": {`+ok200(`{"type": "object", "x-all": {"$ref": "#/components"}, "properties": {"a": `+ref("#/components/schemas/A")+`}}`)+`}},
				"/b": {"get": {`+ok200(ref("#/components/schemas/B"))+`}}`, `
				"schemas": {"A": {"type": "string"}, "B": {"type": "string"}}`),
			keep: []string{"GET /a"},
			want: prunedDoc{Ops: []string{"GET /a", "GET /b"}, Components: []string{"schemas/A", "schemas/B"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := specloader.LoadData(t.Context(), []byte(tt.spec), nil, specloader.Options{Keep: keepRoutes(tt.keep...)})
			if err != nil {
				t.Fatalf("LoadData: %v", err)
			}
			if diff := cmp.Diff(tt.want, summarizePruned(res)); diff != "" {
				t.Errorf("pruned document mismatch (-want +got):\n%s", diff)
			}
			if got := unresolvedRefs(res.Doc); len(got) > 0 {
				t.Errorf("unresolved references: %q", got)
			}
		})
	}
}

func TestKeepGivesUpOnExternalRefs(t *testing.T) {
	dir := t.TempDir()
	spec := spec30(`
		"/a": {"get": {`+ok200(ref("common.json#/Thing"))+`}},
		"/b": {"get": {`+ok200(ref("#/components/schemas/B"))+`}}`, `
		"schemas": {"B": {"type": "string"}}`)
	if err := os.WriteFile(filepath.Join(dir, "common.json"), []byte(`{"Thing": {"type": "integer"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(path, []byte(spec), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := specloader.Load(t.Context(), path, specloader.Options{Keep: keepRoutes("GET /a")})
	if err != nil {
		t.Fatal(err)
	}
	want := prunedDoc{Ops: []string{"GET /a", "GET /b"}, Components: []string{"schemas/B"}}
	if diff := cmp.Diff(want, summarizePruned(res)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

// TestKeepArguments checks what Keep is asked: every operation once, with
// the method in upper case, the path as written, the operationId and tags.
func TestKeepArguments(t *testing.T) {
	spec := spec30(`
		"/pets/{id}": {"summary": "s", "get": {"operationId": "getPet", "tags": ["pets", "read"], "responses": {}},
			"delete": {"tags": [], "operationId": "a\"b", "responses": {}}, "x-ext": {"get": 1}},
		"x-ignored": {"get": {"operationId": "no"}},
		"/q": {"post": {"operationId": "first", "responses": {}}, "post": {"operationId": "second", "responses": {}}, "query": {"responses": {}}}`, ``)
	type call struct {
		Method, Path, OperationID string
		Tags                      []string
	}
	var got []call
	keep := func(method, path, id string, tags []string) bool {
		got = append(got, call{method, path, id, slices.Clone(tags)})
		return true
	}
	res, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{Keep: keep})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b call) int { return strings.Compare(a.Method+a.Path, b.Method+b.Path) })
	want := []call{
		{"DELETE", "/pets/{id}", `a"b`, nil},
		{"GET", "/pets/{id}", "getPet", []string{"pets", "read"}},
		{"POST", "/q", "second", nil},
		{"QUERY", "/q", "", nil},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Keep calls (-want +got):\n%s", diff)
	}
	if !res.Pruned {
		t.Error("Pruned is false")
	}
}

// TestKeepIgnoredOffTheFastPath: YAML and Swagger 2.0 load whole.
func TestKeepIgnoredOffTheFastPath(t *testing.T) {
	for _, name := range []string{"petstore.3.0.yaml", "petstore-minimal.2.0.json"} {
		t.Run(name, func(t *testing.T) {
			res, err := specloader.Load(t.Context(), filepath.Join(corpusDir, name), specloader.Options{Keep: keepRoutes()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Pruned || res.Doc.Paths.Len() == 0 {
				t.Errorf("Pruned %v with %d paths, want a whole document", res.Pruned, res.Doc.Paths.Len())
			}
		})
	}
}

// TestPrunedMatchesWhole holds pruning to its promise over the JSON corpus:
// for random sets of operations, each kept operation is, once marshaled,
// what a whole load gives, every component kept is the whole load's, and
// every $ref reachable from what is kept resolves (the document is loaded
// without a location, so a $ref the plan missed would fail the load rather
// than be read again from the text).
func TestPrunedMatchesWhole(t *testing.T) {
	specs := []string{
		"github-api.3.0.json", "jira-platform.3.0.json", "digitalocean.3.0.json", "twilio-messaging-v1.3.0.json",
		"google-drive-v3.3.0.json", "discourse.3.1.json", "petstore.3.1.json", "xkcd.3.0.json",
	}
	for _, name := range specs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			data := mustRead(t, filepath.Join(corpusDir, name))
			whole, err := specloader.LoadData(t.Context(), data, nil, specloader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			routes := allRoutes(whole.Doc)
			sizes := []int{1, 3, 20, 100}
			if raceEnabled || testing.Short() {
				sizes = []int{20}
			}
			for _, n := range sizes {
				for round := range 2 {
					chosen := sample(routes, n, uint64(len(name)*1000+n*10+round))
					t.Run(fmt.Sprintf("%d ops #%d", n, round), func(t *testing.T) {
						checkPruned(t, data, whole, chosen)
					})
				}
			}
		})
	}
}

func checkPruned(t *testing.T, data []byte, whole *specloader.Result, chosen []string) {
	res, err := specloader.LoadData(t.Context(), data, nil, specloader.Options{Keep: keepRoutes(chosen...)})
	if err != nil {
		t.Fatalf("LoadData with Keep: %v", err)
	}
	if !res.Pruned {
		t.Fatal("Pruned is false")
	}
	got := allRoutes(res.Doc)
	for _, r := range chosen {
		if !slices.Contains(got, r) {
			t.Errorf("%s was dropped", r)
		}
	}
	if len(got) > len(chosen) {
		// Only operations the kept ones refer to by a $ref into paths.
		t.Logf("%d operations kept for %d chosen", len(got), len(chosen))
	}
	for _, r := range got {
		method, path, _ := strings.Cut(r, " ")
		want := whole.Doc.Paths.Value(path).GetOperation(method)
		op := res.Doc.Paths.Value(path).GetOperation(method)
		if diff := cmp.Diff(marshalJSON(t, want), marshalJSON(t, op)); diff != "" {
			t.Errorf("%s differs from the whole load (-whole +pruned):\n%.3000s", r, diff)
		}
		if diff := cmp.Diff(marshalJSON(t, whole.Doc.Paths.Value(path).Parameters), marshalJSON(t, res.Doc.Paths.Value(path).Parameters)); diff != "" {
			t.Errorf("%s: path parameters differ (-whole +pruned):\n%.3000s", r, diff)
		}
	}
	if c := res.Doc.Components; c != nil {
		wc := whole.Doc.Components
		compare := func(section string, got, want any) {
			if diff := cmp.Diff(marshalJSON(t, want), marshalJSON(t, got)); diff != "" {
				t.Errorf("components/%s differ (-whole +pruned):\n%.3000s", section, diff)
			}
		}
		compare("schemas", c.Schemas, subset(wc.Schemas, c.Schemas))
		compare("parameters", c.Parameters, subset(wc.Parameters, c.Parameters))
		compare("headers", c.Headers, subset(wc.Headers, c.Headers))
		compare("requestBodies", c.RequestBodies, subset(wc.RequestBodies, c.RequestBodies))
		compare("responses", c.Responses, subset(wc.Responses, c.Responses))
		compare("securitySchemes", c.SecuritySchemes, wc.SecuritySchemes)
		compare("examples", c.Examples, subset(wc.Examples, c.Examples))
		compare("links", c.Links, subset(wc.Links, c.Links))
		compare("callbacks", c.Callbacks, subset(wc.Callbacks, c.Callbacks))
	}
	if got := unresolvedRefs(res.Doc); len(got) > 0 {
		t.Errorf("unresolved references: %q", got)
	}
}

// subset returns the entries of whole that got has, for comparison.
func subset[V any](whole, got map[string]V) map[string]V {
	if got == nil {
		return nil
	}
	out := make(map[string]V, len(got))
	for k := range got {
		if v, ok := whole[k]; ok {
			out[k] = v
		}
	}
	return out
}

func marshalJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// allRoutes lists the operations of doc as "GET /a", sorted.
func allRoutes(doc *openapi3.T) []string {
	var out []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, method+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// sample picks n of routes, the same ones for the same seed.
func sample(routes []string, n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 1))
	picked := slices.Clone(routes)
	rng.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
	return picked[:min(n, len(picked))]
}

// unresolvedRefs lists the references reachable from doc's paths and
// components that the loader left without a value: every Ref/Value pair of
// kin-openapi's model (SchemaRef, ParameterRef, ResponseRef...), except a
// discriminator's MappingRef, which kin-openapi leaves unresolved by design.
func unresolvedRefs(doc *openapi3.T) []string {
	var out []string
	seen := map[uintptr]bool{}
	mappingRef := reflect.TypeFor[openapi3.MappingRef]()
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if v.IsNil() {
				return
			}
			if v.Kind() == reflect.Pointer {
				if seen[v.Pointer()] {
					return
				}
				seen[v.Pointer()] = true
			}
			walk(v.Elem())
		case reflect.Struct:
			if r, val := v.FieldByName("Ref"), v.FieldByName("Value"); r.IsValid() && val.IsValid() &&
				r.Kind() == reflect.String && val.Kind() == reflect.Pointer && v.Type() != mappingRef {
				if r.String() != "" && val.IsNil() {
					out = append(out, r.String())
				}
			}
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Value())
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(doc.Paths))
	walk(reflect.ValueOf(doc.Components))
	walk(reflect.ValueOf(doc.Webhooks))
	slices.Sort(out)
	return slices.Compact(out)
}
