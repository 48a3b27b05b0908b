package specloader

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

const prelinkDoc = `{
  "openapi": "3.0.3",
  "info": {"title": "t", "version": "1"},
  "paths": {
    "/pets/{id}": {
      "parameters": [{"$ref": "#/components/parameters/id"}],
      "get": {
        "parameters": [{"$ref": "#/components/parameters/odd~1name"}],
        "requestBody": {"$ref": "#/components/requestBodies/pet"},
        "responses": {
          "200": {"$ref": "#/components/responses/ok"},
          "404": {"description": "no", "headers": {"X-Why": {"$ref": "#/components/headers/why"}},
                  "content": {"application/json": {"schema": {"type": "object", "properties": {
                    "pet": {"$ref": "#/components/schemas/Pet"},
                    "alias": {"$ref": "#/components/schemas/Alias"},
                    "deep": {"$ref": "#/components/schemas/Pet/properties/name"}}}}}}
        }
      }
    }
  },
  "components": {
    "schemas": {
      "Pet": {"type": "object", "properties": {"name": {"type": "string"}, "parent": {"$ref": "#/components/schemas/Pet"}}},
      "Alias": {"$ref": "#/components/schemas/Pet"}
    },
    "parameters": {
      "id": {"name": "id", "in": "path", "required": true, "schema": {"$ref": "#/components/schemas/Pet"}},
      "odd/name": {"name": "q", "in": "query", "schema": {"type": "string"}}
    },
    "headers": {"why": {"schema": {"type": "string"}}},
    "requestBodies": {"pet": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}},
    "responses": {"ok": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}
  }
}`

