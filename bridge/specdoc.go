package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
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
	nest := nestMeter{memo: map[nestKey]int{}}
	if nest.tooDeep(out) {
		return nil, errTooDeep
	}
	root, err := toTree(out)
	if err != nil {
		return nil, err
	}
	err = addComponents(root, func(section, name string) (any, error) {
		v := componentValue(&comps, section, name)
		if v == nil {
			return nil, nil
		}
		if nest.tooDeep(v) {
			return nil, fmt.Errorf("components/%s/%s: %w", section, name, errTooDeep)
		}
		tree, err := toTree(v)
		if err != nil {
			return nil, fmt.Errorf("components/%s/%s: %w", section, name, err)
		}
		return tree, nil
	})
	if err != nil {
		return nil, err
	}
	return json.Marshal(redactTree(root, red, false))
}

// addComponents adds to root's components the ones its $refs reach,
// transitively; lookup gives one component as a JSON tree, nil for none
// (a dangling $ref: the document says so itself).
func addComponents(root map[string]any, lookup func(section, name string) (any, error)) error {
	found := map[string]map[string]any{} // section → name → value
	queue := collectRefs(root, nil)
	for len(queue) > 0 {
		ref := queue[0]
		queue = queue[1:]
		section, name, ok := componentRef(ref)
		if !ok || found[section][name] != nil {
			continue
		}
		tree, err := lookup(section, name)
		if err != nil {
			return err
		}
		if tree == nil {
			continue
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
			if have, ok := c[section].(map[string]any); ok {
				maps.Copy(have, entries) // the security schemes, all kept
				continue
			}
			c[section] = entries
		}
	}
	return nil
}

// maxSpecNesting bounds how many kin-openapi values (a schema is two, its
// SchemaRef and the Schema) nest inside each other, $refs not followed, in
// what reducedSpec encodes. Each of them encodes itself with encoding/json,
// which compacts again whatever a nested one returned, so encoding costs
// depth × size: an items chain 9,900 levels deep took 9 s and 800 MB.
// Real specs nest a few dozen levels (schemas 26 at most).
const maxSpecNesting = 512

var errTooDeep = fmt.Errorf("nested deeper than %d levels", maxSpecNesting)

var marshalerType = reflect.TypeFor[json.Marshaler]()

// nestKey is a value reached through a pointer: its address and type (a
// struct and its first field share the address).
type nestKey struct {
	addr uintptr
	typ  reflect.Type
}

// nestMeter measures the nesting of the values that encode themselves
// (json.Marshaler), each pointer once: linear in what it walks.
type nestMeter struct {
	memo  map[nestKey]int // depth under a pointer; maxSpecNesting+1 while walked (a cycle)
	types map[reflect.Type]bool
}

// tooDeep reports whether v nests more than maxSpecNesting such values.
func (m *nestMeter) tooDeep(v any) bool {
	return m.depth(reflect.ValueOf(v)) > maxSpecNesting
}

func (m *nestMeter) marshaler(t reflect.Type) bool {
	is, ok := m.types[t]
	if !ok {
		is = t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType)
		if m.types == nil {
			m.types = map[reflect.Type]bool{}
		}
		m.types[t] = is
	}
	return is
}

