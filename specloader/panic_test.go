package specloader

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// panicky stands in for a kin-openapi type whose decoder panics.
type panicky struct{}

func (*panicky) UnmarshalYAML(*yaml.Node) error { panic("boom") }

// TestPanicsBecomeErrors: a panic in a decode worker, where the deferred
// recover of Load cannot reach, and one on the caller's goroutine, both come
// back as errors that say where.
func TestPanicsBecomeErrors(t *testing.T) {
	data := []byte(`{"x": {}}`)
	jobs := jobList{{at: "/x", val: span{start: 6, end: 8, line: 1}, dst: &panicky{}}}
	err := jobs.run(t.Context(), data)
	if err == nil || !strings.Contains(err.Error(), "decoding /x: internal error") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("jobs.run with a panicking decoder: %v; want an internal error naming /x", err)
	}

	err = func() (err error) {
		name := "spec.yaml"
		defer recoverPanic(&err, &name)
		panic("bang")
	}()
	if err == nil || !strings.Contains(err.Error(), "loading spec spec.yaml: internal error") {
		t.Errorf("recoverPanic: %v; want an internal error naming the spec", err)
	}
}
