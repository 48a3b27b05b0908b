package bridge_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/mcpbridge/mcpbridge/bridge/media"
	"github.com/mcpbridge/mcpbridge/bridge/request"
)

// The second judge. kin-openapi's ValidateRequest cannot decode everything
// the bridge sends: nested values in a query or form body (Stripe's
// deepObject arrays expand[0]=a, items[0][price]=p), form-style objects of
// free-form keys, array items typed only through allOf, exploded cookie
// arrays and objects, deepObject parts in multipart, XML bodies (it has no
// XML decoder) and media types it has no decoder for. For each query or
// cookie parameter and for the body that kin's validation reports, the
// judge decodes what the upstream received with the convention's own
// parser, written here from the conventions' definitions (qs-style
// brackets, brackets-empty, AWS-style dots, JSON text; RFC 6265 cookies;
// XML elements named by the spec's `xml` objects), and validates the
// decoded value against the spec's own schema with kin-openapi's schema
// validator (Schema.VisitJSON, the check openapi3filter applies after its
// own decoding: it reads OpenAPI 3.0 schemas as written, nullable and
// boolean exclusiveMinimum included, with no conversion by the bridge).
// A part kin rejects for another reason is rejected by the judge too,
// since the decoded value does not satisfy the schema; header parameters
// and security are never re-judged.

// judgeRequest re-judges the parts of a request that kin's validation
// (kinErr) reported. It returns the parts the judge validated, and the
// error left: nil when every reported part is a query or cookie parameter
// or the body and the judge validates each.
func judgeRequest(route *routers.Route, req *http.Request, body []byte, kinErr error, nested request.NestedStyle) (judged []string, left error) {
	var errs []error
	var me openapi3.MultiError
	if errors.As(kinErr, &me) {
		for _, e := range me {
			errs = append(errs, e)
		}
	} else {
		errs = []error{kinErr}
	}
	var params []*openapi3.Parameter
	for _, list := range []openapi3.Parameters{route.PathItem.Parameters, route.Operation.Parameters} {
		for _, p := range list {
			if p != nil && p.Value != nil {
				params = slices.DeleteFunc(params, func(q *openapi3.Parameter) bool { return q.Name == p.Value.Name && q.In == p.Value.In })
				params = append(params, p.Value)
			}
		}
	}
	j := &secondJudge{req: req, body: body, nested: nested, params: params, v31: route.Spec != nil && strings.HasPrefix(route.Spec.OpenAPI, "3.1")}
	var rest []error
	done := map[string]bool{}
	for _, e := range errs {
		var re *openapi3filter.RequestError
		if !errors.As(e, &re) {
			rest = append(rest, e)
			continue
		}
		var part string
		var err error
		switch {
		case re.Parameter != nil && (re.Parameter.In == openapi3.ParameterInQuery || re.Parameter.In == openapi3.ParameterInCookie):
			part = re.Parameter.In + " " + re.Parameter.Name
			if !done[part] {
				err = j.param(re.Parameter)
			}
		case re.RequestBody != nil:
			part = "body"
			if !done[part] {
				err = j.requestBody(re.RequestBody)
			}
		default:
			rest = append(rest, e)
			continue
		}
		if err != nil {
			rest = append(rest, fmt.Errorf("%w; second judge, %s: %v", e, part, err))
			continue
		}
		if !done[part] {
			judged = append(judged, part)
		}
		done[part] = true
	}
	if len(rest) > 0 {
		return judged, errors.Join(rest...)
	}
	return judged, nil
}

type secondJudge struct {
	req    *http.Request
	body   []byte
	nested request.NestedStyle
	params []*openapi3.Parameter
	v31    bool
}

// validate checks a decoded value against a spec schema.
func (j *secondJudge) validate(s *openapi3.SchemaRef, v any) error {
	if s == nil || s.Value == nil {
		return nil
	}
	opts := []openapi3.SchemaValidationOption{openapi3.MultiErrors(), openapi3.VisitAsRequest()}
	if j.v31 {
		opts = append(opts, openapi3.EnableJSONSchema2020())
	}
	return s.Value.VisitJSON(v, opts...)
}

// judgePair is one name=value pair, the name still as sent (escaped) so
// that a dot escaped inside a key stays apart from the dots that join keys.
type judgePair struct{ rawKey, key, value string }

