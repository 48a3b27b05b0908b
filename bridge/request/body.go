package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpbridge/mcpbridge/bridge/media"
	"maps"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// BodyKind is how a request body is encoded.
type BodyKind uint8

const (
	KindJSON      BodyKind = iota + 1 // application/json, +json, */json
	KindForm                          // application/x-www-form-urlencoded
	KindMultipart                     // multipart/form-data
	KindText                          // text/*, XML, YAML...: the string as-is
	KindBinary                        // anything else: base64 argument, raw bytes on the wire
)

// FileKind says how a multipart property carries file data.
type FileKind uint8

const (
	FileNone   FileKind = iota // an ordinary text (or JSON) part
	FileRaw                    // the part holds the decoded bytes (format: binary, contentMediaType, non-text encoding contentType)
	FileBase64                 // the part holds base64 text (format: byte, contentEncoding)
)

// FilePlan is the precomputed treatment of one multipart file property.
type FilePlan struct {
	Kind        FileKind
	ContentType string // default part Content-Type for raw files ("" means application/octet-stream)
	// Accepts is the encoding's contentType as written when it names more
	// than ContentType ("application/pdf, image/png", "image/*"): a file
	// whose bytes name one of those types goes as that type.
	Accepts string
}

// Body is the precompiled plan for a request body, built once by
// NewBody.
type Body struct {
	ContentType string               // chosen media type as written in the spec, e.g. application/json, multipart/form-data, image/*
	Required    bool                 // the operation requires a body
	Encoding    map[string]*Encoding // form/multipart per-property encoding (contentType, style, explode)
	Nested      NestedStyle          // form/multipart: the convention for nested values of styled properties; "" means NestedBrackets

	Kind     BodyKind
	Header   string              // Content-Type to send (wildcards resolved); multipart adds its boundary at encode time
	Accepts  []string            // media types (ranges) of the chosen kind, for a file object's contentType
	Files    map[string]FilePlan // multipart properties carrying files (arrays: per item)
	XML      *XMLNode            // XML media type with an object or array schema: how encode writes such a value
	boundary string              // multipart boundary; "" means random (mime/multipart)
}

