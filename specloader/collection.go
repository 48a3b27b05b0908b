package specloader

import (
	"maps"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi3"
)

// Swagger 2.0 says how an array parameter is written with collectionFormat
// (csv, the default; ssv, tsv, pipes; multi, for query and formData
// parameters only), and so do the `items` of a parameter that are arrays
// themselves (csv, ssv, tsv or pipes). openapi2conv keeps it only for query
// parameters that say csv, ssv, pipes or multi: a query parameter without
// one (csv) or with tsv gets no style, so OpenAPI 3's default (form,
// explode) repeats the name instead, and path, header and formData
// parameters lose it entirely. applyCollectionFormats puts it back on the
// converted document, in OpenAPI 3 terms where they can say it and with
// [CollectionFormatExtension] where they cannot.

// CollectionFormatExtension marks a converted Swagger 2.0 array parameter,
// or form property (in its Encoding Object), whose collectionFormat the
// OpenAPI 3 style cannot express: tsv anywhere, ssv and pipes in a path or
// a header, and any array nested in the `items` of one. Its value lists
// the collectionFormat of the array, then of each level of arrays within,
// comma-separated ("tsv", "csv,pipes"); the style and explode set next to
// it describe the outer array as closely as OpenAPI 3 can. The request
// builder (bridge/request, which holds the same name) honours it.
const CollectionFormatExtension = "x-mcpbridge-collection-format"

// maxCollectionDepth bounds the levels of nested `items` followed.
const maxCollectionDepth = 8

// applyCollectionFormats sets the serialization of doc3's parameters and
// form properties from the collectionFormat of the Swagger 2.0 document it
// was converted from: the parameters section (components in doc3), then
// each path item's and operation's parameters, their local $refs resolved.
func applyCollectionFormats(doc2 *openapi2.T, doc3 *openapi3.T) {
	if doc3.Components != nil {
		for name, p2 := range doc2.Parameters {
			if p3 := doc3.Components.Parameters[name]; p3 != nil {
				setParamFormat(p2, p3.Value)
			}
		}
	}
	if doc3.Paths == nil {
		return
	}
	for path, item2 := range doc2.Paths {
		item3 := doc3.Paths.Value(path)
		if item2 == nil || item3 == nil {
			continue
		}
		shared := resolveParams(doc2, item2.Parameters)
		setParamFormats(shared, item3.Parameters)
		for method, op2 := range item2.Operations() {
			op3 := item3.GetOperation(method)
			if op2 == nil || op3 == nil {
				continue
			}
			own := resolveParams(doc2, op2.Parameters)
			setParamFormats(own, op3.Parameters)
			if op3.RequestBody != nil {
				form := formParams(own, shared)
				formOnly(form, op3.RequestBody.Value)
				setFormFormats(form, op3.RequestBody.Value)
			}
		}
	}
}