func queryPairs(raw string) []judgePair {
	var pairs []judgePair
	for item := range strings.SplitSeq(raw, "&") {
		if item == "" {
			continue
		}
		k, v, _ := strings.Cut(item, "=")
		key, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			key, val = k, v
		}
		pairs = append(pairs, judgePair{rawKey: k, key: key, value: val})
	}
	return pairs
}

// cookiePairs reads the Cookie header: "a=1; b=2" (RFC 6265), values
// percent-decoded as the bridge escapes them.
func cookiePairs(h http.Header) []judgePair {
	var pairs []judgePair
	for _, line := range h.Values("Cookie") {
		for item := range strings.SplitSeq(line, ";") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			k, v, _ := strings.Cut(item, "=")
			val, err := url.PathUnescape(v)
			if err != nil {
				val = v
			}
			pairs = append(pairs, judgePair{rawKey: k, key: k, value: val})
		}
	}
	return pairs
}

// judgeNode is a decoded tree of strings: the values at a key, and the
// keys below it in the order they came.
type judgeNode struct {
	vals  []string
	kids  map[string]*judgeNode
	order []string
	appd  []*judgeNode // "[]" segments: one new item each
}

func (n *judgeNode) kid(k string) *judgeNode {
	if n.kids == nil {
		n.kids = map[string]*judgeNode{}
	}
	c := n.kids[k]
	if c == nil {
		c = &judgeNode{}
		n.kids[k] = c
		n.order = append(n.order, k)
	}
	return c
}

// segments splits a key into its top name and the keys below it, by the
// nested convention: brackets a[b][0][] (an empty segment appends), dots
// a.b.1 (segments unescaped after the split).
func (j *secondJudge) segments(p judgePair) (top string, rest []string) {
	if j.nested == request.NestedDots {
		parts := strings.Split(p.rawKey, ".")
		for i, s := range parts {
			if u, err := url.QueryUnescape(s); err == nil {
				parts[i] = u
			}
		}
		// deepObject keeps its own first level: filter[a].1
		top = parts[0]
		if i := strings.IndexByte(top, '['); i > 0 && strings.HasSuffix(top, "]") {
			rest = append(rest, top[i+1:len(top)-1])
			top = top[:i]
		}
		return top, append(rest, parts[1:]...)
	}
	key := p.key
	i := strings.IndexByte(key, '[')
	if i <= 0 || !strings.HasSuffix(key, "]") {
		return key, nil
	}
	top, key = key[:i], key[i:]
	for len(key) > 0 && key[0] == '[' {
		end := strings.IndexByte(key, ']')
		if end < 0 {
			return p.key, nil
		}
		rest = append(rest, key[1:end])
		key = key[end+1:]
	}
	if key != "" {
		return p.key, nil
	}
	return top, rest
}

// tree builds the node of the pairs whose top name is accepted.
func (j *secondJudge) tree(pairs []judgePair, accept func(top string) bool, rooted bool) *judgeNode {
	root := &judgeNode{}
	for _, p := range pairs {
		top, rest := j.segments(p)
		if !accept(top) {
			continue
		}
		n := root
		if !rooted {
			n = root.kid(top)
		}
		for _, seg := range rest {
			if seg == "" {
				c := &judgeNode{}
				n.appd = append(n.appd, c)
				n = c
				continue
			}
			n = n.kid(seg)
		}
		n.vals = append(n.vals, p.value)
	}
	return root
}

// schemaFacts resolves what a schema allows: its types through allOf, its
// properties, items and additionalProperties, and its alternatives.
type schemaFacts struct {
	types   []string
	props   map[string]*openapi3.SchemaRef
	items   *openapi3.SchemaRef
	addl    *openapi3.SchemaRef
	choices []*openapi3.SchemaRef
}

func factsOf(s *openapi3.SchemaRef) schemaFacts {
	f := schemaFacts{props: map[string]*openapi3.SchemaRef{}}
	var walk func(r *openapi3.SchemaRef, d int)
	walk = func(r *openapi3.SchemaRef, d int) {
		if r == nil || r.Value == nil || d > 8 {
			return
		}
		v := r.Value
		if v.Type != nil {
			for _, t := range *v.Type {
				if !slices.Contains(f.types, t) {
					f.types = append(f.types, t)
				}
			}
		}
		for k, p := range v.Properties {
			if f.props[k] == nil {
				f.props[k] = p
			}
		}
		if v.Items != nil && f.items == nil {
			f.items = v.Items
		}
		if v.AdditionalProperties.Schema != nil && f.addl == nil {
			f.addl = v.AdditionalProperties.Schema
		}
		for _, a := range v.AllOf {
			walk(a, d+1)
		}
		f.choices = append(f.choices, v.OneOf...)
		f.choices = append(f.choices, v.AnyOf...)
	}
	walk(s, 0)
	return f
}

