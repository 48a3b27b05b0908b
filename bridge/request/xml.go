package request

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/mcpbridge/mcpbridge/bridge/media"
)

// XMLNode is the XML shape of a body schema, computed once by NewBody for
// an XML media type (application/xml, text/xml, +xml) whose schema is an
// object or an array (and for a form or multipart property, or a `content`
// parameter, of such a type): element names from the OpenAPI `xml` object
// (name, attribute, wrapped, namespace, prefix), merged through allOf,
// oneOf and anyOf, as plain data (it is part of the snapshot).
type XMLNode struct {
	Name      string // element (or attribute) name
	Namespace string
	Prefix    string
	Attribute bool                // a scalar property written as an attribute of its parent
	Wrapped   bool                // an array inside an element named Name (items named by Items.Name)
	Props     map[string]*XMLNode // object properties by JSON name
	Items     *XMLNode            // array items
	Unwrap    bool                // the body's one property is the document element
	// Order lists property names in the order the schema declares them,
	// where the loader recorded it (see propertyOrder): their elements
	// come first, in this order, the value's other keys after, sorted.
	Order []string
}

// xmlMaxDepth bounds the shape of recursive schemas; deeper values are
// written with their JSON property names.
const xmlMaxDepth = 12

// newXMLNode computes the shape of a body schema. The document element is
// named by the schema's xml.name, else by its component name, else, for
// an inline object with one object property and no name (as the AWS
// converters write rest-xml payloads: {Tagging: {...}}), by that property,
// which then is the document; else "body".
func newXMLNode(ref *openapi3.SchemaRef) *XMLNode {
	n := xmlShape(ref, "", 0, nil)
	if n.Name != "" {
		return n
	}
	if i := strings.LastIndex(ref.Ref, "/"); i >= 0 && i+1 < len(ref.Ref) {
		n.Name = ref.Ref[i+1:]
		return n
	}
	if len(n.Props) == 1 && n.Items == nil {
		for _, p := range n.Props {
			if len(p.Props) > 0 || p.Items == nil {
				p.Unwrap = true
			}
		}
	}
	n.Name = "body"
	return n
}

// contentXML is the shape of a `content` parameter's value under media
// type ct: nil unless ct is XML; named by the schema's xml.name, else the
// parameter's name.
func contentXML(ct string, mt *openapi3.MediaType, name string) *XMLNode {
	if media.Classify(ct) != media.XML {
		return nil
	}
	var schema *openapi3.SchemaRef
	if mt != nil {
		schema = mt.Schema
	}
	return xmlShape(schema, name, 0, nil)
}

// xmlShape walks one schema: the first xml object met (on the schema or
// an allOf/oneOf/anyOf member) names it, properties and items merge.
func xmlShape(ref *openapi3.SchemaRef, name string, depth int, path []*openapi3.Schema) *XMLNode {
	n := &XMLNode{}
	var walk func(r *openapi3.SchemaRef, d int)
	walk = func(r *openapi3.SchemaRef, d int) {
		if r == nil || r.Value == nil || d > 6 || slices.Contains(path, r.Value) {
			return
		}
		s := r.Value
		if x := s.XML; x != nil {
			if n.Name == "" && x.Name != "" {
				n.Name = x.Name
			}
			if n.Namespace == "" {
				n.Namespace, n.Prefix = x.Namespace, x.Prefix
			}
			n.Attribute = n.Attribute || x.Attribute
			n.Wrapped = n.Wrapped || x.Wrapped
		}
		inner := append(path, s)
		if depth < xmlMaxDepth {
			for _, pname := range propertyOrder(s) {
				if !slices.Contains(n.Order, pname) {
					n.Order = append(n.Order, pname)
				}
			}
			for pname, p := range s.Properties {
				if n.Props == nil {
					n.Props = map[string]*XMLNode{}
				}
				if n.Props[pname] == nil {
					n.Props[pname] = xmlShape(p, pname, depth+1, inner)
				}
			}
			if s.Items != nil && n.Items == nil {
				n.Items = xmlShape(s.Items, "", depth+1, inner)
			}
		}
		for _, group := range [][]*openapi3.SchemaRef{s.AllOf, s.OneOf, s.AnyOf} {
			for _, sub := range group {
				walk(sub, d+1)
			}
		}
	}
	walk(ref, 0)
	if n.Name == "" {
		n.Name = name
	}
	return n
}

