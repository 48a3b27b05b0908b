package bridge_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// TestNewContextCanceled: building tens of thousands of tools takes
// seconds; a SIGTERM meanwhile must stop it, not wait for the end.
func TestNewContextCanceled(t *testing.T) {
	res, err := specloader.Load(context.Background(), "../testdata/specs/petstore.3.0.yaml", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cause := errors.New("terminated signal received")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	cat, err := bridge.NewContext(ctx, ops, bridge.Options{BaseURL: "http://127.0.0.1:1", Spec: res.Doc})
	if !errors.Is(err, cause) || cat != nil {
		t.Errorf("NewContext with an ended context: %v, %v; want the cause", cat, err)
	}
}
