package specloader

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRefDocumentsCapped: a load reads at most maxRefDocuments documents
// for $refs, so that Options.Timeout per fetch bounds the whole load.
func TestRefDocumentsCapped(t *testing.T) {
	dir := t.TempDir()
	s, err := newSession(t.Context(), fileURL(filepath.Join(dir, "openapi.yaml")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.refs = make([]Ref, maxRefDocuments)
	_, err = s.readRef(nil, fileURL(filepath.Join(dir, "one-more.yaml")))
	if err == nil || !strings.Contains(err.Error(), "more than 1000 documents") {
		t.Errorf("reading document %d: %v; want it refused", maxRefDocuments+1, err)
	}
}