// propertyOrder returns the names of s's properties in the order the
// document declares them, or nil when that is not known. kin-openapi keeps
// properties in a map; the order is read from the position of each
// property's key, which a loader records in the SchemaRef's Origin
// (kin-openapi's Loader.IncludeOrigin). Without a position for every
// property, the order is unknown.
func propertyOrder(s *openapi3.Schema) []string {
	type keyAt struct {
		name         string
		line, column int
	}
	keys := make([]keyAt, 0, len(s.Properties))
	for name, p := range s.Properties {
		if p == nil || p.Origin == nil || p.Origin.Key == nil || p.Origin.Key.Line == 0 {
			return nil
		}
		keys = append(keys, keyAt{name, p.Origin.Key.Line, p.Origin.Key.Column})
	}
	slices.SortFunc(keys, func(a, b keyAt) int {
		if a.line != b.line {
			return a.line - b.line
		}
		if a.column != b.column {
			return a.column - b.column
		}
		return strings.Compare(a.name, b.name)
	})
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	return names
}

// xmlKeys returns the keys of an object value whose values are not null:
// first those n orders (the schema's declared order), then the rest
// sorted.
func xmlKeys(n *XMLNode, val map[string]any) []string {
	keys := sortedKeys(val)
	if n == nil || len(n.Order) == 0 {
		return keys
	}
	out := make([]string, 0, len(keys))
	ordered := make(map[string]bool, len(n.Order))
	for _, k := range n.Order {
		ordered[k] = true
		if val[k] != nil {
			out = append(out, k)
		}
	}
	for _, k := range keys {
		if !ordered[k] {
			out = append(out, k)
		}
	}
	return out
}

// encodeXML writes an object or array body as an XML document shaped by n.
func encodeXML(n *XMLNode, v any) ([]byte, error) { return encodeXMLLimit(n, v, 0) }

// encodeXMLLimit is encodeXML with the document capped at limit bytes (0:
// none); it stops being written where it passes it (see TooLargeError).
func encodeXMLLimit(n *XMLNode, v any, limit int) ([]byte, error) {
	return encodeXMLDoc(n, v, limit, true)
}

// encodeXMLElement is encodeXML without the XML declaration (optional in
// XML 1.0), for a parameter value: one line, no header.
func encodeXMLElement(n *XMLNode, v any) ([]byte, error) { return encodeXMLDoc(n, v, 0, false) }

func encodeXMLDoc(n *XMLNode, v any, limit int, decl bool) ([]byte, error) {
	var buf bytes.Buffer
	if decl {
		buf.WriteString(xml.Header)
	}
	enc := xml.NewEncoder(&capWriter{buf: &buf, limit: limit, what: "body"})
	var err error
	if obj, ok := v.(map[string]any); ok && len(n.Props) == 1 && len(obj) <= 1 {
		for pname, p := range n.Props {
			if p.Unwrap {
				// The one property is the document element.
				child := *p
				if child.Namespace == "" {
					child.Namespace, child.Prefix = n.Namespace, n.Prefix
				}
				pv, ok := obj[pname]
				if !ok {
					pv = map[string]any{}
				}
				err = writeXMLElement(enc, &child, pname, pv, true)
				return xmlFlush(enc, &buf, err)
			}
		}
	}
	err = writeXMLElement(enc, n, n.Name, v, true)
	return xmlFlush(enc, &buf, err)
}