func (f schemaFacts) wants(t string) bool {
	switch t {
	case "object":
		if len(f.props) > 0 || f.addl != nil {
			return true
		}
	case "array":
		if f.items != nil {
			return true
		}
	}
	return slices.Contains(f.types, t)
}

// coerce turns a decoded node into the JSON value the schema describes:
// numeric keys or "[]" items into arrays, strings into numbers or booleans
// where the schema says so, JSON text into the object or array it holds.
// Alternatives (oneOf, anyOf) are tried in turn: the first whose value
// validates wins.
func (j *secondJudge) coerce(n *judgeNode, s *openapi3.SchemaRef) any {
	f := factsOf(s)
	if len(f.choices) > 0 {
		var first any
		for i, c := range f.choices {
			merged := &openapi3.SchemaRef{Value: &openapi3.Schema{AllOf: openapi3.SchemaRefs{c}}}
			if s != nil && s.Value != nil {
				cp := *s.Value
				cp.OneOf, cp.AnyOf = nil, nil
				merged.Value.AllOf = append(merged.Value.AllOf, &openapi3.SchemaRef{Value: &cp})
			}
			v := j.coerce(n, merged)
			if i == 0 {
				first = v
			}
			if j.validate(c, v) == nil {
				return v
			}
		}
		return first
	}
	if len(n.kids) == 0 && len(n.appd) == 0 && len(n.vals) == 1 && (f.wants("object") || f.wants("array")) {
		// Content-based form values and the json convention: JSON text.
		var v any
		if t := strings.TrimSpace(n.vals[0]); (strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[")) && json.Unmarshal([]byte(t), &v) == nil {
			return v
		}
	}
	switch {
	case f.wants("array") && !(len(n.kids) > 0 && !numericKeys(n.order)):
		var out []any
		for _, v := range n.vals {
			out = append(out, j.scalar(v, f.items))
		}
		keys := slices.Clone(n.order)
		sort.SliceStable(keys, func(a, b int) bool {
			x, _ := strconv.Atoi(keys[a])
			y, _ := strconv.Atoi(keys[b])
			return x < y
		})
		for _, k := range keys {
			out = append(out, j.coerce(n.kids[k], f.items))
		}
		for _, c := range n.appd {
			out = append(out, j.coerce(c, f.items))
		}
		if out == nil {
			out = []any{}
		}
		return out
	case len(n.kids) > 0 || (f.wants("object") && len(n.vals) == 0):
		out := map[string]any{}
		for _, k := range n.order {
			ps := f.props[k]
			if ps == nil {
				ps = f.addl
			}
			out[k] = j.coerce(n.kids[k], ps)
		}
		return out
	case len(n.vals) > 1:
		var out []any
		for _, v := range n.vals {
			out = append(out, j.scalar(v, s))
		}
		return out
	case len(n.vals) == 1:
		return j.scalar(n.vals[0], s)
	}
	return nil
}

func numericKeys(keys []string) bool {
	for _, k := range keys {
		if _, err := strconv.Atoi(k); err != nil {
			return false
		}
	}
	return true
}

// scalar reads a primitive as the schema types it.
func (j *secondJudge) scalar(v string, s *openapi3.SchemaRef) any {
	f := factsOf(s)
	if len(f.choices) > 0 && len(f.types) == 0 {
		for _, c := range f.choices {
			if x := j.scalar(v, c); j.validate(c, x) == nil {
				return x
			}
		}
	}
	if f.wants("string") || len(f.types) == 0 {
		return v
	}
	if f.wants("integer") {
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			return i
		}
	}
	if f.wants("number") {
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			return x
		}
	}
	if f.wants("boolean") {
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	if f.wants("null") && v == "" {
		return nil
	}
	return v
}

