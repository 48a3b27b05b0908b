package specloader_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/mcpbridge/mcpbridge/specloader"
)

// TestCancelNamesCause: a load abandoned because the process is stopping
// says why (signal.NotifyContext's cause, "terminated signal received"),
// not "context canceled", whichever step it was in.
func TestCancelNamesCause(t *testing.T) {
	data, err := os.ReadFile("../testdata/specs/petstore.3.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("terminated signal received")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if _, err := specloader.LoadData(ctx, data, nil, specloader.Options{}); err == nil || !strings.Contains(err.Error(), cause.Error()) {
		t.Errorf("LoadData: %v, want an error naming %q", err, cause)
	}
	if _, err := specloader.Load(ctx, "../testdata/specs/petstore.3.0.yaml", specloader.Options{}); err == nil || !strings.Contains(err.Error(), cause.Error()) {
		t.Errorf("Load: %v, want an error naming %q", err, cause)
	}
}
