package bridge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/sanitizer"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// exampleKeys hold sample values rather than structure: they are redacted
// by key as well as by value (a schema property called "password" is
// structure, an example's "password" member a value).
var exampleKeys = map[string]bool{"example": true, "examples": true, "default": true, "x-example": true, "x-examples": true}

// reducedSpec returns the part of doc that ops (its selected operations)
// reach, as JSON: openapi, info, servers, security and externalDocs as doc
// has them, the tags the operations use (not webhooks, nor top-level
// extensions such as GitHub's megabytes of x-webhooks), the operations' path
// items with only their methods, and the components their $refs reach,
// transitively, plus every security scheme (named, never referred to).
// Each string passes through red; examples and defaults are also redacted
// by key.
func reducedSpec(doc *openapi3.T, ops []whitelist.Operation, red *sanitizer.Redactor) ([]byte, error) {
	paths := openapi3.NewPaths()
	used := map[string]bool{}
	for _, op := range ops {
		item := paths.Value(op.Path)
		if item == nil {
			item = &openapi3.PathItem{}
			if src := op.PathItem; src != nil {
				item.Summary, item.Description = src.Summary, src.Description
				item.Servers, item.Parameters, item.Extensions = src.Servers, src.Parameters, src.Extensions
			}
			paths.Set(op.Path, item)
		}
		item.SetOperation(op.Method, op.Op)
		for _, t := range op.Op.Tags {
			used[t] = true
		}
	}
	out := &openapi3.T{
		OpenAPI: doc.OpenAPI, Info: doc.Info, Servers: doc.Servers, Security: doc.Security,
		ExternalDocs: doc.ExternalDocs, Paths: paths,
	}
	for _, t := range doc.Tags {
		if t != nil && used[t.Name] {
			out.Tags = append(out.Tags, t)
		}
	}
	var comps openapi3.Components
	if doc.Components != nil {
		comps = *doc.Components
	}
	if len(comps.SecuritySchemes) > 0 {
		out.Components = &openapi3.Components{SecuritySchemes: comps.SecuritySchemes}
	}
	root, err := toTree(out)
	if err != nil {
		return nil, err
	}
	// The components the document refers to, transitively.
	found := map[string]map[string]any{} // section → name → value
	queue := collectRefs(root, nil)
	for len(queue) > 0 {
		ref := queue[0]
		queue = queue[1:]
		section, name, ok := componentRef(ref)
		if !ok || found[section][name] != nil {
			continue
		}
		v := componentValue(&comps, section, name)
		if v == nil {
			continue // a dangling $ref: the document says so itself
		}
		tree, err := toTree(v)
		if err != nil {
			return nil, fmt.Errorf("components/%s/%s: %w", section, name, err)
		}
		if found[section] == nil {
			found[section] = map[string]any{}
		}
		found[section][name] = tree
		queue = collectRefs(tree, queue)
	}
	if len(found) > 0 {
		c, _ := root["components"].(map[string]any)
		if c == nil {
			c = map[string]any{}
			root["components"] = c
		}
		for section, entries := range found {
			c[section] = entries
		}
	}
	return json.Marshal(redactTree(root, red, false))
}

// toTree marshals v and decodes it as plain JSON values.
func toTree(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding the spec: %w", err)
	}
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("decoding the spec: %w", err)
	}
	return tree, nil
}

// collectRefs appends every "$ref" string under v to refs.
func collectRefs(v any, refs []string) []string {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				refs = append(refs, s)
				continue
			}
			refs = collectRefs(e, refs)
		}
	case []any:
		for _, e := range x {
			refs = collectRefs(e, refs)
		}
	}
	return refs
}

// componentRef splits "#/components/schemas/Pet" into its section and
// (unescaped) name.
func componentRef(ref string) (section, name string, ok bool) {
	rest, ok := strings.CutPrefix(ref, "#/components/")
	if !ok {
		return "", "", false
	}
	section, name, ok = strings.Cut(rest, "/")
	if !ok || name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	return section, strings.NewReplacer("~1", "/", "~0", "~").Replace(name), true
}

// componentValue is components/section/name, or nil.
func componentValue(c *openapi3.Components, section, name string) any {
	switch section {
	case "schemas":
		return nonNil(c.Schemas[name])
	case "parameters":
		return nonNil(c.Parameters[name])
	case "headers":
		return nonNil(c.Headers[name])
	case "requestBodies":
		return nonNil(c.RequestBodies[name])
	case "responses":
		return nonNil(c.Responses[name])
	case "examples":
		return nonNil(c.Examples[name])
	case "links":
		return nonNil(c.Links[name])
	case "callbacks":
		return nonNil(c.Callbacks[name])
	case "securitySchemes":
		return nonNil(c.SecuritySchemes[name])
	}
	return nil
}

// nonNil is p as an interface, or nil (not a typed nil) when p is nil.
func nonNil[T any](p *T) any {
	if p == nil {
		return nil
	}
	return p
}

// redactTree masks secrets in every string of v (keys included); under an
// example or default (byKey) sensitive keys are masked too.
func redactTree(v any, red *sanitizer.Redactor, byKey bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			inExample := byKey || exampleKeys[k]
			if inExample {
				e = red.Redact(e)
			}
			out[red.RedactString(k)] = redactTree(e, red, inExample)
		}
		return out
	case []any:
		out := slices.Clone(x)
		for i, e := range out {
			out[i] = redactTree(e, red, byKey)
		}
		return out
	case string:
		return red.RedactString(x)
	}
	return v
}

// maxSpecOperations bounds the operations openapi://spec describes: 200 of
// GitHub's operations already make a 1 MB document (no agent reads that),
// and reducing all 1,223 would add a second to a cold start.
const maxSpecOperations = 200

// buildSpec is the whitelisted part of doc for the operations that became
// tools (nil without doc, or with more than maxSpecOperations). A failure
// is logged and leaves the resource out: the tools do not depend on it.
func (c *Catalog) buildSpec(doc *openapi3.T, ops []whitelist.Operation) []byte {
	if doc == nil {
		return nil
	}
	if n := c.Len(); n > maxSpecOperations {
		c.log.Info(SpecURI+" left out: the whitelist selects more operations than it describes; narrow the whitelist to serve it",
			zap.Int("operations", n), zap.Int("max", maxSpecOperations))
		return nil
	}
	built := make(map[string]bool, len(c.tools))
	for _, t := range c.tools {
		if t.builtin == notBuiltin {
			built[t.plan.Label] = true
		}
	}
	var kept []whitelist.Operation
	for _, op := range ops {
		if op.Op != nil && built[op.Method+" "+op.Path] {
			kept = append(kept, op)
		}
	}
	spec, err := reducedSpec(doc, kept, c.redactor)
	if err != nil {
		c.log.Warn("the whitelisted spec cannot be served as "+SpecURI, zap.Error(err))
		return nil
	}
	return spec
}