// NewBody chooses the media type from an operation's request body:
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
// spaceDelimited, pipeDelimited or deepObject, or with a
// [CollectionFormatExtension] that is not a list of formats. An unknown
// o.Nested is an error too; o.AllowSlashes is ignored.
func NewBody(rb *openapi3.RequestBody, o Options) (*Body, error) {
	if o.Nested != "" {
		if _, err := ParseNestedStyle(string(o.Nested)); err != nil {
			return nil, err
		}
	}
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
		rank := mediaRank(key)
		if rank < 0 {
			unsupported = append(unsupported, key)
			continue
		}
		if k := kindOfRank(rank); (k == KindForm || k == KindMultipart) && !objectLike(rb.Content[key]) {
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
	b := &Body{ContentType: c.key, Required: rb.Required, Kind: kindOfRank(c.rank)}
	mt := rb.Content[c.key]
	if mt != nil && len(mt.Encoding) > 0 {
		b.Encoding = make(map[string]*Encoding, len(mt.Encoding))
		for name, e := range mt.Encoding {
			if e != nil {
				enc, err := newEncoding(e)
				if err != nil {
					return nil, fmt.Errorf("%s property %q: %w", c.key, name, err)
				}
				b.Encoding[name] = enc
			}
		}
	}
	b.Header = strings.TrimSpace(c.key)
	if c.wild && b.Kind == KindBinary && mt != nil && mt.Schema != nil && mt.Schema.Value != nil &&
		(mt.Schema.Value.Type.Is(openapi3.TypeObject) || mt.Schema.Value.Type.Is(openapi3.TypeArray) || len(mt.Schema.Value.Properties) > 0) {
		// "*/*" (or "application/*") with a structured schema: the API takes
		// any type, and JSON is the one that expresses the schema.
		b.Kind = KindJSON
	}
	if c.wild {
		switch b.Kind {
		case KindJSON:
			b.Header = "application/json"
		case KindText:
			b.Header = "text/plain"
		default:
			b.Header = "application/octet-stream"
		}
	}
	for _, o := range cands {
		if kindOfRank(o.rank) == kindOfRank(c.rank) {
			b.Accepts = append(b.Accepts, o.key)
		}
	}
	if b.Kind == KindForm || b.Kind == KindMultipart {
		b.Nested = o.Nested
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
	if b.Kind == KindText && media.Classify(b.Header) == media.XML && mt != nil && mt.Schema != nil && mt.Schema.Value != nil &&
		(mt.Schema.Value.Type.Includes(openapi3.TypeObject) || mt.Schema.Value.Type.Includes(openapi3.TypeArray) ||
			len(mt.Schema.Value.Properties) > 0 || len(mt.Schema.Value.AllOf) > 0) {
		// The input schema is the spec's object (or array) schema: such a
		// value is written as an XML document, named by the `xml` objects.
		b.XML = newXMLNode(mt.Schema)
	}
	if b.Kind == KindForm || b.Kind == KindMultipart {
		var schema *openapi3.SchemaRef
		if mt != nil {
			schema = mt.Schema
		}
		props := propertySchemas(schema)
		for name, e := range b.Encoding {
			if media.Classify(firstConcrete(e.ContentType)) == media.XML {
				// An object or array under an XML contentType is an XML
				// document named as the property, shaped by its schema.
				e.XML = xmlShape(props[name], name, 0, nil)
			}
		}
		if b.Kind == KindMultipart {
			for name, p := range props {
				if cmt := textContentMediaType(p.Value); cmt != "" && b.Encoding[name] == nil {
					// OAS 3.1: the part's default contentType is the
					// string's contentMediaType.
					if b.Encoding == nil {
						b.Encoding = map[string]*Encoding{}
					}
					b.Encoding[name] = &Encoding{ContentType: cmt, Literal: true}
				}
			}
			b.Files = filePlans(props, b.Encoding)
		}
	}
	return b, nil
}

// objectLike reports whether a form or multipart media type's schema
// can name fields: an object, or a schema that does not say (no type, or
// no schema at all: a free-form object).
func objectLike(mt *openapi3.MediaType) bool {
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return true
	}
	t := mt.Schema.Value.Type
	return t == nil || len(*t) == 0 || t.Includes(openapi3.TypeObject)
}

// mediaRank orders media types by preference; -1 means unsupported.
func mediaRank(key string) int {
	if strings.ContainsAny(key, "\r\n") {
		return -1
	}
	mt := media.Type(key)
	typ, sub, ok := strings.Cut(mt, "/")
	switch {
	case !ok || typ == "" || sub == "":
		return -1
	case mt == "application/json":
		return 0
	case media.IsJSON(mt):
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
	case media.IsText(mt):
		return 6
	}
	return 7
}

func kindOfRank(rank int) BodyKind {
	return [...]BodyKind{KindJSON, KindJSON, KindForm, KindMultipart, KindText,
		KindBinary, KindText, KindBinary}[rank]
}

// filePlans finds the multipart properties that carry files: schema
// type string with format binary or contentMediaType (raw bytes), format
// byte or contentEncoding (base64 text), or an Encoding Object contentType
// that is not textual (raw bytes). For arrays the items decide.
//
// A media type wins over contentEncoding: an OAS 3.1 string with
// contentEncoding base64 and contentMediaType image/png (or an Encoding
// Object contentType image/png) is an image the agent sends as base64
// because JSON cannot carry bytes, so the part holds the decoded bytes,
// labelled image/png. (OAS 3.1.1 reads contentEncoding in a part as a
// Content-Transfer-Encoding, which RFC 7578 deprecates and servers do not
// undo.) Only a string with no media type, or a textual one, stays base64
// text.
func filePlans(schemas map[string]*openapi3.SchemaRef, enc map[string]*Encoding) map[string]FilePlan {
	props := map[string]*openapi3.Schema{}
	for name, p := range schemas {
		props[name] = p.Value
	}
	for name := range enc {
		if _, ok := props[name]; !ok {
			props[name] = nil
		}
	}
	plans := map[string]FilePlan{}
	for name, s := range props {
		if s != nil && s.Type.Is(openapi3.TypeArray) && s.Items != nil {
			s = s.Items.Value
		}
		var ect string
		if e := enc[name]; e != nil {
			ect = e.ContentType
		}
		if p := filePlanOf(s, ect); p.Kind != FileNone {
			plans[name] = p
		}
	}
	return plans
}

// propertySchemas are the properties of a form or multipart schema,
// its allOf members' included (the first to name a property wins).
func propertySchemas(schema *openapi3.SchemaRef) map[string]*openapi3.SchemaRef {
	props := map[string]*openapi3.SchemaRef{}
	var collect func(s *openapi3.SchemaRef, depth int)
	collect = func(s *openapi3.SchemaRef, depth int) {
		if s == nil || s.Value == nil || depth > 8 {
			return
		}
		for name, p := range s.Value.Properties {
			if p != nil && p.Value != nil && props[name] == nil {
				props[name] = p
			}
		}
		for _, sub := range s.Value.AllOf {
			collect(sub, depth+1)
		}
	}
	collect(schema, 0)
	return props
}

// textContentMediaType is the contentMediaType of an OAS 3.1 string that
// holds text itself (text/csv, application/json; no contentEncoding, not
// format binary), "" for any other schema: such a string is written as
// it is, not taken as a file's base64.
func textContentMediaType(s *openapi3.Schema) string {
	if s != nil && s.Type.Is(openapi3.TypeArray) && s.Items != nil {
		s = s.Items.Value
	}
	if s == nil || s.ContentMediaType == "" || s.ContentEncoding != "" || s.Format == "binary" || !media.IsText(s.ContentMediaType) {
		return ""
	}
	return s.ContentMediaType
}

func filePlanOf(s *openapi3.Schema, escContentType string) FilePlan {
	p := filePlanOfType(s, escContentType)
	if p.Kind == FileRaw && strings.TrimSpace(escContentType) != "" && media.Type(escContentType) != media.Type(p.ContentType) {
		p.Accepts = escContentType
	}
	return p
}

func filePlanOfType(s *openapi3.Schema, escContentType string) FilePlan {
	concrete := firstConcrete(escContentType)
	switch {
	case textContentMediaType(s) != "" && (escContentType == "" || media.IsText(media.Type(concrete))):
		return FilePlan{}
	case s != nil && (s.Format == "binary" || s.ContentMediaType != ""):
		if concrete == "" {
			concrete = s.ContentMediaType
		}
		return FilePlan{Kind: FileRaw, ContentType: concrete}
	case s != nil && s.ContentEncoding != "" && concrete != "" && !media.IsText(concrete):
		return FilePlan{Kind: FileRaw, ContentType: concrete}
	case s != nil && (s.Format == "byte" || s.ContentEncoding != ""):
		return FilePlan{Kind: FileBase64}
	case escContentType != "":
		for r := range strings.SplitSeq(escContentType, ",") {
			if media.IsText(media.Type(r)) {
				return FilePlan{}
			}
		}
		return FilePlan{Kind: FileRaw, ContentType: concrete}
	}
	return FilePlan{}
}

// firstConcrete returns the first media type of a comma-separated list
// that is not a wildcard, or "".
func firstConcrete(list string) string {
	for r := range strings.SplitSeq(list, ",") {
		if r = strings.TrimSpace(r); r != "" && !strings.Contains(r, "*") {
			return r
		}
	}
	return ""
}

// binary reports whether the body argument is a base64 string (or file
// object) sent as raw bytes: the input schema should say so.
func (b *Body) binary() bool { return b.Kind == KindBinary }

// fileProps lists the multipart properties that take raw file data (a
// base64 string or the fileSchema object; for an array property, each
// item), sorted: the input schema should offer the file object for them.
func (b *Body) fileProps() []string {
	var names []string
	for name, p := range b.Files {
		if p.Kind == FileRaw {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// encode serializes the `body` argument value and returns the bytes and the
// exact Content-Type header (multipart includes its boundary). A null value
// means no body (nil, "", nil) unless the body is required, but for JSON.
//
//   - JSON: compact, HTML characters unescaped; null (a body the schema
//     lets be null) is the JSON text null.
//   - Form: one entry per object property in sorted order. With an Encoding
//     Object that sets style, explode or allowReserved (a styled
//     property), the property is serialized like a query parameter with
//     that style, nested values by b.Nested. Otherwise (content-based, as
//     OAS 3.1 defines the defaults) primitives are written as-is, arrays
//     as repeated keys, properties whose encoding contentType is JSON as
//     JSON text, and objects and nested values as JSON text, or as an XML
//     document when the contentType is XML (see [Encoding.XML]).
//   - Multipart: one part per property (arrays: one part per item, unless
//     the encoding's explode is false, as it is by default for
//     spaceDelimited and pipeDelimited: one part joined by the style's
//     delimiter, or a Swagger 2.0 collection's, [Encoding.Delims]). File
//     properties (see filePlans) take a base64 string
//     (a data: URL works too) or a fileSchema object; other properties
//     are text parts labelled with the encoding's contentType. An object
//     or array there is an XML document when that type is XML, JSON text
//     when it is JSON or YAML (JSON is YAML), and otherwise a JSON part
//     labelled application/json, which is what it holds. A deepObject
//     property, and a styled property whose value nests, give instead one
//     text part per pair the same property gives in a form body, decoded,
//     as OAS 3.1.1 says (a deepObject meta={"k":"v"} is a part "meta[k]"
//     holding "v", as Stripe reads it; OAS 3.0 and kin-openapi ignore
//     style in multipart, and other non-nesting values keep their parts).
//   - Text: the string as-is (numbers and booleans formatted); for an XML
//     media type whose schema is an object or array, such a value is an
//     XML document shaped by the schema's `xml` objects (see XMLNode).
//   - Binary: the base64 string decoded (or a file object, whose
//     contentType may pick among the body's media types).
func (b *Body) encode(v any) ([]byte, string, error) { return b.encodeLimit(v, 0) }

// encodeLimit is encode with the body capped at limit bytes (0: no cap):
// form, multipart and XML bodies stop being written where they pass it
// (see TooLargeError), and any other body is refused past it.
func (b *Body) encodeLimit(v any, limit int) ([]byte, string, error) {
	return b.encodeChecked(v, limit, nil)
}

// encodeChecked is encodeLimit that first calls field (nil: none) with
// the name of every form field or multipart part the body writes, as a
// server reads it (a form field's unescaped), and fails with its error.
func (b *Body) encodeChecked(v any, limit int, field func(string) error) ([]byte, string, error) {
	data, ct, err := b.encodeCapped(v, limit, field)
	if err == nil && overLimit(len(data), limit) {
		err = &TooLargeError{What: "body", Limit: limit}
	}
	var tl *TooLargeError
	if errors.As(err, &tl) {
		tl.What = "body"
	}
	return data, ct, err
}

func (b *Body) encodeCapped(v any, limit int, field func(string) error) ([]byte, string, error) {
	if v == nil {
		if b.Kind == KindJSON {
			// Arguments are validated before they are encoded: a null
			// body is one the schema allows (nullable, type [..., "null"])
			// and is the JSON text null. An absent body is never encoded.
			return []byte("null"), b.Header, nil
		}
		if b.Required {
			return nil, "", errors.New("body is required")
		}
		return nil, "", nil
	}
	switch b.Kind {
	case KindJSON:
		data, err := compactJSON(v)
		if err != nil {
			return nil, "", fmt.Errorf("body: %w", err)
		}
		return data, b.Header, nil
	case KindForm:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("body must be an object for %s", b.ContentType)
		}
		data, err := b.encodeForm(obj, limit)
		if err == nil && field != nil {
			for pair := range strings.SplitSeq(string(data), "&") {
				k, _, _ := strings.Cut(pair, "=")
				if err := field(unescapeName(k)); err != nil {
					return nil, "", err
				}
			}
		}
		return data, b.Header, err
	case KindMultipart:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("body must be an object for %s", b.ContentType)
		}
		return b.encodeMultipart(obj, limit, field)
	case KindText:
		switch v.(type) {
		case []any, map[string]any:
			if b.XML != nil {
				data, err := encodeXMLLimit(b.XML, v, limit)
				if err != nil {
					return nil, "", fmt.Errorf("body: %w", err)
				}
				return data, b.Header, nil
			}
			// A text type whose schema is an object or an array (a YAML
			// document, a spec's "type: object" on text/plain): the value
			// goes as JSON text, which is YAML too.
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				return nil, "", fmt.Errorf("body: %w", err)
			}
			return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), b.Header, nil
		}
		str, err := scalarString(v)
		if err != nil {
			return nil, "", fmt.Errorf("body: %w", err)
		}
		return []byte(str), b.Header, nil
	}
	f, err := parseFile(v, FileRaw)
	if err != nil {
		return nil, "", fmt.Errorf("body: %w", err)
	}
	ct := b.Header
	if f.contentType != "" {
		switch {
		case matchesAny(b.Accepts, f.contentType):
			ct = f.contentType
		case f.explicitType:
			return nil, "", fmt.Errorf("body: contentType %q is not accepted (accepted: %s)", f.contentType, strings.Join(b.Accepts, ", "))
		}
	} else if ct == "application/octet-stream" && !slices.ContainsFunc(b.Accepts, func(r string) bool { return media.Type(r) == ct }) {
		// The spec names a range (image/*, */*), which is no Content-Type,
		// and application/octet-stream is outside image/*: the bytes name
		// their type when it is one of the range's.
		if sniffed := sniffType(f.data); sniffed != "" && matchesAny(b.Accepts, sniffed) {
			ct = sniffed
		}
	}
	return f.data, ct, nil
}

