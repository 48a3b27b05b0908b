package bridge_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// TestDiscriminatorOneOfOverlap: a oneOf with a discriminator whose
// variants overlap as JSON Schema (OpenAPI 3.0.3's own example: Cat and
// Dog both allOf Pet, open objects) is decided by the discriminator, not by
// "exactly one branch matches". Every Cat and every Dog used to be refused
// as matching more than one alternative, so the tool could not be called.
func TestDiscriminatorOneOfOverlap(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: pets, version: "1"}
paths:
  /pets:
    patch:
      operationId: updatePet
      requestBody:
        required: true
        content:
          application/json:
            schema:
              oneOf:
                - $ref: '#/components/schemas/Cat'
                - $ref: '#/components/schemas/Dog'
              discriminator: {propertyName: pet_type}
      responses: {"200": {description: ok}}
  /mapped:
    post:
      operationId: postMapped
      requestBody:
        required: true
        content:
          application/json:
            schema:
              oneOf:
                - $ref: '#/components/schemas/Cat'
                - $ref: '#/components/schemas/Dog'
              discriminator:
                propertyName: pet_type
                mapping: {kitty: '#/components/schemas/Cat', doggo: '#/components/schemas/Dog'}
      responses: {"200": {description: ok}}
components:
  schemas:
    Pet:
      type: object
      required: [pet_type]
      properties: {pet_type: {type: string}}
      discriminator: {propertyName: pet_type}
    Dog:
      allOf:
        - $ref: '#/components/schemas/Pet'
        - type: object
          properties:
            bark: {type: boolean}
            breed: {type: string, enum: [Dingo, Husky]}
    Cat:
      allOf:
        - $ref: '#/components/schemas/Pet'
        - type: object
          properties:
            hunts: {type: boolean}
            age: {type: integer}
`
	var mu sync.Mutex
	var gotBody string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		gotBody = string(b)
		mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	defer up.Close()
	rt := bridge.NewRuntime(specCatalog(t, spec, bridge.Options{BaseURL: up.URL, Client: up.Client()}))
	for _, tc := range []struct{ tool, args, body string }{
		{"updatePet", `{"body":{"pet_type":"Cat","hunts":true,"age":3}}`, `{"age":3,"hunts":true,"pet_type":"Cat"}`},
		{"updatePet", `{"body":{"pet_type":"Dog","bark":false,"breed":"Dingo"}}`, `{"bark":false,"breed":"Dingo","pet_type":"Dog"}`},
		{"postMapped", `{"body":{"pet_type":"kitty","hunts":true}}`, `{"hunts":true,"pet_type":"kitty"}`},
	} {
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: tc.tool, Args: []byte(tc.args)})
		if err != nil || out.Kind != bridge.OK {
			t.Errorf("%s %s: %v %+v", tc.tool, tc.args, err, out.Result)
			continue
		}
		mu.Lock()
		if gotBody != tc.body {
			t.Errorf("%s %s: upstream got %s, want %s", tc.tool, tc.args, gotBody, tc.body)
		}
		mu.Unlock()
	}
	// A value no variant admits is still refused, before any request.
	out, err := rt.Call(t.Context(), &bridge.Call{Tool: "updatePet", Args: []byte(`{"body":{"hunts":true}}`)})
	if err != nil || out.Kind == bridge.OK {
		t.Errorf("no pet_type: %v %+v, want a refusal", err, out.Result)
	}
}

// TestOneOfOverlapWithoutDiscriminator: Ably's own spec subscribes a
// device or a client to a channel with a oneOf of two open objects,
// {channel, deviceId} and {channel, clientId}, none required. As JSON
// Schema every object fits both, so "exactly one" refused every value and
// the tool could not be called at all. Such alternatives are offered as
// anyOf (with a repair), as are alternatives where one's plainest value
// fits the other ({id} and {id, name}); alternatives a required property
// tells apart, and closed ones, keep their oneOf and still refuse a value
// fitting two.
func TestOneOfOverlapWithoutDiscriminator(t *testing.T) {
	const spec = `openapi: 3.0.1
