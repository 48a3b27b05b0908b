package whitelist_test

import (
	"context"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

const resourceSpec = `
openapi: 3.0.3
info: {title: pets, version: "1"}
paths:
  /pets:
    get:
      operationId: listPets
      parameters:
        - {name: kind, in: query, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
    post:
      operationId: createPet
      responses: {"201": {description: ok}}
  /pets/{petId}:
    get:
      operationId: showPetById
      parameters:
        - {name: petId, in: path, required: true, schema: {type: integer}}
        - {name: fields, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
  /health:
    get:
      operationId: health
      responses: {"200": {description: ok}}
`

func loadResourceSpec(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(resourceSpec))
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestParseResource(t *testing.T) {
	in := `tools:
  - operationId: showPetById
    resource:
      uri: "api://pets/{petId}"
      name: pet
      mimeType: application/json
      description: One pet.
      complete:
        petId: {tool: listPets, field: id}
`
	pol, err := whitelist.Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := &whitelist.Resource{
		URI: "api://pets/{petId}", Name: "pet", MIMEType: "application/json", Description: "One pet.",
		Complete: map[string]whitelist.Completion{"petId": {Tool: "listPets", Field: "id"}},
		Line:     3,
	}
	if diff := cmp.Diff(want, pol.Entries[0].Resource); diff != "" {
		t.Errorf("resource (-want +got):\n%s", diff)
	}
}

func TestParseResourceErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"not a mapping", "tools:\n  - operationId: a\n    resource: api://x\n",
			[]string{"line 3: resource must be a mapping"}},
		{"missing uri", "tools:\n  - operationId: a\n    resource: {name: x}\n",
			[]string{"line 3: resource needs a uri"}},
		{"unknown key", "tools:\n  - operationId: a\n    resource: {uri: api://x, mime: text/plain}\n",
			[]string{`line 3: unknown key "mime" in resource`}},
		{"operator", "tools:\n  - operationId: a\n    resource: {uri: \"api://pets{?q}\"}\n",
			[]string{`line 3: resource uri "api://pets{?q}": {?q}: only simple {var} expressions (RFC 6570 level 1) are supported`}},
		{"modifier", "tools:\n  - operationId: a\n    resource: {uri: \"api://pets/{id*}\"}\n",
			[]string{`{id*}: one variable per expression`}},
		{"bad var name", "tools:\n  - operationId: a\n    resource: {uri: \"api://pets/{pet-id}\"}\n",
			[]string{`{pet-id}: a variable name has letters, digits and _ only`}},
		{"no scheme", "tools:\n  - operationId: a\n    resource: {uri: \"/pets/{id}\"}\n",
			[]string{"not an absolute URI"}},
		{"unclosed", "tools:\n  - operationId: a\n    resource: {uri: \"api://pets/{id\"}\n",
			[]string{"unclosed {"}},
		{"space", "tools:\n  - operationId: a\n    resource: {uri: \"api://my pets\"}\n",
			[]string{`character ' ' is not allowed`}},
		{"reserved", "tools:\n  - operationId: a\n    resource: {uri: \"openapi://spec\"}\n",
			[]string{"line 3: resource uri openapi://spec is the bridge's own"}},
		{"bad mime", "tools:\n  - operationId: a\n    resource: {uri: api://x, mimeType: json}\n",
			[]string{`line 3: resource mimeType "json" is not a media type`}},
		{"complete unknown var", "tools:\n  - operationId: a\n    resource:\n      uri: \"api://pets/{id}\"\n      complete:\n        petId: {tool: listPets}\n",
			[]string{`line 6: complete "petId" is not a variable of the resource uri (its variables: id)`}},
		{"complete without tool", "tools:\n  - operationId: a\n    resource:\n      uri: \"api://pets/{id}\"\n      complete:\n        id: {field: id}\n",
			[]string{"line 6: complete id needs a tool"}},
		{"with tag", "tools:\n  - tag: pets\n    resource: {uri: api://x}\n",
			[]string{"line 3: resource cannot be used with tag"}},
		{"with POST", "tools:\n  - method: POST\n    path: /pets\n    resource: {uri: api://x}\n",
			[]string{"line 4: resource needs a GET operation, not POST"}},
		{"duplicate uri", "tools:\n  - operationId: a\n    resource: {uri: api://x}\n  - operationId: b\n    resource: {uri: api://x}\n",
			[]string{`line 5: resource uri "api://x" is already used by the entry at line 2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := whitelist.Parse(strings.NewReader(tt.in))
			got := messages(err)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems %q, want %d like %q", len(got), got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestSelectResource(t *testing.T) {
	doc := loadResourceSpec(t)
	pol, err := whitelist.Parse(strings.NewReader(`tools:
  - operationId: listPets
  - operationId: showPetById
    resource:
      uri: "api://pets/{petId}"
      complete: {petId: {tool: listPets, field: id}}
  - operationId: health
    resource: {uri: "api://health"}
`))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := pol.Select(doc)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, op := range ops {
		if op.Resource != nil {
			uris = append(uris, op.Resource.URI)
		}
	}
	if diff := cmp.Diff([]string{"api://health", "api://pets/{petId}"}, uris); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
}

func TestSelectResourceErrors(t *testing.T) {
	doc := loadResourceSpec(t)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"post operation", "tools:\n  - operationId: createPet\n    resource: {uri: api://x}\n",
			[]string{"line 3: resource api://x: POST /pets is not a GET operation"}},
		{"var names no parameter", "tools:\n  - operationId: showPetById\n    resource: {uri: \"api://pets/{id}\"}\n",
			[]string{`line 3: resource api://pets/{id}: {id} names no path or query parameter of GET /pets/{petId}; the required path parameter "petId" has no {petId} in the uri`}},
		{"required query missing", "tools:\n  - operationId: listPets\n    resource: {uri: \"api://pets\"}\n",
			[]string{`line 3: resource api://pets: the required query parameter "kind" has no {kind} in the uri`}},
		{"query var", "tools:\n  - operationId: listPets\n    resource: {uri: \"api://pets/{kind}\"}\n", nil},
		{"completion tool not selected", "tools:\n  - operationId: showPetById\n    resource:\n      uri: \"api://pets/{petId}\"\n      complete: {petId: {tool: listPets}}\n",
			[]string{`line 3: resource complete petId: tool "listPets" is not a selected operation`}},
		{"completion tool not GET", "tools:\n  - operationId: createPet\n  - operationId: showPetById\n    resource:\n      uri: \"api://pets/{petId}\"\n      complete: {petId: {tool: createPet}}\n",
			[]string{`line 4: resource complete petId: tool "createPet" is a POST operation`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol, err := whitelist.Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			_, err = pol.Select(doc)
			got := messages(err)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems %q, want %d like %q", len(got), got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want it to contain %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestURITemplateMatch(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
	}{
		{"api://pets/{petId}", "api://pets/12", map[string]string{"petId": "12"}},
		{"api://pets/{petId}", "api://pets/a%20b", map[string]string{"petId": "a b"}},
		{"api://pets/{petId}", "api://pets/1/2", nil},
		{"api://pets/{petId}", "api://pets/", nil},
		{"api://pets/{petId}", "api://cats/1", nil},
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template/123/datax", nil},
		{"api://o/{owner}/r/{repo}", "api://o/me/r/x.y", map[string]string{"owner": "me", "repo": "x.y"}},
		{"api://health", "api://health", map[string]string{}},
		{"api://health", "api://health/x", nil},
	}
	for _, tt := range tests {
		tmpl, err := whitelist.ParseURITemplate(tt.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tt.tmpl, err)
		}
		got, ok := tmpl.Match(tt.uri)
		if ok != (tt.want != nil) {
			t.Errorf("%s matching %s: ok = %v", tt.tmpl, tt.uri, ok)
			continue
		}
		if diff := cmp.Diff(tt.want, got); ok && diff != "" {
			t.Errorf("%s matching %s (-want +got):\n%s", tt.tmpl, tt.uri, diff)
		}
	}
}