// sniffType is the media type the data's leading bytes identify (by the
// WHATWG sniffing rules), or "" when they identify none more precise than
// application/octet-stream or text/plain.
func sniffType(data []byte) string {
	t := media.Type(http.DetectContentType(data))
	if t == "application/octet-stream" || t == "text/plain" {
		return ""
	}
	return t
}

func (b *Body) encodeForm(obj map[string]any, limit int) ([]byte, error) {
	var buf []byte
	for _, name := range sortedKeys(obj) {
		v := obj[name]
		e := b.Encoding[name]
		var err error
		if e.styled() {
			start := len(buf)
			buf, err = b.styledSpec(name, e, e.AllowReserved).appendQueryLimit(buf, v, limit)
			if m, ok := v.(map[string]any); ok && err == nil && len(m) > 0 {
				err = formClash(buf[start:], name, obj)
			}
		} else {
			buf, err = appendFormContent(buf, name, v, e, limit)
		}
		if err != nil {
			return nil, fmt.Errorf("body property %q: %w", name, err)
		}
	}
	return buf, nil
}

// formClash reports a pair of q, written by the exploded object of
// property name, named (as lenient servers read names, see credKey) like
// another property of obj: the two would be repeated pairs, one read in
// place of the other.
func formClash(q []byte, name string, obj map[string]any) error {
	own := newCredKey(name)
	for pair := range strings.SplitSeq(string(q), "&") {
		k, _, _ := strings.Cut(pair, "=")
		if k == "" {
			continue
		}
		k = unescapeName(k)
		key := newCredKey(k)
		if key.same(own) {
			continue
		}
		for other, ov := range obj {
			if other != name && ov != nil && key.same(newCredKey(other)) {
				return fmt.Errorf("the object would send the form field %q, which is the body's property %q: give that property instead", k, other)
			}
		}
	}
	return nil
}