// param decodes and validates one query or cookie parameter.
func (j *secondJudge) param(p *openapi3.Parameter) error {
	var pairs []judgePair
	if p.In == openapi3.ParameterInCookie {
		pairs = cookiePairs(j.req.Header)
	} else {
		pairs = queryPairs(j.req.URL.RawQuery)
	}
	if p.Content != nil {
		for _, mt := range p.Content {
			for _, pr := range pairs {
				if pr.key == p.Name {
					var v any
					if err := json.Unmarshal([]byte(pr.value), &v); err != nil {
						return fmt.Errorf("content-encoded value %q: %v", pr.value, err)
					}
					return j.validate(mt.Schema, v)
				}
			}
			if p.Required {
				return errors.New("required, not sent")
			}
			return nil
		}
	}
	sm, err := p.SerializationMethod()
	if err != nil {
		return err
	}
	f := factsOf(p.Schema)
	own := func(top string) bool { return top == p.Name }
	var n *judgeNode
	switch {
	case sm.Style == openapi3.SerializationForm && sm.Explode && f.wants("object") && !f.wants("array"):
		// An exploded form object: its keys are the parameters' names.
		others := map[string]bool{}
		for _, q := range j.params {
			if q.In == p.In && q.Name != p.Name {
				others[q.Name] = true
			}
		}
		n = j.tree(pairs, func(top string) bool { return !others[top] }, false)
		if len(f.props) > 0 && f.addl == nil {
			// Declared properties: only those keys belong to it.
			for _, k := range slices.Clone(n.order) {
				if f.props[k] == nil {
					delete(n.kids, k)
					n.order = slices.DeleteFunc(n.order, func(x string) bool { return x == k })
				}
			}
		}
	case !sm.Explode && sm.Style != openapi3.SerializationDeepObject:
		delim := map[string]string{openapi3.SerializationSpaceDelimited: " ", openapi3.SerializationPipeDelimited: "|"}[sm.Style]
		if delim == "" {
			delim = ","
		}
		n = &judgeNode{}
		for _, pr := range pairs {
			if pr.key != p.Name {
				continue
			}
			parts := []string{pr.value}
			if f.wants("array") || f.wants("object") {
				parts = strings.Split(pr.value, delim)
			}
			if f.wants("object") && !f.wants("array") {
				for i := 0; i+1 < len(parts); i += 2 {
					n.kid(parts[i]).vals = append(n.kid(parts[i]).vals, parts[i+1])
				}
				continue
			}
			n.vals = append(n.vals, parts...)
		}
	default:
		n = j.tree(pairs, own, true)
	}
	if len(n.vals) == 0 && len(n.kids) == 0 && len(n.appd) == 0 {
		if p.Required {
			return errors.New("required, not sent")
		}
		return nil
	}
	return j.validate(p.Schema, j.coerce(n, p.Schema))
}

// requestBody decodes and validates the body by its media type.
func (j *secondJudge) requestBody(rb *openapi3.RequestBody) error {
	ct := j.req.Header.Get("Content-Type")
	mtype, params, _ := mime.ParseMediaType(ct)
	mt := rb.Content.Get(ct)
	if mt == nil {
		for key, m := range rb.Content {
			if media.Type(key) == mtype {
				mt = m
			}
		}
	}
	if mt == nil {
		return fmt.Errorf("Content-Type %q is not one of the body's media types", ct)
	}
	if len(j.body) == 0 {
		if rb.Required {
			return errors.New("required body, none sent")
		}
		return nil
	}
	var v any
	switch {
	case mtype == "application/x-www-form-urlencoded":
		v = j.coerce(j.tree(queryPairs(string(j.body)), func(string) bool { return true }, false), mt.Schema)
	case mtype == "multipart/form-data":
		pairs, err := multipartPairs(j.body, params["boundary"])
		if err != nil {
			return err
		}
		v = j.coerce(j.tree(pairs, func(string) bool { return true }, false), mt.Schema)
	case media.Classify(mtype) == media.XML:
		x, err := xmlDecode(j.body)
		if err != nil {
			return err
		}
		v = j.fromXML(x, mt.Schema, true)
	case media.IsJSON(mtype):
		if err := json.Unmarshal(j.body, &v); err != nil {
			return err
		}
	default:
		// Bytes the spec describes as a string (CBOR, images...): the
		// schema can only say string, and maybe its format.
		v = string(j.body)
	}
	return j.validate(mt.Schema, v)
}

