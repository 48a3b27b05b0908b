package specloader

import (
	"strings"
	"testing"
)

// TestProbeYAMLAliasBomb: nested anchors whose aliases expand to 8^8 schemas
// are refused before kin-openapi decodes them (each SchemaRef with a decoder
// of its own, which defeats go-yaml's alias limit: tens of GB).
func TestProbeYAMLAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("openapi: 3.0.3\ninfo: {title: t, version: \"1\"}\npaths: {}\ncomponents:\n  schemas:\n")
	b.WriteString("    A: &A {type: object, properties: {a: {type: string}, b: {type: string}}}\n")
	prev := "A"
	for _, name := range []string{"B", "C", "D", "E", "F", "G", "H", "I"} {
		b.WriteString("    " + name + ": &" + name + " {type: object, properties: {")
		for i, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k + ": *" + prev)
		}
		b.WriteString("}}\n")
		prev = name
	}
	_, err := probeYAML([]byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "aliases expand") {
		t.Fatalf("probeYAML of an alias bomb: %v, want an error about aliases", err)
	}
	if _, err := probeYAML([]byte("openapi: 3.0.3\nx-a: &a {k: v}\nx-b: *a\npaths: {}\n")); err != nil {
		t.Fatalf("probeYAML of a document with a small alias: %v", err)
	}
}
