package bridge_test

import (
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/bridge/request"
	"github.com/mcpbridge/mcpbridge/specloader"
)

// collectionSpec has, for each location of Swagger 2.0 (path, query,
// header, formData in a form-urlencoded and in a multipart body), an array
// parameter of every collectionFormat (and none), arrays nested in items
// with formats of their own, and parameters declared on the path item and
// in the parameters section ($ref).
const collectionSpec = `swagger: "2.0"
info: {title: collections, version: "1"}
parameters:
  refTsv: {name: refTsv, in: query, type: array, items: {type: string}, collectionFormat: tsv}
  refPipes: {name: refPipes, in: formData, type: array, items: {type: string}, collectionFormat: pipes}
paths:
  /path/{csv}/{ssv}/{tsv}/{pipes}/{multi}/{absent}:
    parameters:
      - {name: absent, in: path, required: true, type: array, items: {type: string}}
    get:
      operationId: path
      parameters:
        - {name: csv, in: path, required: true, type: array, items: {type: string}, collectionFormat: csv}
        - {name: ssv, in: path, required: true, type: array, items: {type: string}, collectionFormat: ssv}
        - {name: tsv, in: path, required: true, type: array, items: {type: string}, collectionFormat: tsv}
        - {name: pipes, in: path, required: true, type: array, items: {type: string}, collectionFormat: pipes}
        - {name: multi, in: path, required: true, type: array, items: {type: string}, collectionFormat: multi}
      responses: {"200": {description: ok}}
  /nested/{nested}:
    get:
      operationId: pathNested
      parameters:
        - name: nested
          in: path
          required: true
          type: array
          collectionFormat: pipes
          items: {type: array, collectionFormat: ssv, items: {type: string}}
      responses: {"200": {description: ok}}
  /query:
    parameters:
      - {name: absent, in: query, type: array, items: {type: string}}
    get:
      operationId: query
      parameters:
        - {name: csv, in: query, type: array, items: {type: string}, collectionFormat: csv}
        - {name: ssv, in: query, type: array, items: {type: string}, collectionFormat: ssv}
        - {name: tsv, in: query, type: array, items: {type: string}, collectionFormat: tsv}
        - {name: pipes, in: query, type: array, items: {type: string}, collectionFormat: pipes}
        - {name: multi, in: query, type: array, items: {type: string}, collectionFormat: multi}
        - {$ref: "#/parameters/refTsv"}
        - name: nested
          in: query
          type: array
          items: {type: array, collectionFormat: pipes, items: {type: string}}
        - name: nestedMulti
          in: query
          type: array
          collectionFormat: multi
          items: {type: array, collectionFormat: tsv, items: {type: string}}
      responses: {"200": {description: ok}}
  /header:
    parameters:
      - {name: X-Absent, in: header, type: array, items: {type: string}}
    get:
      operationId: header
      parameters:
        - {name: X-Csv, in: header, type: array, items: {type: string}, collectionFormat: csv}
        - {name: X-Ssv, in: header, type: array, items: {type: string}, collectionFormat: ssv}
        - {name: X-Tsv, in: header, type: array, items: {type: string}, collectionFormat: tsv}
        - {name: X-Pipes, in: header, type: array, items: {type: string}, collectionFormat: pipes}
        - {name: X-Multi, in: header, type: array, items: {type: string}, collectionFormat: multi}
        - name: X-Nested
          in: header
          type: array
          collectionFormat: pipes
          items: {type: array, items: {type: string}}
      responses: {"200": {description: ok}}
  /form:
    parameters:
      - {name: absent, in: formData, type: array, items: {type: string}}
    post:
      operationId: form
      consumes: [application/x-www-form-urlencoded]
      parameters: &formParams
        - {name: csv, in: formData, type: array, items: {type: string}, collectionFormat: csv}
        - {name: ssv, in: formData, type: array, items: {type: string}, collectionFormat: ssv}
        - {name: tsv, in: formData, type: array, items: {type: string}, collectionFormat: tsv}
        - {name: pipes, in: formData, type: array, items: {type: string}, collectionFormat: pipes}
        - {name: multi, in: formData, type: array, items: {type: string}, collectionFormat: multi}
        - {$ref: "#/parameters/refPipes"}
        - name: nested
          in: formData
          type: array
          collectionFormat: ssv
          items: {type: array, collectionFormat: pipes, items: {type: string}}
        - name: nestedMulti
          in: formData
          type: array
          collectionFormat: multi
          items: {type: array, items: {type: string}}
        - {name: one, in: formData, type: string}
      responses: {"200": {description: ok}}
  /multipart:
    parameters:
      - {name: absent, in: formData, type: array, items: {type: string}}
    post:
      operationId: multipart
      consumes: [multipart/form-data]
      parameters: *formParams
      responses: {"200": {description: ok}}
`