func multipartPairs(body []byte, boundary string) ([]judgePair, error) {
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	var pairs []judgePair
	for {
		part, err := r.NextPart()
		if err == io.EOF {
			return pairs, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(part)
		if err != nil {
			return nil, err
		}
		name := part.FormName()
		pairs = append(pairs, judgePair{rawKey: url.QueryEscape(name), key: name, value: string(data)})
	}
}

// xmlElem is a decoded XML element.
type xmlElem struct {
	name  string
	attrs map[string]string
	kids  []*xmlElem
	text  string
}

func xmlDecode(data []byte) (*xmlElem, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	var stack []*xmlElem
	var root *xmlElem
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			// Names are compared without their prefix (xsi:type is type).
			e := &xmlElem{name: t.Name.Local, attrs: map[string]string{}}
			for _, a := range t.Attr {
				if a.Name.Space != "xmlns" && a.Name.Local != "xmlns" {
					e.attrs[a.Name.Local] = a.Value
				}
			}
			if len(stack) > 0 {
				top := stack[len(stack)-1]
				top.kids = append(top.kids, e)
			} else if root == nil {
				root = e
			}
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			}
		}
	}
	if root == nil {
		return nil, errors.New("XML: no element")
	}
	return root, nil
}

// xmlNameOf is the element name the spec gives a schema (xml.name through
// allOf), or "".
func xmlNameOf(s *openapi3.SchemaRef) (name string, attr, wrapped bool) {
	var walk func(r *openapi3.SchemaRef, d int)
	walk = func(r *openapi3.SchemaRef, d int) {
		if r == nil || r.Value == nil || d > 8 {
			return
		}
		if x := r.Value.XML; x != nil {
			if name == "" {
				name = x.Name
			}
			attr = attr || x.Attribute
			wrapped = wrapped || x.Wrapped
		}
		for _, a := range r.Value.AllOf {
			walk(a, d+1)
		}
	}
	walk(s, 0)
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		name = name[i+1:]
	}
	return name, attr, wrapped
}

// fromXML reads an element as the schema describes it (OAS `xml`: element
// names, attributes, wrapped and unwrapped arrays). At the root, an object
// whose one property names the document element (the AWS rest-xml
// payloads) is that property.
func (j *secondJudge) fromXML(e *xmlElem, s *openapi3.SchemaRef, root bool) any {
	f := factsOf(s)
	if root && len(f.props) == 1 {
		for k, p := range f.props {
			if n, _, _ := xmlNameOf(p); (n == e.name || n == "" && k == e.name) && !factsOf(p).wants("array") {
				if name, _, _ := xmlNameOf(s); name != e.name {
					return map[string]any{k: j.fromXML(e, p, false)}
				}
			}
		}
	}
	switch {
	case f.wants("array"):
		// A wrapped array document or property: the items are the kids.
		var out []any
		for _, k := range e.kids {
			out = append(out, j.fromXML(k, f.items, false))
		}
		if out == nil {
			out = []any{}
		}
		return out
	case f.wants("object") || len(e.kids) > 0:
		out := map[string]any{}
		for k, p := range f.props {
			name, attr, wrapped := xmlNameOf(p)
			if name == "" {
				name = k
			}
			if attr && !factsOf(p).wants("object") && !factsOf(p).wants("array") {
				if a, ok := e.attrs[name]; ok {
					out[k] = j.scalar(a, p)
				}
				continue
			}
			pf := factsOf(p)
			if pf.wants("array") && !wrapped {
				itemName, _, _ := xmlNameOf(pf.items)
				if itemName == "" {
					itemName = name
				}
				var items []any
				for _, c := range e.kids {
					if c.name == itemName {
						items = append(items, j.fromXML(c, pf.items, false))
					}
				}
				if items != nil {
					out[k] = items
				}
				continue
			}
			for _, c := range e.kids {
				if c.name == name {
					out[k] = j.fromXML(c, p, false)
					break
				}
			}
		}
		if f.addl != nil || len(f.props) == 0 {
			for _, c := range e.kids {
				if _, ok := out[c.name]; !ok && f.props[c.name] == nil {
					out[c.name] = j.fromXML(c, f.addl, false)
				}
			}
		}
		return out
	}
	return j.scalar(e.text, s)
}
