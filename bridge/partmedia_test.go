package bridge_test

import (
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// sent is what an upstream received: the request URI, the Content-Type
// and the body, a multipart boundary replaced by BOUNDARY.
type sent struct{ URI, ContentType, Body string }

// wireUpstream records the last request's URI, Content-Type and body.
func wireUpstream(t *testing.T) (*httptest.Server, func() sent) {
	t.Helper()
	var mu sync.Mutex
	var last sent
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s := sent{r.URL.RequestURI(), r.Header.Get("Content-Type"), string(b)}
		if _, params, err := mime.ParseMediaType(s.ContentType); err == nil && params["boundary"] != "" {
			s.ContentType = strings.ReplaceAll(s.ContentType, params["boundary"], "BOUNDARY")
			s.Body = strings.ReplaceAll(s.Body, params["boundary"], "BOUNDARY")
		}
		mu.Lock()
		last = s
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(up.Close)
	return up, func() sent {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

// wireCases calls tool with each case's arguments and compares what the
// upstream received.
func wireCases(t *testing.T, spec, tool string, cases []wireCase) {
	t.Helper()
	up, last := wireUpstream(t)
	rt := bridge.NewRuntime(specCatalog(t, spec, bridge.Options{BaseURL: up.URL, Client: up.Client()}))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := rt.Call(t.Context(), &bridge.Call{Tool: tool, Args: []byte(tc.args)})
			if err != nil {
				t.Fatal(err)
			}
			if out.Kind != bridge.OK {
				t.Fatalf("kind %v: %s", out.Kind, out.Result.Content[0].(*mcp.TextContent).Text)
			}
			if diff := cmp.Diff(tc.want, last()); diff != "" {
				t.Errorf("upstream request mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

type wireCase struct {
	name, args string
	want       sent
}

// part is one multipart/form-data part as mime/multipart writes it.
func part(disposition, contentType, body string) string {
	s := "--BOUNDARY\r\nContent-Disposition: form-data; " + disposition + "\r\n"
	if contentType != "" {
		s += "Content-Type: " + contentType + "\r\n"
	}
	return s + "\r\n" + body + "\r\n"
}

const multipartForm = "multipart/form-data; boundary=BOUNDARY"

// TestMultipartBase64WithMediaType: an OAS 3.1 string with
// contentEncoding base64 and a media type (contentMediaType, or the
// Encoding Object's contentType) is a file the agent sends as base64: the
// part holds the decoded bytes, labelled with that type. Without a media
// type the base64 text is sent as it is.
func TestMultipartBase64WithMediaType(t *testing.T) {
	const spec = `openapi: 3.1.0
info: {title: parts, version: "1"}
paths:
  /upload:
    post:
      operationId: upload
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                icon: {type: string, contentEncoding: base64, contentMediaType: image/png}
                blob: {type: string, contentEncoding: base64}
                scan: {type: string, contentEncoding: base64}
                note: {type: string, contentEncoding: base64}
            encoding:
              scan: {contentType: image/tiff}
              note: {contentType: text/plain}
      responses: {"200": {description: ok}}
`
	wireCases(t, spec, "upload", []wireCase{
		{"contentMediaType", `{"body":{"icon":"iVBORw0KGgo="}}`, sent{"/upload", multipartForm,
			part(`name="icon"; filename="icon"`, "image/png", "\x89PNG\r\n\x1a\n") + "--BOUNDARY--\r\n"}},
		{"file object", `{"body":{"icon":{"content":"aGk=","filename":"i.png"}}}`, sent{"/upload", multipartForm,
			part(`name="icon"; filename="i.png"`, "image/png", "hi") + "--BOUNDARY--\r\n"}},
		{"encoding contentType", `{"body":{"scan":"aGVsbG8="}}`, sent{"/upload", multipartForm,
			part(`name="scan"; filename="scan"`, "image/tiff", "hello") + "--BOUNDARY--\r\n"}},
		{"no media type", `{"body":{"blob":"aGk=","note":"aGk="}}`, sent{"/upload", multipartForm,
			part(`name="blob"`, "", "aGk=") + part(`name="note"`, "", "aGk=") + "--BOUNDARY--\r\n"}},
	})
}

// TestXMLPartsAndFieldsAreXML: an object or array under an XML
// contentType (the OpenAPI spec's own Encoding Object example,
// historyMetadata with application/xml; charset=utf-8) is written as XML
// named by the property's xml.name, else the property, not as JSON under
// an XML label. Another non-JSON type holding an object is labelled
// application/json, what the part holds; YAML keeps its label (JSON is
// YAML).
func TestXMLPartsAndFieldsAreXML(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: parts, version: "1"}
paths:
  /history:
    post:
      operationId: history
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                id: {type: string, format: uuid}
                historyMetadata:
                  description: metadata in XML format
                  type: object
                  properties: {}
                meta:
                  type: object
                  xml: {name: Meta, namespace: "urn:x"}
                  properties:
                    v: {type: integer, xml: {attribute: true}}
                    n: {type: string}
                entries:
                  type: array
                  items: {type: object, xml: {name: entry}}
                raw: {type: string}
                notes: {type: object}
                config: {type: object}
            encoding:
              historyMetadata: {contentType: application/xml; charset=utf-8}
              meta: {contentType: application/xml}
              entries: {contentType: text/xml}
              raw: {contentType: application/xml}
              notes: {contentType: text/plain}
              config: {contentType: application/yaml}
      responses: {"200": {description: ok}}
  /form:
    post:
      operationId: form
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                meta: {type: object, xml: {name: m}}
            encoding:
              meta: {contentType: text/xml}
      responses: {"200": {description: ok}}
`
	const decl = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
	wireCases(t, spec, "history", []wireCase{
		{"encoding object example", `{"body":{"id":"u1","historyMetadata":{"entry":"y"}}}`, sent{"/history", multipartForm,
			part(`name="historyMetadata"`, "application/xml; charset=utf-8", decl+"<historyMetadata><entry>y</entry></historyMetadata>") +
				part(`name="id"`, "", "u1") + "--BOUNDARY--\r\n"}},
		{"xml object", `{"body":{"meta":{"v":1,"n":"a&b"}}}`, sent{"/history", multipartForm,
			part(`name="meta"`, "application/xml", decl+`<Meta xmlns="urn:x" v="1"><n>a&amp;b</n></Meta>`) + "--BOUNDARY--\r\n"}},
		{"array items", `{"body":{"entries":[{"k":"1"},{"k":"2"}]}}`, sent{"/history", multipartForm,
			part(`name="entries"`, "text/xml", decl+"<entry><k>1</k></entry>") +
				part(`name="entries"`, "text/xml", decl+"<entry><k>2</k></entry>") + "--BOUNDARY--\r\n"}},
		{"xml text as given", `{"body":{"raw":"<r/>"}}`, sent{"/history", multipartForm,
			part(`name="raw"`, "application/xml", "<r/>") + "--BOUNDARY--\r\n"}},
		{"object as text/plain", `{"body":{"notes":{"a":1}}}`, sent{"/history", multipartForm,
			part(`name="notes"`, "application/json", `{"a":1}`) + "--BOUNDARY--\r\n"}},
		{"object as yaml", `{"body":{"config":{"a":1}}}`, sent{"/history", multipartForm,
			part(`name="config"`, "application/yaml", `{"a":1}`) + "--BOUNDARY--\r\n"}},
	})
	wireCases(t, spec, "form", []wireCase{
		{"form field", `{"body":{"meta":{"a":"1"}}}`, sent{"/form", "application/x-www-form-urlencoded",
			"meta=%3Cm%3E%3Ca%3E1%3C%2Fa%3E%3C%2Fm%3E"}},
	})
}

// TestXMLContentParameters: a `content` parameter of an XML media type
// holding an object or array is an XML element (no declaration, so that
// it fits one line), named by the schema's xml.name, else the
// parameter's name; a string is sent as it is.
func TestXMLContentParameters(t *testing.T) {
	const spec = `openapi: 3.0.3
info: {title: params, version: "1"}
paths:
  /search:
    get:
      operationId: search
      parameters:
        - name: filt
          in: query
          content: {application/xml: {schema: {type: object, xml: {name: f}}}}
        - name: ids
          in: query
          content:
            application/xml:
              schema: {type: array, xml: {wrapped: true}, items: {type: integer, xml: {name: id}}}
        - name: raw
          in: query
          content: {application/xml: {schema: {type: string}}}
      responses: {"200": {description: ok}}
`
	wireCases(t, spec, "search", []wireCase{
		{"object", `{"filt":{"a":"1"}}`, sent{"/search?filt=%3Cf%3E%3Ca%3E1%3C%2Fa%3E%3C%2Ff%3E", "", ""}},
		{"array", `{"ids":[1,2]}`, sent{"/search?ids=%3Cids%3E%3Cid%3E1%3C%2Fid%3E%3Cid%3E2%3C%2Fid%3E%3C%2Fids%3E", "", ""}},
		{"string", `{"raw":"<r/>"}`, sent{"/search?raw=%3Cr%2F%3E", "", ""}},
	})
}

// TestMultipartTextualContentMediaType: an OAS 3.1 string whose
// contentMediaType is textual (text/csv, application/json), without a
// contentEncoding, holds the text itself: the agent writes it as a plain
// string and the part carries it as it is, labelled with that type, not
// as a file whose content must be base64. A binary contentMediaType stays
// a file.
func TestMultipartTextualContentMediaType(t *testing.T) {
	const spec = `openapi: 3.1.0
info: {title: parts, version: "1"}
paths:
  /upload:
    post:
      operationId: upload
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                csv: {type: string, contentMediaType: text/csv}
                doc: {type: string, contentMediaType: application/json}
                note: {type: string, contentMediaType: text/plain}
                raw: {type: string, contentMediaType: application/octet-stream}
            encoding:
              note: {contentType: text/plain; charset=utf-8}
      responses: {"200": {description: ok}}
`
	wireCases(t, spec, "upload", []wireCase{
		{"textual", `{"body":{"csv":"a,b\n1,2","doc":"{\"a\":1}","note":"hi"}}`, sent{"/upload", multipartForm,
			part(`name="csv"`, "text/csv", "a,b\n1,2") + part(`name="doc"`, "application/json", `{"a":1}`) +
				part(`name="note"`, "text/plain; charset=utf-8", "hi") + "--BOUNDARY--\r\n"}},
		{"binary stays a file", `{"body":{"raw":"aGk="}}`, sent{"/upload", multipartForm,
			part(`name="raw"; filename="raw"`, "application/octet-stream", "hi") + "--BOUNDARY--\r\n"}},
	})
}