// appendFormContent writes a content-based form property, failing once
// buf passes limit (0: none).
func appendFormContent(buf []byte, name string, v any, e *Encoding, limit int) ([]byte, error) {
	asJSON := e != nil && media.IsJSON(e.ContentType)
	items := []any{v}
	arr, split := v.([]any)
	if split && !asJSON {
		items = arr
	} else {
		split = false
	}
	for _, item := range items {
		data, _, err := e.valueText(name, item, split, false, limit)
		if err != nil {
			return nil, err
		}
		buf = appendPair(buf, name, string(data), escStrict)
		if overLimit(len(buf), limit) {
			return nil, &TooLargeError{What: "body", Limit: limit}
		}
	}
	return buf, nil
}

// valueText is the form value or text part (part) of property name (an
// item of its array when item is true), and the media type that describes
// it (first of e's contentType, "" for none): JSON text when that type is
// JSON; for an array or object, an XML document when it is XML (a part
// with the XML declaration, a form value without, as a parameter's),
// JSON text labelled as declared when it is YAML (JSON is YAML) and
// otherwise JSON text labelled application/json rather than a type it is
// not; else the primitive as text.
func (e *Encoding) valueText(name string, v any, item, part bool, limit int) (data []byte, ct string, err error) {
	if e != nil {
		ct = firstConcrete(e.ContentType)
	}
	switch {
	case e != nil && e.Literal && !compound(v):
		str, err := scalarString(v)
		return []byte(str), ct, err
	case media.IsJSON(ct):
	case compound(v) && e != nil && e.XML != nil:
		n := e.XML
		if item {
			child := XMLNode{}
			if n.Items != nil {
				child = *n.Items
			}
			child.Name = xmlName(n.Items, xmlName(n, name))
			n = &child
		}
		data, err = encodeXMLDoc(n, v, limit, part)
		return data, ct, err
	case compound(v):
		if !isYAML(ct) {
			ct = "application/json"
		}
	default:
		str, err := scalarString(v)
		return []byte(str), ct, err
	}
	data, err = compactJSON(v)
	return data, ct, err
}

