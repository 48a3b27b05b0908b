package specloader

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"
)

// probeResult is what the first look at a document tells.
type probeResult struct {
	swagger bool   // Swagger 2.0, to convert
	version string // the declared version
	// json is the document split at its root, set for an OpenAPI 3 JSON
	// document so that decodeJSON can take over from there.
	json *jsonDoc
}

// probe detects the format (first non-space byte '{' means JSON, anything
// else YAML) and the declared version, and rejects what is neither Swagger
// 2.0 nor OpenAPI 3.0-3.2.
func probe(body []byte) (probeResult, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return probeResult{}, errors.New("document is empty")
	}
	if !looksLikeJSON(body) {
		return probeYAML(body)
	}
	// The split checks the text as json.Valid would, in the same pass.
	jd, err := splitJSON(body)
	if err != nil {
		// Not retried as YAML, although a YAML flow mapping starts with '{'
		// too: a JSON document with a trailing comma is far more common, and
		// YAML would accept it. encoding/json words the error.
		jerr := json.Unmarshal(body, new(json.RawMessage))
		var se *json.SyntaxError
		if errors.As(jerr, &se) {
			line, col := lineCol(body, se.Offset)
			return probeResult{}, fmt.Errorf("parsing JSON at line %d, column %d: %w", line, col, jerr)
		}
		if jerr != nil {
			return probeResult{}, fmt.Errorf("parsing JSON: %w", jerr)
		}
		return probeResult{}, fmt.Errorf("parsing JSON: %w", err)
	}
	return probeJSON(jd)
}

func trimBOM(data []byte) []byte {
	return bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
}

func looksLikeJSON(body []byte) bool {
	body = bytes.TrimLeft(body, " \t\r\n")
	return len(body) > 0 && body[0] == '{'
}

// lineCol converts a byte offset (as in json.SyntaxError, which counts the
// bytes read before the error) into a 1-based line and column.
func lineCol(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset < 1 {
		offset = 1
	}
	before := data[:offset-1]
	line = bytes.Count(before, []byte("\n")) + 1
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}

func probeJSON(jd *jsonDoc) (probeResult, error) {
	var sw, oa *member
	for i, m := range jd.top {
		switch m.key {
		case "swagger":
			sw = &jd.top[i]
		case "openapi":
			oa = &jd.top[i]
		}
	}
	m := oa
	if m == nil {
		m = sw
	}
	if m == nil {
		return probeResult{}, errNoVersion
	}
	var v string
	raw := jd.data[m.val.start:m.val.end]
	if err := json.Unmarshal(raw, &v); err != nil {
		return probeResult{}, fmt.Errorf("field %q must be a string, got %s", m.key, raw)
	}
	p, err := checkVersion(sw != nil, oa != nil, v)
	if err == nil && !p.swagger {
		p.json = jd
	}
	return p, err
}

var errNoVersion = errors.New(`no "openapi" or "swagger" field at the top level: not an OpenAPI document`)

// probeYAML finds the version by a scan of top-level lines, which costs
// nothing next to a parse; a document it cannot read that way (flow style,
// an odd layout, bad syntax) is parsed for real.
func probeYAML(body []byte) (probeResult, error) {
	if err := checkYAMLAliases(body); err != nil {
		return probeResult{}, err
	}
	openapi, swagger, ok := scanYAMLVersion(body)
	if !ok {
		var doc yaml.Node
		if err := yaml.Unmarshal(body, &doc); err != nil {
			return probeResult{}, fmt.Errorf("parsing YAML: %w", err)
		}
		if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			return probeResult{}, errNoVersion
		}
		for _, key := range []string{"openapi", "swagger"} {
			v := mappingValue(doc.Content[0], key)
			if v == nil {
				continue
			}
			if v.Kind != yaml.ScalarNode {
				return probeResult{}, fmt.Errorf("field %q must be a string", key)
			}
			if key == "openapi" {
				openapi = &v.Value
			} else {
				swagger = &v.Value
			}
		}
	}
	switch {
	case openapi != nil:
		return checkVersion(swagger != nil, true, *openapi)
	case swagger != nil:
		return checkVersion(true, false, *swagger)
	default:
		return probeResult{}, errNoVersion
	}
}

