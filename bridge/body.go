package bridge

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"mime"
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

func bodyWriteFilePart(w *multipart.Writer, name string, v any, plan bodyFilePlan) error {
	f, err := bodyParseFile(v, plan.kind)
	if err != nil {
		return err
	}
	h := textproto.MIMEHeader{}
	if plan.kind == bodyFileBase64 {
		// Base64 text is an ordinary text field; a filename is kept if given.
		if f.filename != "" {
			h.Set("Content-Disposition", multipart.FileContentDisposition(name, f.filename))
		} else {
			h.Set("Content-Disposition", `form-data; name="`+bodyQuote(name)+`"`)
		}
	} else {
		filename := f.filename
		if filename == "" {
			filename = name // many servers only treat a part with a filename as a file
		}
		h.Set("Content-Disposition", multipart.FileContentDisposition(name, filename))
		ct := f.contentType
		if ct == "" {
			ct = plan.contentType
		}
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.Set("Content-Type", ct)
	}
	pw, err := w.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = pw.Write(f.data)
	return err
}

// bodyFile is a decoded file argument.
type bodyFile struct {
	data         []byte
	filename     string
	contentType  string
	explicitType bool // contentType came from the file object, not a data: URL
}

// bodyParseFile decodes a file argument: a base64 string (or data: URL), or
// a bodyFileSchema object. For bodyFileBase64 the data stays base64 text.
func bodyParseFile(v any, kind bodyFileKind) (bodyFile, error) {
	var f bodyFile
	switch x := v.(type) {
	case string:
		data, ct, err := bodyDecodeBase64(x)
		if err != nil {
			return f, err
		}
		f.data, f.contentType = data, ct
	case map[string]any:
		content, encoding := "", "base64"
		for k, val := range x {
			s, ok := val.(string)
			if !ok && val != nil {
				return f, fmt.Errorf("file field %q must be a string", k)
			}
			switch k {
			case "content":
				content = s
			case "encoding":
				if s != "" {
					encoding = s
				}
			case "filename":
				f.filename = s
			case "contentType":
				f.contentType = s
				f.explicitType = s != ""
			default:
				return f, fmt.Errorf("unknown file field %q (want content, encoding, filename, contentType)", k)
			}
		}
		if _, ok := x["content"].(string); !ok {
			return f, errors.New("file object needs a string content")
		}
		switch encoding {
		case "text":
			f.data = []byte(content)
		case "base64":
			data, ct, err := bodyDecodeBase64(content)
			if err != nil {
				return f, err
			}
			f.data = data
			if f.contentType == "" {
				f.contentType = ct
			}
		default:
			return f, fmt.Errorf("file encoding %q is not base64 or text", encoding)
		}
	default:
		return f, errors.New("expected a base64 string or a file object {content, encoding, filename, contentType}")
	}
	if bodyHasControl(f.filename) {
		return f, errors.New("filename must not contain control characters")
	}
	if f.contentType != "" {
		// mime.ParseMediaType takes a bare token ("png") too; a part or body
		// needs a concrete type/subtype.
		mt, params, err := mime.ParseMediaType(f.contentType)
		typ, sub, _ := strings.Cut(mt, "/")
		if err != nil || typ == "" || sub == "" || strings.Contains(mt, "*") {
			return f, fmt.Errorf("invalid contentType %q: want a media type such as image/png", f.contentType)
		}
		f.contentType = mime.FormatMediaType(mt, params)
	}
	if kind == bodyFileBase64 {
		f.data = []byte(base64.StdEncoding.EncodeToString(f.data))
	}
	return f, nil
}

// bodyDecodeBase64 decodes standard or URL-safe base64, padded or not,
// ignoring whitespace; a data: URL ("data:image/png;base64,...") also gives
// its media type.
func bodyDecodeBase64(s string) ([]byte, string, error) {
	var ct string
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		meta, payload, found := strings.Cut(rest, ",")
		mt, isB64 := strings.CutSuffix(meta, ";base64")
		if !found || !isB64 {
			return nil, "", errors.New("a data: URL must be base64 (data:<type>;base64,<data>)")
		}
		s, ct = payload, mt
	}
	s = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, s)
	var firstErr error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		data, err := enc.DecodeString(s)
		if err == nil {
			return data, ct, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, "", fmt.Errorf("invalid base64: %w", firstErr)
}

// bodyMatchesAny reports whether media type ct is one of the ranges
// (type/subtype, type/*, */*), ignoring parameters.
func bodyMatchesAny(ranges []string, ct string) bool {
	mt := encMediaType(ct)
	typ, _, _ := strings.Cut(mt, "/")
	for _, r := range ranges {
		if r = encMediaType(r); r == mt || r == "*/*" || r == typ+"/*" {
			return true
		}
	}
	return false
}

func bodyHasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// bodyQuote escapes a Content-Disposition parameter value as mime/multipart
// does.
func bodyQuote(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// bodyMediaTypePattern matches a concrete media type with optional
// parameters (RFC 6838 names), as bodyParseFile requires.
const bodyMediaTypePattern = `^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*( *; *[A-Za-z0-9!#$&^_.+-]+=([A-Za-z0-9!#$&^_.+-]+|"[^"\\]*"))*$`

// bodyFileSchema is the JSON Schema of the file-object alternative a file
// argument may take instead of a plain base64 string: content (base64 unless
// encoding is "text"), optional filename and contentType. Unknown fields are
// rejected by encode, hence additionalProperties false.
func bodyFileSchema() map[string]any {
	return map[string]any{
		"type":        "object",
		"description": "A file. content is base64-encoded unless encoding is \"text\"; filename and contentType are sent with the part.",
		"properties": map[string]any{
			"content":     map[string]any{"type": "string", "description": "File content: base64 (standard or URL-safe) unless encoding is \"text\"."},
			"encoding":    map[string]any{"type": "string", "enum": []any{"base64", "text"}, "default": "base64"},
			"filename":    map[string]any{"type": "string", "description": "File name sent in Content-Disposition; defaults to the property name."},
			"contentType": map[string]any{"type": "string", "pattern": bodyMediaTypePattern, "description": "Media type of the file, e.g. image/png; defaults to the type the API declares."},
		},
		"required":             []any{"content"},
		"additionalProperties": false,
	}
}
