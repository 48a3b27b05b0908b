package specloader

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