func xmlFlush(enc *xml.Encoder, buf *bytes.Buffer, err error) ([]byte, error) {
	if err == nil {
		err = enc.Flush()
	}
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// xmlName is a property's element name: its xml.name, else the JSON name.
func xmlName(n *XMLNode, fallback string) string {
	if n != nil && n.Name != "" {
		return n.Name
	}
	return fallback
}

func xmlStart(n *XMLNode, name string, root bool) xml.StartElement {
	start := xml.StartElement{Name: xml.Name{Local: name}}
	if n != nil && n.Prefix != "" {
		start.Name.Local = n.Prefix + ":" + name
	}
	if n != nil && n.Namespace != "" && (root || n.Prefix != "") {
		attr := "xmlns"
		if n.Prefix != "" {
			attr += ":" + n.Prefix
		}
		start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: attr}, Value: n.Namespace})
	}
	return start
}

// writeXMLElement writes v as the element name (arrays: see writeXMLArray).
func writeXMLElement(enc *xml.Encoder, n *XMLNode, name string, v any, root bool) error {
	if !validXMLName(name) {
		return fmt.Errorf("%q is not an XML element name", name)
	}
	switch val := v.(type) {
	case nil:
		return nil
	case []any:
		if root {
			// An array document: a wrapper element around the items.
			wrapped := XMLNode{Name: name, Namespace: n.Namespace, Prefix: n.Prefix, Wrapped: true, Items: n.Items}
			return writeXMLArray(enc, &wrapped, name, val, true)
		}
		return writeXMLArray(enc, n, name, val, false)
	case map[string]any:
		start := xmlStart(n, name, root)
		keys := xmlKeys(n, val)
		var children []string
		for _, k := range keys {
			p := xmlProp(n, k)
			if p != nil && p.Attribute && !compound(val[k]) {
				// An attribute holds a primitive; an object or array
				// marked as one (S3's Grantee) stays an element.
				if val[k] == nil {
					continue
				}
				str, err := scalarString(val[k])
				if err != nil {
					return fmt.Errorf("attribute %s: %w", k, err)
				}
				start.Attr = append(start.Attr, xml.Attr{Name: xml.Name{Local: xmlName(p, k)}, Value: str})
				continue
			}
			children = append(children, k)
		}
		if err := enc.EncodeToken(start); err != nil {
			return err
		}
		for _, k := range children {
			p := xmlProp(n, k)
			if err := writeXMLElement(enc, p, xmlName(p, k), val[k], false); err != nil {
				return err
			}
		}
		return enc.EncodeToken(start.End())
	}
	str, err := scalarString(v)
	if err != nil {
		return err
	}
	start := xmlStart(n, name, root)
	if err := enc.EncodeToken(start); err != nil {
		return err
	}
	if err := enc.EncodeToken(xml.CharData(str)); err != nil {
		return err
	}
	return enc.EncodeToken(start.End())
}

// writeXMLArray writes an array property: by default each item is an
// element named by the items' xml.name, else by the property; wrapped, the
// items sit inside an element named by the property.
func writeXMLArray(enc *xml.Encoder, n *XMLNode, name string, items []any, root bool) error {
	var itemNode *XMLNode
	if n != nil {
		itemNode = n.Items
	}
	itemName := xmlName(itemNode, name)
	if n != nil && n.Wrapped {
		start := xmlStart(n, name, root)
		if err := enc.EncodeToken(start); err != nil {
			return err
		}
		for _, item := range items {
			if err := writeXMLElement(enc, itemNode, itemName, item, false); err != nil {
				return err
			}
		}
		return enc.EncodeToken(start.End())
	}
	for _, item := range items {
		if err := writeXMLElement(enc, itemNode, itemName, item, false); err != nil {
			return err
		}
	}
	return nil
}

func xmlProp(n *XMLNode, name string) *XMLNode {
	if n == nil {
		return nil
	}
	return n.Props[name]
}

// validXMLName reports whether s can name an element: a letter or '_'
// first, then letters, digits, '-', '.', '_' (':' only through a prefix).
func validXMLName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f && r != 0xfffe && r != 0xffff:
		case i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '.' || r == ':'):
		default:
			return false
		}
	}
	return true
}

// compound reports whether v is an array or an object.
func compound(v any) bool {
	switch v.(type) {
	case []any, map[string]any:
		return true
	}
	return false
}
