package request

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// bodyDoc parses a Request Body Object written as JSON.
func bodyDoc(t *testing.T, rbJSON string) *openapi3.RequestBody {
	t.Helper()
	var rb openapi3.RequestBody
	if err := json.Unmarshal([]byte(rbJSON), &rb); err != nil {
		t.Fatalf("parsing request body %s: %v", rbJSON, err)
	}
	return &rb
}

func TestNewBodySpec(t *testing.T) {
	type got struct {
		ContentType, Header string
		Kind                BodyKind
		Accepts             []string
		Files               []string
	}
	tests := []struct {
		name    string
		content []string // media type keys
		want    got
		err     string
	}{
		{"json first", []string{"text/plain", "application/json", "application/x-www-form-urlencoded"},
			got{"application/json", "application/json", KindJSON, []string{"application/json"}, nil}, ""},
		{"json charset", []string{"application/json; charset=utf-8", "application/xml"},
			got{"application/json; charset=utf-8", "application/json; charset=utf-8", KindJSON, []string{"application/json; charset=utf-8"}, nil}, ""},
		{"+json over form", []string{"application/x-www-form-urlencoded", "application/vnd.foo+json"},
			got{"application/vnd.foo+json", "application/vnd.foo+json", KindJSON, []string{"application/vnd.foo+json"}, nil}, ""},
		{"text/json", []string{"text/json", "text/plain"},
			got{"text/json", "text/json", KindJSON, []string{"text/json"}, nil}, ""},
		{"form over multipart", []string{"multipart/form-data", "application/x-www-form-urlencoded"},
			got{"application/x-www-form-urlencoded", "application/x-www-form-urlencoded", KindForm, []string{"application/x-www-form-urlencoded"}, nil}, ""},
		{"multipart over text", []string{"text/plain", "multipart/form-data"},
			got{"multipart/form-data", "multipart/form-data", KindMultipart, []string{"multipart/form-data"}, nil}, ""},
		{"text/plain over octet-stream", []string{"application/octet-stream", "text/plain"},
			got{"text/plain", "text/plain", KindText, []string{"text/plain"}, nil}, ""},
		{"octet-stream over other text", []string{"text/csv", "application/octet-stream"},
			got{"application/octet-stream", "application/octet-stream", KindBinary, []string{"application/octet-stream"}, nil}, ""},
		{"other text", []string{"image/png", "application/xml", "text/csv"},
			got{"application/xml", "application/xml", KindText, []string{"application/xml", "text/csv"}, nil}, ""},
		{"text wildcard", []string{"text/*"},
			got{"text/*", "text/plain", KindText, []string{"text/*"}, nil}, ""},
		{"image concrete before wildcard", []string{"image/*", "image/png", "image/jpeg"},
			got{"image/jpeg", "image/jpeg", KindBinary, []string{"image/jpeg", "image/png", "image/*"}, nil}, ""},
		{"any", []string{"*/*"},
			got{"*/*", "application/octet-stream", KindBinary, []string{"*/*"}, nil}, ""},
		{"multipart/mixed skipped", []string{"multipart/mixed", "application/pdf"},
			got{"application/pdf", "application/pdf", KindBinary, []string{"application/pdf"}, nil}, ""},
		{"only unsupported", []string{"multipart/mixed", "multipart/related"}, got{}, "no supported media type among multipart/mixed, multipart/related"},
		{"garbage key", []string{"json"}, got{}, "no supported media type among json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rb := &openapi3.RequestBody{Content: openapi3.Content{}}
			for _, k := range tc.content {
				rb.Content[k] = &openapi3.MediaType{}
			}
			b, err := NewBody(rb, Options{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("NewBody error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewBody: %v", err)
			}
			g := got{b.ContentType, b.Header, b.Kind, b.Accepts, b.fileProps()}
			if diff := cmp.Diff(tc.want, g); diff != "" {
				t.Errorf("NewBody(%v) mismatch (-want +got):\n%s", tc.content, diff)
			}
		})
	}
}

