package bridge

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"mime/multipart"
	"net/textproto"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// bodyKind is how a request body is encoded.
type bodyKind uint8

const (
	bodyKindJSON      bodyKind = iota + 1 // application/json, +json, */json
	bodyKindForm                          // application/x-www-form-urlencoded
	bodyKindMultipart                     // multipart/form-data
	bodyKindText                          // text/*, XML, YAML...: the string as-is
	bodyKindBinary                        // anything else: base64 argument, raw bytes on the wire
)

// bodyFileKind says how a multipart property carries file data.
type bodyFileKind uint8

const (
	bodyFileNone   bodyFileKind = iota // an ordinary text (or JSON) part
	bodyFileRaw                        // the part holds the decoded bytes (format: binary, contentMediaType, non-text encoding contentType)
	bodyFileBase64                     // the part holds base64 text (format: byte, contentEncoding)
)

// bodyFilePlan is the precomputed treatment of one multipart file property.
type bodyFilePlan struct {
	kind        bodyFileKind
	contentType string // default part Content-Type for raw files ("" means application/octet-stream)
}

// bodySpec is the precompiled plan for a request body, built once by
// newBodySpec.
type bodySpec struct {
	ContentType string                        // chosen media type as written in the spec, e.g. application/json, multipart/form-data, image/*
	Required    bool                          // the operation requires a body
	Encoding    map[string]*openapi3.Encoding // form/multipart per-property encoding (contentType, style, explode)

	kind     bodyKind
	header   string                  // Content-Type to send (wildcards resolved); multipart adds its boundary at encode time
	accepts  []string                // media types (ranges) of the chosen kind, for a file object's contentType
	files    map[string]bodyFilePlan // multipart properties carrying files (arrays: per item)
	boundary string                  // multipart boundary; "" means random (mime/multipart)
}

// newBodySpec chooses the media type from an operation's request body:
// application/json, then any +json or */json, then
// application/x-www-form-urlencoded, multipart/form-data, text/plain,
// application/octet-stream, then other textual types (text/*, XML, YAML;
// sent as text) and anything else (*/*, image/png...; sent as bytes). Within
// a rank a concrete type beats a wildcard, then sorted order decides.
//
// It returns (nil, nil) when there is no body (nil, or no media type and
// not required). Errors, for bodies that cannot be expressed: a required
// body with no media type; only unsupported media types (multipart types
// other than form-data, unparsable keys, form or multipart types whose
// schema is not an object); an Encoding Object style other than form,
// spaceDelimited, pipeDelimited or deepObject.
func newBodySpec(rb *openapi3.RequestBody) (*bodySpec, error) {
	if rb == nil || len(rb.Content) == 0 {
		if rb != nil && rb.Required {
			return nil, errors.New("required request body declares no media type")
		}
		return nil, nil
	}
	type candidate struct {
		key  string
		rank int
		wild bool
	}
	var cands []candidate
	var unsupported, notObject []string
	for key := range rb.Content {
		rank := bodyRank(key)
		if rank < 0 {
			unsupported = append(unsupported, key)
			continue
		}
		if k := bodyKindOfRank(rank); (k == bodyKindForm || k == bodyKindMultipart) && !bodyObjectLike(rb.Content[key]) {
			// Form fields and parts are named by the schema's properties: a
			// string or array schema names none, so this type cannot be
			// written (Jira's attachments and column lists).
			notObject = append(notObject, key)
			continue
		}
		cands = append(cands, candidate{key, rank, strings.Contains(key, "*")})
	}
	if len(cands) == 0 {
		slices.Sort(unsupported)
		slices.Sort(notObject)
		var why []string
		if len(unsupported) > 0 {
			why = append(why, "no supported media type among "+strings.Join(unsupported, ", "))
		}
		if len(notObject) > 0 {
			why = append(why, strings.Join(notObject, ", ")+" with a schema that is not an object, so its fields have no names")
		}
		return nil, errors.New(strings.Join(why, "; "))
	}
	slices.SortFunc(cands, func(a, b candidate) int {
		switch {
		case a.rank != b.rank:
			return a.rank - b.rank
		case a.wild != b.wild:
			if a.wild {
				return 1
			}
			return -1
		}
		return strings.Compare(a.key, b.key)
	})
	c := cands[0]
	b := &bodySpec{ContentType: c.key, Required: rb.Required, kind: bodyKindOfRank(c.rank)}
	mt := rb.Content[c.key]
	if mt != nil {
		b.Encoding = mt.Encoding
	}
	b.header = strings.TrimSpace(c.key)
	if c.wild && b.kind == bodyKindBinary && mt != nil && mt.Schema != nil && mt.Schema.Value != nil &&
		(mt.Schema.Value.Type.Is(openapi3.TypeObject) || mt.Schema.Value.Type.Is(openapi3.TypeArray) || len(mt.Schema.Value.Properties) > 0) {
		// "*/*" (or "application/*") with a structured schema: the API takes
		// any type, and JSON is the one that expresses the schema.
		b.kind = bodyKindJSON
	}
	if c.wild {
		switch b.kind {
		case bodyKindJSON:
			b.header = "application/json"
		case bodyKindText:
			b.header = "text/plain"
		default:
			b.header = "application/octet-stream"
		}
	}
	for _, o := range cands {
		if bodyKindOfRank(o.rank) == bodyKindOfRank(c.rank) {
			b.accepts = append(b.accepts, o.key)
		}
	}
	if b.kind == bodyKindForm || b.kind == bodyKindMultipart {
		for _, name := range slices.Sorted(maps.Keys(b.Encoding)) {
			e := b.Encoding[name]
			switch e.SerializationMethod().Style {
			case openapi3.SerializationForm, openapi3.SerializationSpaceDelimited,
				openapi3.SerializationPipeDelimited, openapi3.SerializationDeepObject:
			default:
				return nil, fmt.Errorf("%s property %q: encoding style %q is not allowed", c.key, name, e.Style)
			}
		}
	}
	if b.kind == bodyKindMultipart {
		var schema *openapi3.SchemaRef
		if mt != nil {
			schema = mt.Schema
		}
		b.files = bodyFilePlans(schema, b.Encoding)
	}
	return b, nil
}

