package bridge_test

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// TestXMLElementsInSchemaOrder: an XML body's elements follow the order
// the schema declares its properties in (xs:sequence consumers need it),
// not their sorted names, when the loader recorded where each property is
// (kin-openapi's Loader.IncludeOrigin); the value's undeclared keys come
// after, sorted. The same holds in a multipart XML part.
func TestXMLElementsInSchemaOrder(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: order, version: "1"}
paths:
  /pets:
    post:
      operationId: addPet
      requestBody:
        content:
          application/xml:
            schema: {$ref: '#/components/schemas/Pet'}
      responses: {"200": {description: ok}}
  /upload:
    post:
      operationId: upload
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                pet: {$ref: '#/components/schemas/Pet'}
            encoding:
              pet: {contentType: application/xml}
      responses: {"200": {description: ok}}
components:
  schemas:
    Owner:
      type: object
      properties:
        zname: {type: string}
        age: {type: integer}
    Pet:
      type: object
      xml: {name: pet}
      properties:
        id: {type: integer}
        name: {type: string}
        lang: {type: string}
        tags:
          type: array
          xml: {wrapped: true}
          items: {type: string, xml: {name: tag}}
        photos: {type: array, items: {type: string}}
        owner: {$ref: '#/components/schemas/Owner'}
`
	loader := openapi3.NewLoader()
	loader.IncludeOrigin = true
	doc, err := loader.LoadFromData([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(doc)
	if err != nil {
		t.Fatal(err)
	}
	up, last := wireUpstream(t)
	c, err := bridge.New(ops, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	if err != nil {
		t.Fatal(err)
	}
	rt := bridge.NewRuntime(c)
	const pet = `{"extra":"e","owner":{"age":3,"zname":"x"},"photos":["p"],"tags":["a"],"lang":"en","name":"Rex","id":1}`
	const want = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<pet><id>1</id><name>Rex</name><lang>en</lang><tags><tag>a</tag></tags><photos>p</photos>` +
		`<owner><zname>x</zname><age>3</age></owner><extra>e</extra></pet>`
	for _, tc := range []struct {
		tool, args string
		want       sent
	}{
		{"addPet", `{"body":` + pet + `}`, sent{"/pets", "application/xml", want}},
		{"upload", `{"body":{"pet":` + pet + `}}`, sent{"/upload", multipartForm, part(`name="pet"`, "application/xml", want) + "--BOUNDARY--\r\n"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: tc.tool, Args: []byte(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			if out.Kind != bridge.OK {
				t.Fatalf("kind %v: %s", out.Kind, out.Result.Content[0].(*mcp.TextContent).Text)
			}
			if got := last(); got != tc.want {
				t.Errorf("upstream got\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}