func TestNewBodySpecSpecial(t *testing.T) {
	if b, err := NewBody(nil, Options{}); b != nil || err != nil {
		t.Errorf("NewBody(nil, Options{}) = %v, %v; want nil, nil", b, err)
	}
	if b, err := NewBody(&openapi3.RequestBody{}, Options{}); b != nil || err != nil {
		t.Errorf("NewBody(no content) = %v, %v; want nil, nil", b, err)
	}
	if _, err := NewBody(&openapi3.RequestBody{Required: true}, Options{}); err == nil {
		t.Error("NewBody(required, no content): want an error")
	}
	_, err := NewBody(bodyDoc(t, `{"content":{"application/x-www-form-urlencoded":{"encoding":{"a":{"style":"matrix"}}}}}`), Options{})
	if err == nil || !strings.Contains(err.Error(), `encoding style "matrix" is not allowed`) {
		t.Errorf("NewBody(matrix encoding) error = %v", err)
	}
	b, err := NewBody(bodyDoc(t, `{"content":{"*/*":{"schema":{"type":"object"}}}}`), Options{})
	if err != nil || b.Kind != KindJSON || b.Header != "application/json" {
		t.Errorf("NewBody(*/* object) = %+v, %v; want JSON", b, err)
	}
	// Form fields are named by an object's properties: a multipart or form
	// type with another schema is passed over (Jira's column lists take */*
	// as JSON), or reported when nothing else is left (Jira's attachments).
	b, err = NewBody(bodyDoc(t, `{"content":{"multipart/form-data":{"schema":{"type":"array","items":{"type":"string"}}},"*/*":{"schema":{"type":"array","items":{"type":"string"}}}}}`), Options{})
	if err != nil || b.Kind != KindJSON || b.ContentType != "*/*" {
		t.Errorf("NewBody(multipart array, */* array) = %+v, %v; want */* as JSON", b, err)
	}
	_, err = NewBody(bodyDoc(t, `{"content":{"multipart/form-data":{"schema":{"type":"string","format":"binary"}}}}`), Options{})
	if err == nil || !strings.Contains(err.Error(), "multipart/form-data with a schema that is not an object") {
		t.Errorf("NewBody(multipart string) error = %v", err)
	}
	for _, schema := range []string{`{}`, `{"properties":{"a":{}}}`, `{"type":["object","null"]}`} {
		if b, err := NewBody(bodyDoc(t, `{"content":{"application/x-www-form-urlencoded":{"schema":`+schema+`}}}`), Options{}); err != nil || b.Kind != KindForm {
			t.Errorf("NewBody(form %s) = %+v, %v; want form", schema, b, err)
		}
	}
	b, err = NewBody(bodyDoc(t, `{"content":{"multipart/form-data":{
		"schema":{"type":"object","allOf":[{"properties":{"inAllOf":{"type":"string","format":"binary"}}}],"properties":{
			"bin":{"type":"string","format":"binary"},
			"byte":{"type":"string","format":"byte"},
			"b64":{"type":"string","contentEncoding":"base64"},
			"media":{"type":"string","contentMediaType":"image/png"},
			"files":{"type":"array","items":{"type":"string","format":"binary"}},
			"png":{"type":"string"},
			"xml":{"type":"string"},
			"text":{"type":"string"}}},
		"encoding":{"png":{"contentType":"image/png, image/*"},"xml":{"contentType":"application/xml"},"extra":{"contentType":"application/pdf"}}}}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]FilePlan{
		"bin":     {Kind: FileRaw},
		"byte":    {Kind: FileBase64},
		"b64":     {Kind: FileBase64},
		"media":   {Kind: FileRaw, ContentType: "image/png"},
		"files":   {Kind: FileRaw},
		"png":     {Kind: FileRaw, ContentType: "image/png", Accepts: "image/png, image/*"},
		"extra":   {Kind: FileRaw, ContentType: "application/pdf"},
		"inAllOf": {Kind: FileRaw},
	}
	if diff := cmp.Diff(want, b.Files, cmp.AllowUnexported(FilePlan{})); diff != "" {
		t.Errorf("file plans mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"bin", "extra", "files", "inAllOf", "media", "png"}, b.fileProps()); diff != "" {
		t.Errorf("fileProps mismatch (-want +got):\n%s", diff)
	}
}

const bodyBoundary = "BOUNDARY"

// bodyCases have exact wire bytes; oracle marks those kin-openapi must
// decode back (oracleWant is the value kin's validator ends up with).
var bodyCases = []struct {
	name       string
	rb         string // Request Body Object
	value      any
	wantBody   string
	wantType   string
	err        string
	oracle     bool
	oracleWant any
}{
	{
		name:     "json compact, no HTML escaping",
		rb:       `{"content":{"application/json":{"schema":{"type":"object"}}}}`,
		value:    map[string]any{"b": []any{float64(1), json.Number("2.50")}, "a": "<x&y>"},
		wantBody: `{"a":"<x&y>","b":[1,2.50]}`, wantType: "application/json",
	},
	{
		name:     "vendor json",
		rb:       `{"content":{"application/vnd.foo+json":{}}}`,
		value:    "str",
		wantBody: `"str"`, wantType: "application/vnd.foo+json",
	},
	{
		name: "form defaults",
		rb: `{"required":true,"content":{"application/x-www-form-urlencoded":{"schema":{"type":"object","properties":{
			"name":{"type":"string"},"n":{"type":"integer"},"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}}}}}}}`,
		value:    map[string]any{"name": "a b&c=d+e", "n": float64(3), "ok": true, "tags": []any{"x", "y,z"}, "skip": nil},
		wantBody: "n=3&name=a%20b%26c%3Dd%2Be&ok=true&tags=x&tags=y%2Cz", wantType: "application/x-www-form-urlencoded",
		oracle: true, oracleWant: map[string]any{"name": "a b&c=d+e", "n": int64(3), "ok": true, "tags": []any{"x", "y,z"}},
	},
	{
		name: "form styled properties",
		rb: `{"content":{"application/x-www-form-urlencoded":{"schema":{"type":"object","properties":{
			"deep":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}}},
			"csv":{"type":"array","items":{"type":"string"}},
			"obj":{"type":"object","properties":{"k":{"type":"string"}}},
			"pipes":{"type":"array","items":{"type":"string"}},
			"url":{"type":"string"}}},
			"encoding":{"deep":{"style":"deepObject","explode":true},"csv":{"explode":false},"obj":{"style":"form","explode":false},
				"pipes":{"style":"pipeDelimited"},"url":{"allowReserved":true}}}}}`,
		value: map[string]any{"deep": map[string]any{"a": "x y", "b": float64(2)}, "csv": []any{"a", "b"},
			"obj": map[string]any{"k": "v"}, "pipes": []any{"p", "q"}, "url": "https://x.test/a?b"},
		wantBody: "csv=a,b&deep%5Ba%5D=x%20y&deep%5Bb%5D=2&obj=k,v&pipes=p%7Cq&url=https://x.test/a?b",
		wantType: "application/x-www-form-urlencoded",
		oracle:   true,
		oracleWant: map[string]any{"deep": map[string]any{"a": "x y", "b": int64(2)}, "csv": []any{"a", "b"},
			"obj": map[string]any{"k": "v"}, "pipes": []any{"p", "q"}, "url": "https://x.test/a?b"},
	},
	{
		name: "form JSON values",
		rb: `{"content":{"application/x-www-form-urlencoded":{"schema":{"type":"object","properties":{
			"id":{"type":"string"},"address":{"type":"object"},"list":{"type":"array","items":{}}}},
			"encoding":{"id":{"contentType":"application/json"}}}}}`,
		value:    map[string]any{"id": "f81d", "address": map[string]any{"zip": "9+1", "city": "Somewhere"}, "list": []any{map[string]any{"a": float64(1)}, "b"}},
		wantBody: "address=%7B%22city%22%3A%22Somewhere%22%2C%22zip%22%3A%229%2B1%22%7D&id=%22f81d%22&list=%7B%22a%22%3A1%7D&list=b",
		wantType: "application/x-www-form-urlencoded",
	},
	{
		name:  "form needs an object",
		rb:    `{"content":{"application/x-www-form-urlencoded":{}}}`,
		value: "a=b", err: "body must be an object",
	},
	{
		name: "multipart",
		rb: `{"content":{"multipart/form-data":{"schema":{"type":"object","properties":{
			"id":{"type":"string"},"n":{"type":"integer"},
			"meta":{"type":"object","properties":{"k":{"type":"string"}}},
			"tags":{"type":"array","items":{"type":"string"}},
			"file":{"type":"string","format":"binary"},
			"photo":{"type":"string","format":"binary"},
			"sig":{"type":"string","format":"byte"}}},
			"encoding":{"photo":{"contentType":"image/png"}}}}}`,
		value: map[string]any{"id": "a\"b", "n": float64(7), "meta": map[string]any{"k": "v"}, "tags": []any{"x", "y"},
			"file": "aGVsbG8=", "photo": map[string]any{"content": "\x89PNG", "encoding": "text", "filename": "p.png"},
			"sig": map[string]any{"content": "hi", "encoding": "text"}},
		wantBody: "--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"file\"; filename=\"file\"\r\n" +
			"Content-Type: application/octet-stream\r\n\r\n" +
			"hello\r\n--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"id\"\r\n\r\n" +
			"a\"b\r\n--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"meta\"\r\n" +
			"Content-Type: application/json\r\n\r\n" +
			"{\"k\":\"v\"}\r\n--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"n\"\r\n\r\n" +
			"7\r\n--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"photo\"; filename=\"p.png\"\r\n" +
			"Content-Type: image/png\r\n\r\n" +
			"\x89PNG\r\n--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"sig\"\r\n\r\n" +
			"aGk=\r\n--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"tags\"\r\n\r\n" +
			"x\r\n--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"tags\"\r\n\r\n" +
			"y\r\n--BOUNDARY--\r\n",
		wantType: "multipart/form-data; boundary=BOUNDARY",
		oracle:   true,
		oracleWant: map[string]any{"file": "hello", "id": "a\"b", "meta": map[string]any{"k": "v"}, "n": int64(7),
			"photo": "\x89PNG", "sig": "aGk=", "tags": []any{"x", "y"}},
	},
	{
		name: "multipart file array and data URL",
		rb: `{"content":{"multipart/form-data":{"schema":{"type":"object","properties":{
			"files":{"type":"array","items":{"type":"string","format":"binary"}}}}}}}`,
		value: map[string]any{"files": []any{"data:text/csv;base64,YSxi", map[string]any{"content": "x", "encoding": "text", "contentType": "text/plain; charset=utf-8"}}},
		wantBody: "--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"files\"; filename=\"files\"\r\n" +
			"Content-Type: text/csv\r\n\r\n" +
			"a,b\r\n--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"files\"; filename=\"files\"\r\n" +
			"Content-Type: text/plain; charset=utf-8\r\n\r\n" +
			"x\r\n--BOUNDARY--\r\n",
		wantType: "multipart/form-data; boundary=BOUNDARY",
		oracle:   true, oracleWant: map[string]any{"files": []any{"a,b", "x"}},
	},
	{
		// The encoding's contentType is the part's label; only a bare
		// text/plain, the multipart default, goes without saying.
		name: "multipart text part keeps its charset",
		rb: `{"content":{"multipart/form-data":{"schema":{"type":"object","properties":{
			"x":{"type":"string"},"y":{"type":"string"}}},
			"encoding":{"x":{"contentType":"text/plain; charset=utf-8"},"y":{"contentType":"text/plain"}}}}}`,
		value: map[string]any{"x": "é", "y": "ü"},
		wantBody: "--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"x\"\r\n" +
			"Content-Type: text/plain; charset=utf-8\r\n\r\n" +
			"é\r\n--BOUNDARY\r\n" +
			"Content-Disposition: form-data; name=\"y\"\r\n\r\n" +
			"ü\r\n--BOUNDARY--\r\n",
		wantType: "multipart/form-data; boundary=BOUNDARY",
	},
	{
		name:  "multipart bad base64",
		rb:    `{"content":{"multipart/form-data":{"schema":{"type":"object","properties":{"f":{"type":"string","format":"binary"}}}}}}`,
		value: map[string]any{"f": "not base64!"}, err: `body property "f": invalid base64`,
	},
	{
		name:  "multipart unknown file field",
		rb:    `{"content":{"multipart/form-data":{"schema":{"type":"object","properties":{"f":{"type":"string","format":"binary"}}}}}}`,
		value: map[string]any{"f": map[string]any{"content": "", "name": "x"}}, err: `unknown file field "name"`,
	},
	{
		name:  "multipart header injection",
		rb:    `{"content":{"multipart/form-data":{"schema":{"type":"object","properties":{"f":{"type":"string","format":"binary"}}}}}}`,
		value: map[string]any{"f": map[string]any{"content": "", "filename": "a\r\nX: y"}}, err: "filename must not contain control characters",
	},
	{
		name:     "text/plain",
		rb:       `{"content":{"text/plain":{}}}`,
		value:    "héllo\n",
		wantBody: "héllo\n", wantType: "text/plain",
	},
	{
		name:     "text/plain object goes as JSON text",
		rb:       `{"content":{"text/plain":{}}}`,
		value:    map[string]any{"a": []any{1, "<b>"}},
		wantBody: `{"a":[1,"<b>"]}`, wantType: "text/plain",
	},
	{
		name:     "octet-stream",
		rb:       `{"content":{"application/octet-stream":{}}}`,
		value:    "AAEC/w==",
		wantBody: "\x00\x01\x02\xff", wantType: "application/octet-stream",
	},
	{
		name:     "octet-stream url-safe unpadded",
		rb:       `{"content":{"application/octet-stream":{}}}`,
		value:    "AAEC_w",
		wantBody: "\x00\x01\x02\xff", wantType: "application/octet-stream",
	},
	{
		name:  "octet-stream bad base64",
		rb:    `{"content":{"application/octet-stream":{}}}`,
		value: "%%%", err: "body: invalid base64",
	},
	{
		name:     "binary file object picks an accepted type",
		rb:       `{"content":{"image/png":{},"image/jpeg":{}}}`,
		value:    map[string]any{"content": "x", "encoding": "text", "contentType": "image/png"},
		wantBody: "x", wantType: "image/png",
	},
	{
		name:  "binary file object type not accepted",
		rb:    `{"content":{"image/png":{}}}`,
		value: map[string]any{"content": "x", "encoding": "text", "contentType": "text/html"}, err: `contentType "text/html" is not accepted`,
	},
	{
		name:     "binary data URL type not accepted is ignored",
		rb:       `{"content":{"image/png":{}}}`,
		value:    "data:text/html;base64,eA==",
		wantBody: "x", wantType: "image/png",
	},
	{
		// Arguments are validated first: a null that reaches the encoder
		// is one the schema allows, and JSON has a text for it.
		name:  "null optional JSON body",
		rb:    `{"content":{"application/json":{}}}`,
		value: nil, wantBody: "null", wantType: "application/json",
	},
	{
		name:  "null required JSON body",
		rb:    `{"required":true,"content":{"application/json":{}}}`,
		value: nil, wantBody: "null", wantType: "application/json",
	},
	{
		name:  "null optional text body",
		rb:    `{"content":{"text/plain":{}}}`,
		value: nil,
	},
	{
		name:  "null required text body",
		rb:    `{"required":true,"content":{"text/plain":{}}}`,
		value: nil, err: "body is required",
	},
}

func TestBodyEncode(t *testing.T) {
	for _, tc := range bodyCases {
		t.Run(tc.name, func(t *testing.T) {
			rb := bodyDoc(t, tc.rb)
			b, err := NewBody(rb, Options{})
			if err != nil {
				t.Fatalf("NewBody: %v", err)
			}
			b.boundary = bodyBoundary
			data, ct, err := b.encode(tc.value)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("encode error = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if diff := cmp.Diff(tc.wantBody, string(data)); diff != "" {
				t.Errorf("body mismatch (-want +got):\n%s", diff)
			}
			if ct != tc.wantType {
				t.Errorf("Content-Type = %q, want %q", ct, tc.wantType)
			}
			if !tc.oracle {
				return
			}
			var rbObj any
			if err := json.Unmarshal([]byte(tc.rb), &rbObj); err != nil {
				t.Fatal(err)
			}
			o := paramOracleRequest{method: http.MethodPost, path: "/items", rawPath: "/items", body: rbObj,
				header: http.Header{"Content-Type": {ct}}, payload: data}
			got, err := o.validate(t)
			if err != nil {
				t.Fatalf("kin-openapi rejects the body: %v", err)
			}
			if diff := cmp.Diff(tc.oracleWant, got); diff != "" {
				t.Errorf("kin-openapi decoded value mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBodyMultipartRandomBoundary(t *testing.T) {
	b, err := NewBody(bodyDoc(t, `{"content":{"multipart/form-data":{}}}`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, ct, err := b.encode(map[string]any{"a": "b"})
	if err != nil {
		t.Fatal(err)
	}
	_, boundary, ok := strings.Cut(ct, "boundary=")
	if !ok || len(boundary) < 16 || !strings.HasPrefix(string(data), "--"+boundary+"\r\n") {
		t.Errorf("encode = %q, %q; want a random boundary", data, ct)
	}
}

func TestBodyFileSchema(t *testing.T) {
	s := fileSchema()
	if _, err := json.Marshal(s); err != nil {
		t.Fatalf("fileSchema does not marshal: %v", err)
	}
	props, _ := s["properties"].(map[string]any)
	var names []string
	for k := range props {
		names = append(names, k)
	}
	if diff := cmp.Diff([]string{"content", "contentType", "encoding", "filename"}, names, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("fileSchema properties mismatch (-want +got):\n%s", diff)
	}
}