// bodyObjectLike reports whether a form or multipart media type's schema
// can name fields: an object, or a schema that does not say (no type, or
// no schema at all: a free-form object).
func bodyObjectLike(mt *openapi3.MediaType) bool {
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return true
	}
	t := mt.Schema.Value.Type
	return t == nil || len(*t) == 0 || t.Includes(openapi3.TypeObject)
}

// bodyRank orders media types by preference; -1 means unsupported.
func bodyRank(key string) int {
	if strings.ContainsAny(key, "\r\n") {
		return -1
	}
	mt := encMediaType(key)
	typ, sub, ok := strings.Cut(mt, "/")
	switch {
	case !ok || typ == "" || sub == "":
		return -1
	case mt == "application/json":
		return 0
	case encIsJSONMedia(mt):
		return 1
	case mt == "application/x-www-form-urlencoded":
		return 2
	case mt == "multipart/form-data":
		return 3
	case typ == "multipart":
		return -1
	case mt == "text/plain":
		return 4
	case mt == "application/octet-stream":
		return 5
	case bodyIsTextual(mt):
		return 6
	}
	return 7
}

func bodyKindOfRank(rank int) bodyKind {
	return [...]bodyKind{bodyKindJSON, bodyKindJSON, bodyKindForm, bodyKindMultipart, bodyKindText,
		bodyKindBinary, bodyKindText, bodyKindBinary}[rank]
}

// bodyIsTextual reports whether a bare media type holds text an agent can
// write as a string.
func bodyIsTextual(mt string) bool {
	switch mt {
	case "application/xml", "application/yaml", "application/x-yaml", "application/graphql",
		"application/javascript", "application/x-ndjson", "application/sql":
		return true
	}
	return strings.HasPrefix(mt, "text/") || encIsJSONMedia(mt) ||
		strings.HasSuffix(mt, "+xml") || strings.HasSuffix(mt, "+yaml")
}

// bodyFilePlans finds the multipart properties that carry files: schema
// type string with format binary or contentMediaType (raw bytes), format
// byte or contentEncoding (base64 text), or an Encoding Object contentType
// that is not textual (raw bytes). For arrays the items decide.
func bodyFilePlans(schema *openapi3.SchemaRef, enc map[string]*openapi3.Encoding) map[string]bodyFilePlan {
	props := map[string]*openapi3.Schema{}
	var collect func(s *openapi3.SchemaRef, depth int)
	collect = func(s *openapi3.SchemaRef, depth int) {
		if s == nil || s.Value == nil || depth > 8 {
			return
		}
		for name, p := range s.Value.Properties {
			if p != nil && p.Value != nil && props[name] == nil {
				props[name] = p.Value
			}
		}
		for _, sub := range s.Value.AllOf {
			collect(sub, depth+1)
		}
	}
	collect(schema, 0)
	for name := range enc {
		if _, ok := props[name]; !ok {
			props[name] = nil
		}
	}
	plans := map[string]bodyFilePlan{}
	for name, s := range props {
		if s != nil && s.Type.Is(openapi3.TypeArray) && s.Items != nil {
			s = s.Items.Value
		}
		var ect string
		if e := enc[name]; e != nil {
			ect = e.ContentType
		}
		if p := bodyFilePlanOf(s, ect); p.kind != bodyFileNone {
			plans[name] = p
		}
	}
	return plans
}