info: {title: subs, version: "1"}
paths:
  /subscriptions:
    post:
      operationId: subscribe
      requestBody:
        required: true
        content:
          application/json:
            schema:
              oneOf:
                - {type: object, properties: {channel: {type: string}, deviceId: {type: string}}}
                - {type: object, properties: {channel: {type: string}, clientId: {type: string}}}
      responses: {"200": {description: ok}}
  /kinds:
    post:
      operationId: tagged
      requestBody:
        required: true
        content:
          application/json:
            schema:
              oneOf:
                - {type: object, required: [kind], properties: {kind: {type: string, enum: [a]}, x: {type: string}}}
                - {type: object, required: [kind], properties: {kind: {type: string, enum: [b]}, y: {type: string}}}
      responses: {"200": {description: ok}}
  /either:
    post:
      operationId: either
      requestBody:
        required: true
        content:
          application/json:
            schema:
              oneOf:
                - {type: object, required: [bark], properties: {bark: {type: boolean}}}
                - {type: object, required: [meow], properties: {meow: {type: boolean}}}
      responses: {"200": {description: ok}}
  /nested:
    post:
      operationId: nested
      requestBody:
        required: true
        content:
          application/json:
            schema:
              oneOf:
                - {type: object, required: [id], properties: {id: {type: string}}}
                - {type: object, required: [id, name], properties: {id: {type: string}, name: {type: string}}}
      responses: {"200": {description: ok}}
  /closed:
    post:
      operationId: closed
      requestBody:
        required: true
        content:
          application/json:
            schema:
              oneOf:
                - {type: object, additionalProperties: false, properties: {a: {type: string}}}
                - {type: object, additionalProperties: false, properties: {b: {type: string}}}
      responses: {"200": {description: ok}}
`
	var mu sync.Mutex
	var gotBody string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		gotBody = string(b)
		mu.Unlock()
		w.Write([]byte(`{}`))
	}))
	defer up.Close()
	cat := specCatalog(t, spec, bridge.Options{BaseURL: up.URL, Client: up.Client()})
	rt := bridge.NewRuntime(cat)
	for _, tc := range []struct{ tool, args, body string }{
		{"subscribe", `{"body":{"channel":"news","clientId":"c1"}}`, `{"channel":"news","clientId":"c1"}`},
		{"subscribe", `{"body":{"channel":"news","deviceId":"d1"}}`, `{"channel":"news","deviceId":"d1"}`},
		{"tagged", `{"body":{"kind":"a","x":"1"}}`, `{"kind":"a","x":"1"}`},
		{"closed", `{"body":{"b":"1"}}`, `{"b":"1"}`},
		{"either", `{"body":{"meow":true}}`, `{"meow":true}`},
		{"nested", `{"body":{"id":"1","name":"n"}}`, `{"id":"1","name":"n"}`},
	} {
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: tc.tool, Args: []byte(tc.args)})
		if err != nil || out.Kind != bridge.OK {
			t.Errorf("%s %s: %v %+v", tc.tool, tc.args, err, out.Result)
			continue
		}
		mu.Lock()
		if gotBody != tc.body {
			t.Errorf("%s %s: upstream got %s, want %s", tc.tool, tc.args, gotBody, tc.body)
		}
		mu.Unlock()
	}
	// Alternatives that do not overlap keep "exactly one": an object
	// fitting both closed ones ({}) is refused before any request.
	// Alternatives told apart by the property each requires keep it too: a
	// value with both is refused.
	for tool, args := range map[string]string{"closed": `{"body":{}}`, "either": `{"body":{"bark":true,"meow":true}}`} {
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: tool, Args: []byte(args)})
		if err != nil || out.Kind == bridge.OK {
			t.Errorf("%s %s: %v %+v, want a refusal", tool, args, err, out.Result)
		}
	}
	schemas := map[string]string{}
	for _, tool := range cat.Tools() {
		raw, _ := json.Marshal(tool.Def().InputSchema)
		schemas[tool.Name()] = string(raw)
	}
	for name, want := range map[string]string{"subscribe": `"anyOf"`, "nested": `"anyOf"`, "tagged": `"oneOf"`, "closed": `"oneOf"`, "either": `"oneOf"`} {
		if !strings.Contains(schemas[name], want) {
			t.Errorf("%s: input schema %s, want %s", name, schemas[name], want)
		}
	}
	if strings.Contains(schemas["subscribe"], `"oneOf"`) {
		t.Errorf("subscribe: input schema still has oneOf: %s", schemas["subscribe"])
	}
	var repaired bool
	for _, r := range cat.Repairs() {
		repaired = repaired || strings.Contains(r.What, "offered as anyOf")
	}
	if !repaired {
		t.Errorf("no repair recorded for the overlapping oneOf: %+v", cat.Repairs())
	}
}
