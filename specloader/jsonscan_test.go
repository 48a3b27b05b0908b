package specloader

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// TestNodeMatchesGoYAML holds the JSON scanner to its promise: the tree it
// builds is the one go-yaml builds from the same text, node for node.
func TestNodeMatchesGoYAML(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range append(files, "../testdata/specs/xkcd.3.0.json", "../testdata/specs/petstore.3.1.json") {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(data) {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			if diff := compareWithGoYAML(data); diff != "" {
				t.Error(diff)
			}
		})
	}
}

func FuzzNode(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":[]}`, `{"a":"\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t"}`, `{"n":[0,-0,1.5,-2e-3,1E400,12345678901234567890,18446744073709551616]}`,
		`{"a":{"b":{"c":[null,true,false,{}]}}}`, "{\n\t\"x\" :\r\n 1 }", `{"k\"ey":"v","k":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) || !looksLikeJSON(data) {
			return
		}
		if diff := compareWithGoYAML(data); diff != "" {
			t.Error(diff)
		}
	})
}

// compareWithGoYAML returns how the scanner's tree for data differs from
// go-yaml's, "" when it does not or when go-yaml refuses the text (YAML is
// stricter than JSON in corners, such as keys over 1024 characters).
func compareWithGoYAML(data []byte) string {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil || len(doc.Content) != 1 {
		return ""
	}
	got, err := newCursor(data, span{end: len(data), line: 1}).node(0)
	if err != nil {
		return fmt.Sprintf("node: %v", err)
	}
	return diffNodes("", doc.Content[0], got)
}

func diffNodes(at string, want, got *yaml.Node) string {
	if want.Kind != got.Kind || want.Tag != got.Tag || want.Value != got.Value || want.Style != got.Style ||
		want.Line != got.Line || len(want.Content) != len(got.Content) {
		return fmt.Sprintf("at %q: go-yaml {kind %v tag %s value %q style %v line %d, %d children}, scanner {kind %v tag %s value %q style %v line %d, %d children}",
			at, want.Kind, want.Tag, want.Value, want.Style, want.Line, len(want.Content),
			got.Kind, got.Tag, got.Value, got.Style, got.Line, len(got.Content))
	}
	for i := range want.Content {
		if d := diffNodes(fmt.Sprintf("%s/%d", at, i), want.Content[i], got.Content[i]); d != "" {
			return d
		}
	}
	return ""
}

// BenchmarkSplitGitHub is the one pass over the text that checks that
// GitHub's 13 MB spec is JSON and indexes its components and paths.
func BenchmarkSplitGitHub(b *testing.B) {
	data, err := os.ReadFile("../testdata/specs/github-api.3.0.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := splitJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkJSONValidGitHub is encoding/json's check of the same text, for
// comparison.
func BenchmarkJSONValidGitHub(b *testing.B) {
	data, err := os.ReadFile("../testdata/specs/github-api.3.0.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if !json.Valid(data) {
			b.Fatal("invalid")
		}
	}
}

// splitCases are texts on the edges of JSON, for FuzzSplitJSON's seeds and
// TestSplitJSONMatchesValid. Each starts with '{', as splitJSON requires.
func splitCases() []string {
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	cases := []string{
		`{}`, `{ }`, "{\r\n\t}", `{} `, `{}x`, `{},`, `{"a":1}`, `{"a":1,}`, `{"a" 1}`, `{"a":}`, `{a:1}`, `{"a":1 "b":2}`,
		`{"a":[]}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":[1 2]}`, `{"a":{"b":1,}}`, `{"a":{}}`, `{"a":{"b"}}`, `{"a":[}`, `{"a":{]}`,
		`{"a":0}`, `{"a":-0}`, `{"a":01}`, `{"a":-01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1.5}`, `{"a":-}`, `{"a":+1}`,
		`{"a":1e}`, `{"a":1e+}`, `{"a":1E+5}`, `{"a":-0.0e-0}`, `{"a":1e5.0}`, `{"a":0x10}`, `{"a":Infinity}`, `{"a":NaN}`,
		`{"a":true}`, `{"a":tru}`, `{"a":truex}`, `{"a":false}`, `{"a":null}`, `{"a":nul}`, `{"a":None}`,
		`{"a":"\/\"\\\b\f\n\r\t\u00e9\ud83d\ude00"}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, `{"a":"\'"}`,
		"{\"a\":\"\x01\"}", "{\"a\":\"\x1f\"}", "{\"a\":\"\x7f\"}", "{\"a\":\"tab\there\"}", "{\"a\":\"\xff\xfe\"}",
		"{\"k\x00\":1}", `{"a":"unterminated}`, `{"a":"x\"}`, `{"a":"x\\"}`, `{"a":"x\\\"}`, "{\"a\":1}\f",
		"{\"a\":\v1}", "{\"a\":\u00a01}", `{"a":"ëèê 日本 ` + strings.Repeat("long string ", 20) + `"}`,
		`{"paths":{"/a":{"get":{"operationId":1,"tags":[1,"x",{},[],null]},"put":[],"$ref":"#/x"},"x-e":1},"components":{"schemas":{"A":{}},"x":1}}`,
		`{"paths":{"/a":{"get":{"tags":[1,]}}}}`, `{"paths":{"/a":{"get":{"operationId":01}}}}`, `{"paths":{"/a":{"get":{"tags":[tru]}}}}`,
		`{"paths":{"/a":{"get":{"tags":"x"}}}}`, `{"paths":{"/a":{"get":}}}`, `{"paths":[1,}`, `{"components":{"schemas":{"A":}}}`,
		`{"components":{"schemas":[]},"paths":null}`, `{"components":{"schemas":{"A":{"b":[1,2,}}}}}`, `{"paths":{"/a":{"get":{"tags":["a"` + "\x02" + `"]}}}}`,
		`{"a":` + nest("[", "]", maxDepth-1) + `}`,
		`{"a":` + nest("[", "]", maxDepth) + `}`,
		`{"a":` + strings.Repeat(`{"b":`, maxDepth-1) + "1" + strings.Repeat("}", maxDepth-1) + "}",
		`{"a":` + strings.Repeat(`{"b":`, maxDepth) + "1" + strings.Repeat("}", maxDepth) + "}",
		`{"paths":{"/a":{"get":{"tags":` + nest("[", "]", maxDepth-4) + `}}}}`,
		`{"paths":{"/a":{"get":{"tags":` + nest("[", "]", maxDepth-3) + `}}}}`,
		`{"components":{"schemas":{"A":` + nest("[", "]", maxDepth-3) + `}}}`,
		`{"components":{"schemas":{"A":` + nest("[", "]", maxDepth-2) + `}}}`,
	}
	return cases
}

// TestSplitJSONMatchesValid checks the split's verdict on texts on the
// edges of JSON against json.Valid's.
func TestSplitJSONMatchesValid(t *testing.T) {
	for _, s := range splitCases() {
		_, err := splitJSON([]byte(s))
		if valid := json.Valid([]byte(s)); (err == nil) != valid {
			t.Errorf("splitJSON(%.80q): error %v; json.Valid: %v", s, err, valid)
		}
	}
}

// FuzzSplitJSON holds the split to json.Valid's verdict on any text that
// starts with '{'.
func FuzzSplitJSON(f *testing.F) {
	for _, s := range splitCases() {
		f.Add([]byte(s))
	}
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range append(files, "../testdata/specs/xkcd.3.0.json", "../testdata/specs/petstore.3.1.json") {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !looksLikeJSON(data) {
			return
		}
		_, err := splitJSON(data)
		if valid := json.Valid(data); (err == nil) != valid {
			t.Errorf("splitJSON: error %v; json.Valid: %v", err, valid)
		}
	})
}