func bodyFilePlanOf(s *openapi3.Schema, encContentType string) bodyFilePlan {
	concrete := bodyFirstConcrete(encContentType)
	switch {
	case s != nil && (s.Format == "byte" || s.ContentEncoding != ""):
		return bodyFilePlan{kind: bodyFileBase64}
	case s != nil && (s.Format == "binary" || s.ContentMediaType != ""):
		if concrete == "" {
			concrete = s.ContentMediaType
		}
		return bodyFilePlan{kind: bodyFileRaw, contentType: concrete}
	case encContentType != "":
		for r := range strings.SplitSeq(encContentType, ",") {
			if bodyIsTextual(encMediaType(r)) {
				return bodyFilePlan{}
			}
		}
		return bodyFilePlan{kind: bodyFileRaw, contentType: concrete}
	}
	return bodyFilePlan{}
}

// bodyFirstConcrete returns the first media type of a comma-separated list
// that is not a wildcard, or "".
func bodyFirstConcrete(list string) string {
	for r := range strings.SplitSeq(list, ",") {
		if r = strings.TrimSpace(r); r != "" && !strings.Contains(r, "*") {
			return r
		}
	}
	return ""
}

// binary reports whether the body argument is a base64 string (or file
// object) sent as raw bytes: the input schema should say so.
func (b *bodySpec) binary() bool { return b.kind == bodyKindBinary }

