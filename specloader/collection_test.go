package specloader_test

import (
	"slices"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// collectionSpec is the Swagger 2.0 document of the bug report (arrays of
// strings: path pipes, query without collectionFormat and tsv, header
// ssv, formData without and pipes), plus a $ref'd and a path-level
// parameter, a nested array and an operation overriding a path-level one.
const collectionSpec = `{
  "swagger": "2.0",
  "info": {"title": "pets", "version": "1"},
  "parameters": {
    "multi": {"name": "multi", "in": "query", "type": "array", "items": {"type": "string"}, "collectionFormat": "multi"},
    "tabs": {"name": "tabs", "in": "query", "type": "array", "items": {"type": "string"}, "collectionFormat": "tsv"}
  },
  "paths": {
    "/pets/{ids}": {
      "parameters": [
        {"name": "ids", "in": "path", "required": true, "type": "array", "items": {"type": "string"}, "collectionFormat": "pipes"},
        {"name": "X-Ids", "in": "header", "type": "array", "items": {"type": "string"}, "collectionFormat": "ssv"},
        {"name": "codes", "in": "formData", "type": "array", "items": {"type": "string"}, "collectionFormat": "csv"}
      ],
      "post": {
        "operationId": "post",
        "consumes": ["application/x-www-form-urlencoded", "multipart/form-data"],
        "parameters": [
          {"name": "status", "in": "query", "type": "array", "items": {"type": "string"}},
          {"name": "tags", "in": "query", "type": "array", "items": {"type": "string"}, "collectionFormat": "tsv"},
          {"name": "nested", "in": "query", "type": "array", "collectionFormat": "multi", "items": {"type": "array", "collectionFormat": "pipes", "items": {"type": "string"}}},
          {"name": "one", "in": "query", "type": "string", "collectionFormat": "tsv"},
          {"$ref": "#/parameters/tabs"},
          {"name": "names", "in": "formData", "type": "array", "items": {"type": "string"}},
          {"name": "codes", "in": "formData", "type": "array", "items": {"type": "string"}, "collectionFormat": "pipes"},
          {"name": "every", "in": "formData", "type": "array", "items": {"type": "string"}, "collectionFormat": "multi"},
          {"name": "file", "in": "formData", "type": "file"}
        ],
        "responses": {"200": {"description": "ok"}}
      }
    }
  }
}`

// serialization is what a converted parameter or Encoding Object says
// about how an array is written.
type serialization struct {
	Style   string
	Explode *bool
	Formats any // the CollectionFormatExtension value
}

// TestSwagger2CollectionFormat: the loader gives each converted array
// parameter and formData property the serialization its collectionFormat
// says.
func TestSwagger2CollectionFormat(t *testing.T) {
	res, err := specloader.LoadData(t.Context(), []byte(collectionSpec), nil, specloader.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	item := res.Doc.Paths.Value("/pets/{ids}")
	op := item.Post
	params := map[string]serialization{}
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, p := range list {
			params[p.Value.In+" "+p.Value.Name] = serialization{p.Value.Style, p.Value.Explode, p.Value.Extensions[specloader.CollectionFormatExtension]}
		}
	}
	no, yes := openapi3.Ptr(false), openapi3.Ptr(true)
	wantParams := map[string]serialization{
		"path ids":     {Formats: "pipes"},
		"header X-Ids": {Formats: "ssv"},
		"query status": {Style: "form", Explode: no},
		"query tags":   {Style: "form", Explode: no, Formats: "tsv"},
		"query nested": {Style: "form", Explode: yes, Formats: "multi,pipes"},
		"query one":    {},
		"query tabs":   {Style: "form", Explode: no, Formats: "tsv"},
	}
	if diff := cmp.Diff(wantParams, params); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
	if p := res.Doc.Components.Parameters["multi"].Value; p.Style != "form" || p.Explode == nil || !*p.Explode {
		t.Errorf("components/parameters/multi: style %q, explode %v; want form, true", p.Style, p.Explode)
	}
	wantForm := map[string]serialization{
		"names": {Style: "form", Explode: no},
		"codes": {Style: "pipeDelimited", Explode: no}, // the operation's, not the path item's
		"every": {Style: "form", Explode: yes},
	}
	for _, ct := range []string{"application/x-www-form-urlencoded", "multipart/form-data"} {
		got := map[string]serialization{}
		for name, e := range op.RequestBody.Value.Content[ct].Encoding {
			got[name] = serialization{e.Style, e.Explode, e.Extensions[specloader.CollectionFormatExtension]}
		}
		if diff := cmp.Diff(wantForm, got); diff != "" {
			t.Errorf("%s encoding (-want +got):\n%s", ct, diff)
		}
	}
}

// TestSwagger2FormDataWithoutFormConsumes: formData parameters are form
// fields whatever consumes says (Swagger 2.0 allows them only with
// application/x-www-form-urlencoded or multipart/form-data), so an
// operation whose consumes names neither, or that has none (openapi2conv
// then writes "*/*"), takes a form body, multipart when a parameter is a
// file, not the JSON the bridge would pick for "*/*" or application/json;
// beside a form type, other types are left out.
func TestSwagger2FormDataWithoutFormConsumes(t *testing.T) {
	const spec = `{
  "swagger": "2.0",
  "info": {"title": "forms", "version": "1"},
  "consumes": ["application/json"],
  "paths": {
    "/none": {"post": {"operationId": "none", "consumes": [],
      "parameters": [{"name": "a", "in": "formData", "type": "string"}], "responses": {"200": {"description": "ok"}}}},
    "/json": {"post": {"operationId": "json",
      "parameters": [{"name": "a", "in": "formData", "type": "array", "items": {"type": "string"}, "collectionFormat": "pipes"}], "responses": {"200": {"description": "ok"}}}},
    "/file": {"post": {"operationId": "file", "consumes": ["*/*"],
      "parameters": [{"name": "f", "in": "formData", "type": "file"}], "responses": {"200": {"description": "ok"}}}},
    "/form": {"post": {"operationId": "form", "consumes": ["application/json", "application/x-www-form-urlencoded"],
      "parameters": [{"name": "a", "in": "formData", "type": "string"}], "responses": {"200": {"description": "ok"}}}},
    "/body": {"post": {"operationId": "body",
      "parameters": [{"name": "b", "in": "body", "schema": {"type": "object"}}], "responses": {"200": {"description": "ok"}}}}
  }
}`
	res, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, path := range []string{"/none", "/json", "/file", "/form", "/body"} {
		for ct, mt := range res.Doc.Paths.Value(path).Post.RequestBody.Value.Content {
			k := ct
			if mt.Schema == nil || mt.Schema.Value == nil || !mt.Schema.Value.Type.Is(openapi3.TypeObject) {
				k += " (no object schema)"
			}
			if e := mt.Encoding["a"]; e != nil {
				k += " " + e.Style
			}
			got[path] = append(got[path], k)
		}
		slices.Sort(got[path])
	}
	want := map[string][]string{
		"/none": {"application/x-www-form-urlencoded"},
		"/json": {"application/x-www-form-urlencoded pipeDelimited"},
		"/file": {"multipart/form-data"},
		"/form": {"application/x-www-form-urlencoded"},
		"/body": {"application/json"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request body media types (-want +got):\n%s", diff)
	}
}