// collectionRequest is what the upstream received, as it came.
type collectionRequest struct {
	URI     string     // request URI: path and query, escaped
	Headers []string   // the X-* headers, "Name: value", sorted
	Body    string     // form-urlencoded body
	Parts   [][]string // multipart parts: name, content
}

// TestSwagger2CollectionFormat: a Swagger 2.0 array parameter reaches the
// upstream as its collectionFormat says (csv when absent; multi, valid for
// query and formData only, is csv elsewhere), in every location, nested
// arrays as their items' collectionFormat says, also from a catalog
// restored from its snapshot (a cached restart).
func TestSwagger2CollectionFormat(t *testing.T) {
	var (
		mu  sync.Mutex
		got collectionRequest
	)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := collectionRequest{URI: r.RequestURI}
		for name, vs := range r.Header {
			if strings.HasPrefix(name, "X-") {
				for _, v := range vs {
					rec.Headers = append(rec.Headers, name+": "+v)
				}
			}
		}
		mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt == "multipart/form-data" {
			mr := multipart.NewReader(r.Body, params["boundary"])
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				b, _ := io.ReadAll(p)
				rec.Parts = append(rec.Parts, []string{p.FormName(), string(b)})
			}
		} else {
			b, _ := io.ReadAll(r.Body)
			rec.Body = string(b)
		}
		mu.Lock()
		got = rec
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	defer up.Close()
	opts := bridge.Options{BaseURL: up.URL, Client: up.Client()}
	built := specCatalog(t, collectionSpec, opts)
	data, err := built.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	restored, err := bridge.NewFromSnapshot(data, opts)
	if err != nil {
		t.Fatal(err)
	}

	// pathArgs are the path operation's arguments with name set to v.
	pathArgs := func(name, v string) string {
		args := map[string]string{"csv": `["p"]`, "ssv": `["p"]`, "tsv": `["p"]`, "pipes": `["p"]`, "multi": `["p"]`, "absent": `["p"]`}
		args[name] = v
		var b strings.Builder
		for i, k := range []string{"csv", "ssv", "tsv", "pipes", "multi", "absent"} {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`"` + k + `":` + args[k])
		}
		return "{" + b.String() + "}"
	}
	const ab = `["a","b"]`
	parts := func(kv ...string) [][]string {
		var out [][]string
		for i := 0; i < len(kv); i += 2 {
			out = append(out, []string{kv[i], kv[i+1]})
		}
		return out
	}
	// Before these were put right (converted parameters had no style, or
	// kin-openapi's default), the upstream already received what the
	// cases path csv, multi and absent, query csv, ssv, pipes and multi,
	// header csv, multi and absent, and form and multipart multi want:
	// they guard against regressions; every other case failed.
	for _, tc := range []struct {
		name, tool, args string
		want             collectionRequest
	}{
		{"path csv", "path", pathArgs("csv", ab), collectionRequest{URI: "/path/a,b/p/p/p/p/p"}},
		{"path ssv", "path", pathArgs("ssv", ab), collectionRequest{URI: "/path/p/a%20b/p/p/p/p"}},
		{"path tsv", "path", pathArgs("tsv", ab), collectionRequest{URI: "/path/p/p/a%09b/p/p/p"}},
		{"path pipes", "path", pathArgs("pipes", ab), collectionRequest{URI: "/path/p/p/p/a%7Cb/p/p"}},
		{"path multi", "path", pathArgs("multi", ab), collectionRequest{URI: "/path/p/p/p/p/a,b/p"}},
		{"path absent (path item)", "path", pathArgs("absent", ab), collectionRequest{URI: "/path/p/p/p/p/p/a,b"}},
		{"path nested", "pathNested", `{"nested":[["a","b"],["c"]]}`, collectionRequest{URI: "/nested/a%20b%7Cc"}},

		{"query csv", "query", `{"csv":["a","b"]}`, collectionRequest{URI: "/query?csv=a,b"}},
		{"query ssv", "query", `{"ssv":["a","b"]}`, collectionRequest{URI: "/query?ssv=a%20b"}},
		{"query tsv", "query", `{"tsv":["a","b"]}`, collectionRequest{URI: "/query?tsv=a%09b"}},
		{"query pipes", "query", `{"pipes":["a","b"]}`, collectionRequest{URI: "/query?pipes=a%7Cb"}},
		{"query multi", "query", `{"multi":["a","b"]}`, collectionRequest{URI: "/query?multi=a&multi=b"}},
		{"query absent (path item)", "query", `{"absent":["a","b"]}`, collectionRequest{URI: "/query?absent=a,b"}},
		{"query tsv ($ref)", "query", `{"refTsv":["a","b"]}`, collectionRequest{URI: "/query?refTsv=a%09b"}},
		{"query nested", "query", `{"nested":[["a","b"],["c"]]}`, collectionRequest{URI: "/query?nested=a%7Cb,c"}},
		{"query nested multi", "query", `{"nestedMulti":[["a","b"],["c"]]}`, collectionRequest{URI: "/query?nestedMulti=a%09b&nestedMulti=c"}},
		{"query escapes delimiters in values", "query", `{"tsv":["a b","c,d"],"csv":["a,b"]}`, collectionRequest{URI: "/query?csv=a%2Cb&tsv=a%20b%09c%2Cd"}},

		{"header csv", "header", `{"X-Csv":["a","b"]}`, collectionRequest{URI: "/header", Headers: []string{"X-Csv: a,b"}}},
		{"header ssv", "header", `{"X-Ssv":["a","b"]}`, collectionRequest{URI: "/header", Headers: []string{"X-Ssv: a b"}}},
		{"header tsv", "header", `{"X-Tsv":["a","b"]}`, collectionRequest{URI: "/header", Headers: []string{"X-Tsv: a\tb"}}},
		{"header pipes", "header", `{"X-Pipes":["a","b"]}`, collectionRequest{URI: "/header", Headers: []string{"X-Pipes: a|b"}}},
		{"header multi", "header", `{"X-Multi":["a","b"]}`, collectionRequest{URI: "/header", Headers: []string{"X-Multi: a,b"}}},
		{"header absent (path item)", "header", `{"X-Absent":["a","b"]}`, collectionRequest{URI: "/header", Headers: []string{"X-Absent: a,b"}}},
		{"header nested", "header", `{"X-Nested":[["a","b"],["c"]]}`, collectionRequest{URI: "/header", Headers: []string{"X-Nested: a,b|c"}}},

		{"form csv", "form", `{"body":{"csv":["a","b"]}}`, collectionRequest{URI: "/form", Body: "csv=a,b"}},
		{"form ssv", "form", `{"body":{"ssv":["a","b"]}}`, collectionRequest{URI: "/form", Body: "ssv=a%20b"}},
		{"form tsv", "form", `{"body":{"tsv":["a","b"]}}`, collectionRequest{URI: "/form", Body: "tsv=a%09b"}},
		{"form pipes", "form", `{"body":{"pipes":["a","b"]}}`, collectionRequest{URI: "/form", Body: "pipes=a%7Cb"}},
		{"form multi", "form", `{"body":{"multi":["a","b"]}}`, collectionRequest{URI: "/form", Body: "multi=a&multi=b"}},
		{"form absent (path item)", "form", `{"body":{"absent":["a","b"]}}`, collectionRequest{URI: "/form", Body: "absent=a,b"}},
		{"form pipes ($ref)", "form", `{"body":{"refPipes":["a","b"]}}`, collectionRequest{URI: "/form", Body: "refPipes=a%7Cb"}},
		{"form nested", "form", `{"body":{"nested":[["a","b"],["c"]]}}`, collectionRequest{URI: "/form", Body: "nested=a%7Cb%20c"}},
		{"form nested multi", "form", `{"body":{"nestedMulti":[["a","b"],["c"]]}}`, collectionRequest{URI: "/form", Body: "nestedMulti=a,b&nestedMulti=c"}},
		{"form all", "form", `{"body":{"csv":["a","b"],"multi":["c","d"],"one":"x y","tsv":["e"]}}`, collectionRequest{URI: "/form", Body: "csv=a,b&multi=c&multi=d&one=x%20y&tsv=e"}},

		{"multipart csv", "multipart", `{"body":{"csv":["a","b"]}}`, collectionRequest{URI: "/multipart", Parts: parts("csv", "a,b")}},
		{"multipart ssv", "multipart", `{"body":{"ssv":["a","b"]}}`, collectionRequest{URI: "/multipart", Parts: parts("ssv", "a b")}},
		{"multipart tsv", "multipart", `{"body":{"tsv":["a","b"]}}`, collectionRequest{URI: "/multipart", Parts: parts("tsv", "a\tb")}},
		{"multipart pipes", "multipart", `{"body":{"pipes":["a","b"]}}`, collectionRequest{URI: "/multipart", Parts: parts("pipes", "a|b")}},
		{"multipart multi", "multipart", `{"body":{"multi":["a","b"]}}`, collectionRequest{URI: "/multipart", Parts: parts("multi", "a", "multi", "b")}},
		{"multipart absent (path item)", "multipart", `{"body":{"absent":["a","b"]}}`, collectionRequest{URI: "/multipart", Parts: parts("absent", "a,b")}},
		{"multipart pipes ($ref)", "multipart", `{"body":{"refPipes":["a","b"]}}`, collectionRequest{URI: "/multipart", Parts: parts("refPipes", "a|b")}},
		{"multipart nested", "multipart", `{"body":{"nested":[["a","b"],["c"]]}}`, collectionRequest{URI: "/multipart", Parts: parts("nested", "a|b c")}},
		{"multipart nested multi", "multipart", `{"body":{"nestedMulti":[["a","b"],["c"]]}}`, collectionRequest{URI: "/multipart", Parts: parts("nestedMulti", "a,b", "nestedMulti", "c")}},
	} {
		for _, cat := range []struct {
			name string
			c    *bridge.Catalog
		}{{"built", built}, {"snapshot", restored}} {
			rt := bridge.NewRuntime(cat.c)
			t.Run(tc.name+"/"+cat.name, func(t *testing.T) {
				out, err := rt.Call(t.Context(), &bridge.Call{Tool: tc.tool, Args: []byte(tc.args)})
				if err != nil {
					t.Fatal(err)
				}
				if out.Kind != bridge.OK {
					t.Fatalf("kind %v: %s", out.Kind, out.Result.Content[0].(*mcp.TextContent).Text)
				}
				mu.Lock()
				defer mu.Unlock()
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("%s %s: upstream received (-want +got):\n%s", tc.tool, tc.args, diff)
				}
			})
		}
	}
}

// TestCollectionFormatExtensionName: the loader marks what the request
// builder reads under one name.
func TestCollectionFormatExtensionName(t *testing.T) {
	if specloader.CollectionFormatExtension != request.CollectionFormatExtension {
		t.Errorf("specloader writes %q, bridge/request reads %q", specloader.CollectionFormatExtension, request.CollectionFormatExtension)
	}
}