func decodeForPrelink(t *testing.T, text string) *openapi3.T {
	t.Helper()
	jd, err := splitJSON([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := decodeJSON(t.Context(), jd, nil)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestPrelink: plain local references get their component's value before
// kin-openapi resolves anything; the others are left for it, and the
// model it then completes is the one its own loader builds.
func TestPrelink(t *testing.T) {
	doc := decodeForPrelink(t, prelinkDoc)
	prelink(doc)
	c := doc.Components
	pet := c.Schemas["Pet"].Value
	item := doc.Paths.Value("/pets/{id}")
	op := item.Get
	props := op.Responses.Value("404").Value.Content["application/json"].Schema.Value.Properties

	linked := map[string]bool{
		"path parameter":     item.Parameters[0].Value == c.Parameters["id"].Value,
		"request body":       op.RequestBody.Value == c.RequestBodies["pet"].Value,
		"response":           op.Responses.Value("200").Value == c.Responses["ok"].Value,
		"header":             op.Responses.Value("404").Value.Headers["X-Why"].Value == c.Headers["why"].Value,
		"inline property":    props["pet"].Value == pet,
		"cycle in component": pet.Properties["parent"].Value == pet,
		"parameter schema":   c.Parameters["id"].Value.Schema.Value == pet,
		"alias component":    c.Schemas["Alias"].Value == pet,
		"ref to an alias":    props["alias"].Value == pet,
	}
	for what, ok := range linked {
		if !ok {
			t.Errorf("%s: not linked to its component", what)
		}
	}
	left := map[string]bool{
		"escaped name (~1)":         op.Parameters[0].Value == nil,
		"pointer below a component": props["deep"].Value == nil,
	}
	for what, ok := range left {
		if !ok {
			t.Errorf("%s: linked, but kin-openapi should resolve it", what)
		}
	}

	// kin-openapi completes the rest: every reference resolved, as its own
	// loader resolves them.
	if err := openapi3.NewLoader().ResolveRefsIn(doc, nil); err != nil {
		t.Fatal(err)
	}
	if op.Parameters[0].Value == nil || props["alias"].Value != pet || props["deep"].Value != pet.Properties["name"].Value {
		t.Error("ResolveRefsIn did not complete what prelink left")
	}
	want, err := openapi3.NewLoader().LoadFromData([]byte(prelinkDoc))
	if err != nil {
		t.Fatal(err)
	}
	wantProps := want.Paths.Value("/pets/{id}").Get.Responses.Value("404").Value.Content["application/json"].Schema.Value.Properties
	if wantProps["pet"].Value != want.Components.Schemas["Pet"].Value || wantProps["alias"].Value != want.Components.Schemas["Pet"].Value {
		t.Error("kin-openapi's own loader resolves differently from what this test expects")
	}
}

// TestPrelinkLeavesOpenAPI31: a 3.1 $ref's siblings apply on top of its
// target, which kin-openapi does while it resolves, so nothing is linked.
func TestPrelinkLeavesOpenAPI31(t *testing.T) {
	doc := decodeForPrelink(t, strings.Replace(prelinkDoc, `"3.0.3"`, `"3.1.0"`, 1))
	prelink(doc)
	if v := doc.Components.Schemas["Pet"].Value.Properties["parent"].Value; v != nil {
		t.Error("a 3.1 $ref was linked")
	}
}

// TestPrelinkMissingTarget: a $ref to a component that does not exist is
// left alone, so that the error is kin-openapi's.
func TestPrelinkMissingTarget(t *testing.T) {
	text := strings.Replace(prelinkDoc, `"pet": {"$ref": "#/components/schemas/Pet"}`, `"pet": {"$ref": "#/components/schemas/Nope"}`, 1)
	_, werr := openapi3.NewLoader().LoadFromData([]byte(text))
	_, err := LoadData(t.Context(), []byte(text), nil, Options{})
	if werr == nil || err == nil {
		t.Fatalf("want errors from both; kin %v, LoadData %v", werr, err)
	}
	if !strings.Contains(err.Error(), "Nope") {
		t.Errorf("the error does not name the missing component: %v", err)
	}
}

// TestPrelinkAliasChain: a chain of components that are each only a $ref
// to the next is followed once, every alias linked to the end's value;
// kin-openapi follows it again from each member, which took 16 seconds for
// 2,000 links and hours for 10,000. A chain that loops or ends at a missing
// component is left to kin-openapi, with its error.
func TestPrelinkAliasChain(t *testing.T) {
	const n = 20000
	var b strings.Builder
	b.WriteString(`{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/x": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/S0"}}}}}}}}, "components": {"schemas": {`)
	for i := range n {
		fmt.Fprintf(&b, `"S%d": {"$ref": "#/components/schemas/S%d"}, `, i, i+1)
	}
	fmt.Fprintf(&b, `"S%d": {"type": "string"}, "L0": {"$ref": "#/components/schemas/L1"}, "L1": {"$ref": "#/components/schemas/L0"}, "M": {"$ref": "#/components/schemas/Nope"}}}}`, n)
	doc := decodeForPrelink(t, b.String())
	prelink(doc)
	c := doc.Components.Schemas
	end := c[fmt.Sprint("S", n)].Value
	for i := range n {
		if c[fmt.Sprint("S", i)].Value != end {
			t.Fatalf("S%d is not linked to the end of its chain", i)
		}
	}
	if c["L0"].Value != nil || c["L1"].Value != nil || c["M"].Value != nil {
		t.Error("a looping or broken chain was linked")
	}

	start := time.Now()
	_, err := LoadData(t.Context(), []byte(strings.Replace(b.String(), `, "L0": {"$ref": "#/components/schemas/L1"}, "L1": {"$ref": "#/components/schemas/L0"}, "M": {"$ref": "#/components/schemas/Nope"}`, "", 1)), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("loading a chain of %d aliases took %v", n, d)
	}
}

// TestAliasChainBound: where prelink does not link alias chains (OpenAPI
// 3.1, Swagger 2.0, a name to unescape), one longer than maxAliasChain is refused at once,
// naming its start, instead of kin-openapi following it from each member
// (2,000 links took 4 to 5 seconds, 10,000 minutes). Short chains load.
func TestAliasChainBound(t *testing.T) {
	chain := func(version string, n int) string {
		prefix, head := "#/components/schemas/", `"openapi": "`+version+`", "paths": {}, "components": {"schemas": {`
		if version == "2.0" {
			prefix, head = "#/definitions/", `"swagger": "2.0", "paths": {}, "definitions": {`
		}
		var b strings.Builder
		b.WriteString(`{"info": {"title": "t", "version": "1"}, ` + head)
		for i := range n {
			fmt.Fprintf(&b, `"S%d": {"$ref": "%sS%d"}, `, i, prefix, i+1)
		}
		fmt.Fprintf(&b, `"S%d": {"type": "string"}}`, n)
		if version != "2.0" {
			b.WriteString("}")
		}
		b.WriteString("}")
		return b.String()
	}
	for _, version := range []string{"3.1.0", "2.0"} {
		if _, err := LoadData(t.Context(), []byte(chain(version, maxAliasChain)), nil, Options{}); err != nil {
			t.Errorf("%s: a chain of %d: %v", version, maxAliasChain, err)
		}
		start := time.Now()
		_, err := LoadData(t.Context(), []byte(chain(version, 5000)), nil, Options{})
		if err == nil || !strings.Contains(err.Error(), `"S0" starts a chain of 5000`) {
			t.Errorf("%s: a chain of 5000: %v, want it refused naming S0", version, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: refusing took %v", version, d)
		}
	}
	// OpenAPI 3.0: a chain prelink cannot link, through a name to unescape.
	text := strings.Replace(chain("3.0.3", 5000), `"S5000": {"type": "string"}`, `"S5000": {"$ref": "#/components/schemas/a~1b"}, "a/b": {"type": "string"}`, 1)
	if _, err := LoadData(t.Context(), []byte(text), nil, Options{}); err == nil || !strings.Contains(err.Error(), `"S0" starts a chain of 5001`) {
		t.Errorf("3.0.3, a chain through an escaped name: %v, want it refused naming S0", err)
	}
}