// depth is the deepest chain of json.Marshaler values in v, at most
// maxSpecNesting+1. A kin-openapi reference with its Ref set encodes as
// {"$ref": ...}: one level, whatever it resolved to.
func (m *nestMeter) depth(v reflect.Value) int {
	const over = maxSpecNesting + 1
	d := 0
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		key := nestKey{v.Pointer(), v.Type()}
		if d, ok := m.memo[key]; ok {
			return d
		}
		m.memo[key] = over
		d = m.depth(v.Elem())
		m.memo[key] = d
		return d
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return m.depth(v.Elem())
	case reflect.Struct:
		if ref := v.FieldByName("Ref"); ref.IsValid() && ref.Kind() == reflect.String && ref.Len() > 0 && m.marshaler(v.Type()) {
			return 1
		}
		for i := 0; i < v.NumField() && d < over; i++ {
			d = max(d, m.depth(v.Field(i)))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next() && d < over; {
			d = max(d, m.depth(it.Value()))
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len() && d < over; i++ {
			d = max(d, m.depth(v.Index(i)))
		}
	default:
		return 0
	}
	if m.marshaler(v.Type()) {
		d++
	}
	return min(d, over)
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

// SpecAccess says which part of openapi://spec (see [Catalog.Spec]) id may
// read: the operations it may call (see [Tool.Allowed]). all reports that
// it may call every one, and then Spec is its document as is. Otherwise key
// names the set it may call, within this catalog: callers with one key are
// served one document, [Catalog.SpecFor]'s, which a server may keep by key
// rather than make per read.
func (c *Catalog) SpecAccess(id *Identity) (key string, all bool) {
	var bits []byte
	all = true
	i := 0
	for _, t := range c.tools {
		if t.builtin != notBuiltin {
			continue
		}
		if i%8 == 0 {
			bits = append(bits, 0)
		}
		if t.Allowed(id) {
			bits[i/8] |= 1 << (i % 8)
		} else {
			all = false
		}
		i++
	}
	if all {
		return "", true
	}
	return string(bits), false
}

// SpecFor is openapi://spec as id may read it: [Catalog.Spec] reduced to
// the operations id may call. The others leave their path items (a path
// item left with no operation leaves the document), and the tags and
// components only they used leave with them; the security schemes stay.
// It is nil when the catalog serves no spec, and Spec itself when id may
// call every operation. Each call reduces the document afresh: see
// [Catalog.SpecAccess] for what may be shared.
func (c *Catalog) SpecFor(id *Identity) ([]byte, error) {
	spec := c.Spec()
	if spec == nil {
		return nil, nil
	}
	if _, all := c.SpecAccess(id); all {
		return spec, nil
	}
	ops := map[string]bool{}
	for _, t := range c.tools {
		if t.builtin == notBuiltin && t.Allowed(id) {
			ops[t.plan.Label] = true
		}
	}
	return narrowSpec(spec, ops)
}

// pathItemFields are the members of a path item that are not operations.
var pathItemFields = map[string]bool{"summary": true, "description": true, "servers": true, "parameters": true, "$ref": true}

// narrowSpec reduces spec, a document reducedSpec made, to the operations
// ops names ("GET /pets/{petId}", as plan labels say). Whatever member of a
// path item is not known to be something else counts as an operation, and
// stays only when named: what is not recognized is left out, not shown.
// The document was redacted when made; nothing is added to it here.
func narrowSpec(spec []byte, ops map[string]bool) ([]byte, error) {
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(spec))
	dec.UseNumber() // numbers (examples, limits) pass through as written
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", SpecURI, err)
	}
	used := map[string]bool{} // tags of the operations kept
	paths, _ := root["paths"].(map[string]any)
	for path, v := range paths {
		item, _ := v.(map[string]any)
		kept := 0
		for k, op := range item {
			if pathItemFields[k] || strings.HasPrefix(k, "x-") {
				continue
			}
			if !ops[strings.ToUpper(k)+" "+path] {
				delete(item, k)
				continue
			}
			kept++
			o, _ := op.(map[string]any)
			tags, _ := o["tags"].([]any)
			for _, t := range tags {
				if name, ok := t.(string); ok {
					used[name] = true
				}
			}
		}
		if kept == 0 {
			delete(paths, path)
		}
	}
	if tags, ok := root["tags"].([]any); ok {
		var kept []any
		for _, t := range tags {
			m, _ := t.(map[string]any)
			if name, _ := m["name"].(string); used[name] {
				kept = append(kept, t)
			}
		}
		if kept == nil {
			delete(root, "tags")
		} else {
			root["tags"] = kept
		}
	}
	if comps, ok := root["components"].(map[string]any); ok {
		delete(root, "components")
		if schemes, ok := comps["securitySchemes"]; ok {
			root["components"] = map[string]any{"securitySchemes": schemes}
		}
		err := addComponents(root, func(section, name string) (any, error) {
			entries, _ := comps[section].(map[string]any)
			return entries[name], nil
		})
		if err != nil {
			return nil, err
		}
	}
	out, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", SpecURI, err)
	}
	return out, nil
}