// resolveParams returns params with their local $refs (#/parameters/x)
// replaced by what they name; other $refs, and nulls, are left out.
func resolveParams(doc2 *openapi2.T, params openapi2.Parameters) []*openapi2.Parameter {
	out := make([]*openapi2.Parameter, 0, len(params))
	for _, p := range params {
		if p != nil && p.Ref != "" {
			name, ok := strings.CutPrefix(p.Ref, "#/parameters/")
			if !ok || strings.Contains(name, "/") {
				continue
			}
			p = doc2.Parameters[name]
		}
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// setParamFormats sets each converted parameter of params3 from the
// Swagger 2.0 parameter of params2 with its location and name.
func setParamFormats(params2 []*openapi2.Parameter, params3 openapi3.Parameters) {
	for _, p3 := range params3 {
		if p3 == nil || p3.Value == nil {
			continue
		}
		for _, p2 := range params2 {
			if p2.In == p3.Value.In && p2.Name == p3.Value.Name {
				setParamFormat(p2, p3.Value)
				break
			}
		}
	}
}

// setParamFormat makes p3, a query, path or header array parameter
// converted from p2, say p2's collectionFormat: with its style and explode
// in a query (path and header parameters keep simple, their default, which
// is csv), and with CollectionFormatExtension where they cannot say it.
func setParamFormat(p2 *openapi2.Parameter, p3 *openapi3.Parameter) {
	if p2 == nil || p3 == nil || !p2.Type.Is(openapi3.TypeArray) || len(p3.Content) > 0 {
		return
	}
	formats := collectionFormats(p2, p3.In == openapi3.ParameterInQuery)
	dropItemsFormats(p3.Schema)
	var inline bool // the style says all there is
	switch p3.In {
	case openapi3.ParameterInQuery:
		p3.Style, p3.Explode, inline = queryStyle(formats[0])
	case openapi3.ParameterInPath, openapi3.ParameterInHeader:
		// The default style, simple, is csv (explode makes no difference
		// to an array): the others need the extension.
		inline = formats[0] == "csv"
	default:
		return
	}
	p3.Extensions = withFormats(p3.Extensions, formats, inline)
}

// queryStyle is the OpenAPI 3 serialization of a query parameter's or a
// form property's collectionFormat, and whether it says all of it (tsv has
// no style: form without explode is the closest).
func queryStyle(format string) (style string, explode *bool, inline bool) {
	switch format {
	case "ssv":
		return openapi3.SerializationSpaceDelimited, openapi3.Ptr(false), true
	case "pipes":
		return openapi3.SerializationPipeDelimited, openapi3.Ptr(false), true
	case "multi":
		return openapi3.SerializationForm, openapi3.Ptr(true), true
	case "tsv":
		return openapi3.SerializationForm, openapi3.Ptr(false), false
	}
	return openapi3.SerializationForm, openapi3.Ptr(false), true
}

// collectionFormats lists p's collectionFormat, then that of each level of
// array `items`, the defaults applied: csv when absent or unknown, and for
// multi where it is not allowed (outside query and formData, and in items).
func collectionFormats(p *openapi2.Parameter, multi bool) []string {
	formats := []string{normFormat(p.CollectionFormat, multi)}
	items := p.Items
	for len(formats) <= maxCollectionDepth && items != nil && items.Value != nil && items.Value.Type.Is(openapi3.TypeArray) {
		// openapi2.Schema has no collectionFormat: it stays among the
		// schema's extensions.
		f, _ := items.Value.Extensions["collectionFormat"].(string)
		formats = append(formats, normFormat(f, false))
		items = items.Value.Items
	}
	return formats
}

// dropItemsFormats removes the collectionFormat that openapi2conv copies
// from Swagger 2.0 items into the extensions of the OpenAPI 3 items
// schemas of s, where it is no extension (validation refuses the "extra
// sibling field"): the parameter, or Encoding Object, says it now.
func dropItemsFormats(s *openapi3.SchemaRef) {
	for depth := 0; depth <= maxCollectionDepth && s != nil && s.Value != nil; depth++ {
		if s = s.Value.Items; s == nil || s.Value == nil {
			return
		}
		if _, ok := s.Value.Extensions["collectionFormat"]; ok {
			delete(s.Value.Extensions, "collectionFormat")
			if len(s.Value.Extensions) == 0 {
				s.Value.Extensions = nil
			}
		}
	}
}

func normFormat(f string, multi bool) string {
	switch f {
	case "ssv", "tsv", "pipes":
		return f
	case "multi":
		if multi {
			return f
		}
	}
	return "csv"
}

// withFormats records formats in ext under CollectionFormatExtension,
// unless inline (the style says it all) and there are no nested levels;
// then it removes any such key the spec itself wrote.
func withFormats(ext map[string]any, formats []string, inline bool) map[string]any {
	if inline && len(formats) == 1 {
		delete(ext, CollectionFormatExtension)
		return ext
	}
	if ext == nil {
		ext = make(map[string]any, 1)
	}
	ext[CollectionFormatExtension] = strings.Join(formats, ",")
	return ext
}

// formParams is the formData parameters an operation takes: its own, then
// those of its path item it does not redeclare.
func formParams(own, shared []*openapi2.Parameter) []*openapi2.Parameter {
	var out []*openapi2.Parameter
	for _, p := range own {
		if p.In == "formData" {
			out = append(out, p)
		}
	}
	for _, p := range shared {
		if p.In != "formData" {
			continue
		}
		redeclared := false
		for _, o := range own {
			if o.In == p.In && o.Name == p.Name {
				redeclared = true
				break
			}
		}
		if !redeclared {
			out = append(out, p)
		}
	}
	return out
}

// formOnly leaves rb, converted from the formData parameters params, with
// form media types only: Swagger 2.0 allows formData parameters only with
// application/x-www-form-urlencoded or multipart/form-data, yet
// openapi2conv gives their body whatever consumes says (application/json
// from a document-wide consumes, "*/*" without one), which the request
// builder would send as JSON. With no form type among them, the body is
// application/x-www-form-urlencoded, or multipart/form-data when a
// parameter is a file.
func formOnly(params []*openapi2.Parameter, rb *openapi3.RequestBody) {
	if rb == nil || len(params) == 0 || len(rb.Content) == 0 {
		return
	}
	forms := openapi3.Content{}
	for key, mt := range rb.Content {
		switch mediaBase(key) {
		case "application/x-www-form-urlencoded", "multipart/form-data":
			forms[key] = mt
		}
	}
	if len(forms) == len(rb.Content) {
		return
	}
	if len(forms) == 0 {
		key := "application/x-www-form-urlencoded"
		for _, p := range params {
			if p.Type.Is("file") {
				key = "multipart/form-data"
				break
			}
		}
		// Every media type holds the same schema, the form's.
		forms[key] = rb.Content[slices.Min(slices.Collect(maps.Keys(rb.Content)))]
	}
	rb.Content = forms
}

// setFormFormats gives each array property of rb's form and multipart
// media types, converted from the formData parameters params, the
// Encoding Object its collectionFormat says (in a multipart body: one part
// with the joined items, or one part per item for multi).
func setFormFormats(params []*openapi2.Parameter, rb *openapi3.RequestBody) {
	if rb == nil || len(params) == 0 {
		return
	}
	for key, mt := range rb.Content {
		switch mediaBase(key) {
		case "application/x-www-form-urlencoded", "multipart/form-data":
		default:
			continue
		}
		if mt == nil {
			continue
		}
		for _, p := range params {
			if !p.Type.Is(openapi3.TypeArray) {
				continue
			}
			formats := collectionFormats(p, true)
			if mt.Schema != nil && mt.Schema.Value != nil {
				dropItemsFormats(mt.Schema.Value.Properties[p.Name])
			}
			e := &openapi3.Encoding{}
			var inline bool
			e.Style, e.Explode, inline = queryStyle(formats[0])
			e.Extensions = withFormats(nil, formats, inline)
			if old := mt.Encoding[p.Name]; old != nil {
				e.ContentType, e.Headers = old.ContentType, old.Headers
			}
			if mt.Encoding == nil {
				mt.Encoding = make(map[string]*openapi3.Encoding, len(params))
			}
			mt.Encoding[p.Name] = e
		}
	}
}

// mediaBase is a media type without parameters, in lower case.
func mediaBase(key string) string {
	t, _, _ := strings.Cut(key, ";")
	return strings.ToLower(strings.TrimSpace(t))
}