// fileProps lists the multipart properties that take raw file data (a
// base64 string or the bodyFileSchema object; for an array property, each
// item), sorted: the input schema should offer the file object for them.
func (b *bodySpec) fileProps() []string {
	var names []string
	for name, p := range b.files {
		if p.kind == bodyFileRaw {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// encode serializes the `body` argument value and returns the bytes and the
// exact Content-Type header (multipart includes its boundary). A null value
// means no body (nil, "", nil) unless the body is required.
//
//   - JSON: compact, HTML characters unescaped.
//   - Form: one entry per object property in sorted order. With an Encoding
//     Object that sets style, explode or allowReserved, the property is
//     serialized like a query parameter with that style. Otherwise
//     (content-based, as OAS 3.1 defines the defaults) primitives are
//     written as-is, arrays as repeated keys, and objects, nested values
//     and properties whose encoding contentType is JSON as JSON text.
//   - Multipart: one part per property (arrays: one part per item, unless
//     the encoding sets explode false: one part joined by the style's
//     delimiter). File properties (see bodyFilePlans) take a base64 string
//     (a data: URL works too) or a bodyFileSchema object; other properties
//     are text parts, objects JSON parts (application/json).
//   - Text: the string as-is (numbers and booleans formatted).
//   - Binary: the base64 string decoded (or a file object, whose
//     contentType may pick among the body's media types).
func (b *bodySpec) encode(v any) ([]byte, string, error) {
	if v == nil {
		if b.Required {
			return nil, "", errors.New("body is required")
		}
		return nil, "", nil
	}
	switch b.kind {
	case bodyKindJSON:
		data, err := encJSON(v)
		if err != nil {
			return nil, "", fmt.Errorf("body: %w", err)
		}
		return data, b.header, nil
	case bodyKindForm:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("body must be an object for %s", b.ContentType)
		}
		data, err := b.encodeForm(obj)
		return data, b.header, err
	case bodyKindMultipart:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("body must be an object for %s", b.ContentType)
		}
		return b.encodeMultipart(obj)
	case bodyKindText:
		switch v.(type) {
		case []any, map[string]any:
			return nil, "", fmt.Errorf("body must be a string for %s", b.ContentType)
		}
		str, err := encScalar(v)
		if err != nil {
			return nil, "", fmt.Errorf("body: %w", err)
		}
		return []byte(str), b.header, nil
	}
	f, err := bodyParseFile(v, bodyFileRaw)
	if err != nil {
		return nil, "", fmt.Errorf("body: %w", err)
	}
	ct := b.header
	if f.contentType != "" {
		switch {
		case bodyMatchesAny(b.accepts, f.contentType):
			ct = f.contentType
		case f.explicitType:
			return nil, "", fmt.Errorf("body: contentType %q is not accepted (accepted: %s)", f.contentType, strings.Join(b.accepts, ", "))
		}
	}
	return f.data, ct, nil
}

func (b *bodySpec) encodeForm(obj map[string]any) ([]byte, error) {
	var buf []byte
	for _, name := range encSortedKeys(obj) {
		v := obj[name]
		e := b.Encoding[name]
		var err error
		if e != nil && (e.Style != "" || e.Explode != nil || e.AllowReserved) {
			sm := e.SerializationMethod()
			ps := paramSpec{Name: name, In: paramInQuery, Style: sm.Style, AllowReserved: e.AllowReserved,
				Explode: sm.Explode || sm.Style == openapi3.SerializationDeepObject}
			buf, err = ps.appendQuery(buf, v)
		} else {
			buf, err = bodyAppendFormContent(buf, name, v, e)
		}
		if err != nil {
			return nil, fmt.Errorf("body property %q: %w", name, err)
		}
	}
	return buf, nil
}

// bodyAppendFormContent writes a content-based form property.
func bodyAppendFormContent(buf []byte, name string, v any, e *openapi3.Encoding) ([]byte, error) {
	asJSON := e != nil && encIsJSONMedia(e.ContentType)
	items := []any{v}
	if arr, ok := v.([]any); ok && !asJSON {
		items = arr
	}
	for _, item := range items {
		data, _, err := bodyValueText(item, asJSON)
		if err != nil {
			return nil, err
		}
		buf = encAppendPair(buf, name, string(data), encStrict)
	}
	return buf, nil
}

// bodyValueText is a form value or text part: JSON text for arrays, objects
// and when asJSON, else the primitive as text; isJSON says which.
func bodyValueText(v any, asJSON bool) (data []byte, isJSON bool, err error) {
	switch v.(type) {
	case []any, map[string]any:
		asJSON = true
	}
	if asJSON {
		data, err = encJSON(v)
		return data, true, err
	}
	str, err := encScalar(v)
	return []byte(str), false, err
}

func (b *bodySpec) encodeMultipart(obj map[string]any) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if b.boundary != "" {
		if err := w.SetBoundary(b.boundary); err != nil {
			return nil, "", fmt.Errorf("setting multipart boundary: %w", err)
		}
	}
	for _, name := range encSortedKeys(obj) {
		if err := b.writeProperty(w, name, obj[name]); err != nil {
			return nil, "", fmt.Errorf("body property %q: %w", name, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", fmt.Errorf("closing multipart body: %w", err)
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

func (b *bodySpec) writeProperty(w *multipart.Writer, name string, v any) error {
	if bodyHasControl(name) {
		return errors.New("property names must not contain control characters")
	}
	e := b.Encoding[name]
	plan := b.files[name]
	items := []any{v}
	if arr, ok := v.([]any); ok {
		items = arr
		if e != nil && e.Explode != nil && !*e.Explode && plan.kind == bodyFileNone {
			delim := map[string]string{openapi3.SerializationSpaceDelimited: " ", openapi3.SerializationPipeDelimited: "|"}[e.Style]
			if delim == "" {
				delim = ","
			}
			var sb strings.Builder
			for i, item := range arr {
				str, err := encItemString(item, e.SerializationMethod().Style)
				if err != nil {
					return err
				}
				if i > 0 {
					sb.WriteString(delim)
				}
				sb.WriteString(str)
			}
			items = []any{sb.String()}
		}
	}
	for _, item := range items {
		if item == nil {
			continue
		}
		var err error
		if plan.kind == bodyFileNone {
			err = bodyWriteTextPart(w, name, item, e)
		} else {
			err = bodyWriteFilePart(w, name, item, plan)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func bodyWriteTextPart(w *multipart.Writer, name string, v any, e *openapi3.Encoding) error {
	var ct string
	if e != nil {
		ct = bodyFirstConcrete(e.ContentType)
	}
	data, isJSON, err := bodyValueText(v, encIsJSONMedia(ct))
	if err != nil {
		return err
	}
	if isJSON && ct == "" {
		ct = "application/json"
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="`+bodyQuote(name)+`"`)
	if ct != "" && encMediaType(ct) != "text/plain" {
		h.Set("Content-Type", ct)
	}
	pw, err := w.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = pw.Write(data)
	return err
}
