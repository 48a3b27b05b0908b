package specloader

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestValidateAbandoned: a validation whose context ends returns at once
// (kin-openapi's Validate does not watch the context; on a large spec it
// ran for minutes after the client had gone), reporting nothing in
// lenient mode.
func TestValidateAbandoned(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"big","version":"1"},"paths":{},"components":{"schemas":{`)
	for i := range 12000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"S%d":{"type":"object","properties":{"a":{"type":"string","pattern":"^[a-z]+$"},"b":{"type":"array","items":{"type":"integer","minimum":1}},"c":{"type":"object","additionalProperties":{"type":"number"}}}}`, i)
	}
	b.WriteString(`}}}`)
	res, err := LoadData(t.Context(), []byte(b.String()), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := validate(t.Context(), res.Doc, false); err != nil {
		t.Fatal(err)
	}
	whole := time.Since(start)
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the client is gone before validation starts
	start = time.Now()
	w, err := validate(ctx, res.Doc, false)
	took := time.Since(start)
	if err != nil || w != nil {
		t.Errorf("abandoned validation: %v, %v; want nothing", w, err)
	}
	if took > whole/4 {
		t.Errorf("abandoned after %v; the whole validation takes %v", took, whole)
	}
	if _, err := validate(ctx, res.Doc, true); err == nil || !strings.Contains(err.Error(), "abandoned") {
		t.Errorf("strict validation with an ended context: %v", err)
	}
}
