package bridge_test

import (
	"io"
	"net/http"
	"net/http/httptest"
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