// isYAML reports whether ct is a YAML media type.
func isYAML(ct string) bool {
	switch mt := media.Type(ct); mt {
	case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
		return true
	default:
		return strings.HasSuffix(mt, "+yaml")
	}
}

func (b *Body) encodeMultipart(obj map[string]any, limit int, field func(string) error) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&capWriter{buf: &buf, limit: limit, what: "body"})
	if b.boundary != "" {
		if err := w.SetBoundary(b.boundary); err != nil {
			return nil, "", fmt.Errorf("setting multipart boundary: %w", err)
		}
	}
	for _, name := range sortedKeys(obj) {
		if err := b.writeProperty(w, name, obj[name], limit, field); err != nil {
			return nil, "", fmt.Errorf("body property %q: %w", name, err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", fmt.Errorf("closing multipart body: %w", err)
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// styledSpec is how a styled form or multipart property is serialized:
// as a query parameter of its encoding's style.
func (b *Body) styledSpec(name string, e *Encoding, allowReserved bool) ParamSpec {
	sm := e.SerializationMethod()
	return ParamSpec{Name: name, In: InQuery, Style: sm.Style, AllowReserved: allowReserved,
		Explode: sm.Explode || sm.Style == openapi3.SerializationDeepObject, Nested: b.Nested, Delims: e.Delims}
}

func (b *Body) writeProperty(w *multipart.Writer, name string, v any, limit int, field func(string) error) error {
	if hasControl(name) {
		return errors.New("property names must not contain control characters")
	}
	e := b.Encoding[name]
	plan := b.Files[name]
	if plan.Kind == FileNone && e.styled() && (e.SerializationMethod().Style == openapi3.SerializationDeepObject || nests(v)) {
		return b.writeStyledParts(w, name, v, e, limit, field)
	}
	if field != nil {
		if err := field(name); err != nil {
			return err
		}
	}
	items := []any{v}
	arr, split := v.([]any)
	if split {
		items = arr
		if e.styled() && !e.SerializationMethod().Explode && plan.Kind == FileNone {
			split = false
			delim := e.delim()
			var sb strings.Builder
			for i, item := range arr {
				str, err := itemString(item, e.SerializationMethod().Style)
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
		if plan.Kind == FileNone {
			err = writeTextPart(w, name, item, e, split, limit)
		} else {
			err = writeFilePart(w, name, item, plan)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeStyledParts writes a styled property as the pairs of its form
// encoding, one text part each, decoded. The pairs are built without
// allowReserved, so every byte but the delimiters is escaped and decoding
// gives back exactly the keys and values.
func (b *Body) writeStyledParts(w *multipart.Writer, name string, v any, e *Encoding, limit int, field func(string) error) error {
	q, err := b.styledSpec(name, e, false).appendQueryLimit(nil, v, limit)
	if err != nil {
		return err
	}
	for pair := range strings.SplitSeq(string(q), "&") {
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, err1 := url.PathUnescape(rawKey)
		value, err2 := url.PathUnescape(rawValue)
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("decoding field %q: %w", rawKey, err)
		}
		if hasControl(key) {
			return fmt.Errorf("field name %q must not contain control characters", key)
		}
		if field != nil {
			if err := field(key); err != nil {
				return err
			}
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="`+quoteParam(key)+`"`)
		pw, err := w.CreatePart(h)
		if err != nil {
			return err
		}
		if _, err := pw.Write([]byte(value)); err != nil {
			return err
		}
	}
	return nil
}

// writeTextPart writes property name's value (an item of its array when
// item is true) as a part (see [Encoding.valueText]).
func writeTextPart(w *multipart.Writer, name string, v any, e *Encoding, item bool, limit int) error {
	data, ct, err := e.valueText(name, v, item, true, limit)
	if err != nil {
		return err
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="`+quoteParam(name)+`"`)
	if ct != "" && !strings.EqualFold(strings.TrimSpace(ct), "text/plain") {
		// A bare text/plain is the part default (RFC 7578); parameters
		// such as a charset are the spec's word and go with the part.
		h.Set("Content-Type", ct)
	}
	pw, err := w.CreatePart(h)
	if err != nil {
		return err
	}
	_, err = pw.Write(data)
	return err
}

// Tri is an OpenAPI boolean that may be left out: explode, in an Encoding
// Object, has a default that depends on the style. (A *bool would do, but
// the tool cache encodes plans with encoding/gob, which drops false pointers.)
type Tri int8

// The three states of a [Tri].
const (
	ExplodeUnset Tri = iota
	ExplodeFalse
	ExplodeTrue
)

// Encoding is the part of an OpenAPI Encoding Object a form or multipart
// body needs, per property.
type Encoding struct {
	ContentType   string
	Style         string
	Explode       Tri
	AllowReserved bool
	// XML, for an XML ContentType, is the shape of an object or array
	// value, written as an XML document (named by the property's xml.name,
	// else the property); nil for other types.
	XML    *XMLNode
	Delims string // a Swagger 2.0 collection's delimiters: see [ParamSpec.Delims]
	// Literal: ContentType is an OAS 3.1 string's contentMediaType, and a
	// string value is the part's text as it is (JSON text is not quoted).
	Literal bool
}

// styled reports whether the Encoding Object sets style, explode or
// allowReserved: OpenAPI then serializes the property by its style and
// ignores contentType.
func (e *Encoding) styled() bool {
	return e != nil && (e.Style != "" || e.Explode != ExplodeUnset || e.AllowReserved)
}

func newEncoding(e *openapi3.Encoding) (*Encoding, error) {
	out := &Encoding{ContentType: e.ContentType, Style: e.Style, AllowReserved: e.AllowReserved}
	if e.Explode != nil {
		out.Explode = ExplodeFalse
		if *e.Explode {
			out.Explode = ExplodeTrue
		}
	}
	var err error
	if out.Delims, err = collectionDelims(e.Extensions); err != nil {
		return nil, err
	}
	return out, nil
}

// delim joins the items of a non-exploded array in one multipart part:
// the collection's delimiter, or the style's.
func (e *Encoding) delim() string {
	switch {
	case e.Delims != "":
		return e.Delims[:1]
	case e.Style == openapi3.SerializationSpaceDelimited:
		return " "
	case e.Style == openapi3.SerializationPipeDelimited:
		return "|"
	}
	return ","
}

// SerializationMethod applies the OpenAPI defaults, as kin-openapi's
// Encoding.SerializationMethod does: style form, explode true; explode
// false by default for spaceDelimited and pipeDelimited.
func (e *Encoding) SerializationMethod() openapi3.SerializationMethod {
	sm := openapi3.SerializationMethod{Style: openapi3.SerializationForm, Explode: true}
	if e == nil {
		return sm
	}
	if e.Style != "" {
		sm.Style = e.Style
		sm.Explode = sm.Style != openapi3.SerializationSpaceDelimited && sm.Style != openapi3.SerializationPipeDelimited
	}
	if e.Explode != ExplodeUnset {
		sm.Explode = e.Explode == ExplodeTrue
	}
	return sm
}