// scanYAMLVersion looks for `openapi:` and `swagger:` keys at column 0 of the
// first YAML document, where only top-level keys can start in block style.
// ok is false when it found neither or a value it cannot read plainly.
func scanYAMLVersion(body []byte) (openapi, swagger *string, ok bool) {
	content := false
	for len(body) > 0 {
		var line []byte
		line, body, _ = bytes.Cut(body, []byte("\n"))
		line = bytes.TrimRight(line, "\r")
		if len(line) == 0 || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '%' {
			continue
		}
		if bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("...")) {
			if content {
				break // a second document
			}
			continue
		}
		content = true
		key, value, found := bytes.Cut(line, []byte(":"))
		if !found {
			continue
		}
		k := strings.Trim(string(key), `"'`)
		if k != "openapi" && k != "swagger" {
			continue
		}
		v, plain := yamlScalar(value)
		if !plain {
			return nil, nil, false
		}
		if k == "openapi" {
			openapi = &v
		} else {
			swagger = &v
		}
	}
	return openapi, swagger, openapi != nil || swagger != nil
}

// yamlScalar reads the simple scalar after a key: plain, or quoted without
// escapes, with an optional trailing comment.
func yamlScalar(b []byte) (string, bool) {
	s := strings.TrimSpace(string(b))
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	}
	if s == "" || strings.ContainsAny(s, `"'\{}[]&*!|>`) {
		return "", false
	}
	return s, true
}

// checkVersion accepts Swagger "2.0" and OpenAPI 3.0.x, 3.1.x and 3.2.x,
// the versions kin-openapi models.
func checkVersion(hasSwagger, hasOpenAPI bool, v string) (probeResult, error) {
	switch {
	case hasSwagger && hasOpenAPI:
		return probeResult{}, errors.New(`both "openapi" and "swagger" fields are set: cannot tell the version`)
	case hasSwagger:
		if v != "2.0" {
			return probeResult{}, fmt.Errorf(`unsupported Swagger version %q (want "2.0")`, v)
		}
		return probeResult{swagger: true, version: v}, nil
	}
	parts := strings.Split(v, ".")
	ok := len(parts) >= 2 && len(parts) <= 3 && parts[0] == "3"
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		ok = ok && err == nil && n >= 0 && (i != 1 || n <= 2) && p == strconv.Itoa(n)
	}
	if !ok {
		return probeResult{}, fmt.Errorf("unsupported OpenAPI version %q (want 3.0.x, 3.1.x or 3.2.x)", v)
	}
	return probeResult{version: v}, nil
}

// maxYAMLAliasNodes bounds the nodes a YAML document's aliases add when
// expanded (beyond the document's own nodes). go-yaml's own alias limit is per decoder, and
// kin-openapi decodes each schema with a decoder of its own, so a few lines
// of nested anchors (8 aliases of 8 aliases, 8 levels deep) used to take
// tens of GB before any limit applied.
const maxYAMLAliasNodes = 1_000_000

// checkYAMLAliases refuses a YAML document whose aliases add more than
// maxYAMLAliasNodes. Documents without an alias are not parsed here.
func checkYAMLAliases(body []byte) error {
	if !bytes.Contains(body, []byte("*")) || !bytes.Contains(body, []byte("&")) {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return nil // the parse that follows reports it
	}
	memo := map[*yaml.Node]int{}
	var size func(n *yaml.Node, depth int) int
	size = func(n *yaml.Node, depth int) int {
		if n == nil || depth > 10_000 {
			return 1
		}
		if v, ok := memo[n]; ok {
			return v
		}
		memo[n] = 1 // an alias cycle counts once
		total := 1
		if n.Kind == yaml.AliasNode {
			total += size(n.Alias, depth+1)
		}
		for _, c := range n.Content {
			total += size(c, depth+1)
			if total > len(memo)+maxYAMLAliasNodes {
				break
			}
		}
		memo[n] = total
		return total
	}
	if n := size(&doc, 0); n > len(memo)+maxYAMLAliasNodes {
		return fmt.Errorf("parsing YAML: its aliases expand to more than %d nodes (a YAML bomb?)", maxYAMLAliasNodes)
	}
	return nil
}
