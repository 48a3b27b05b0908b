package bridge_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// TestResourcesSurviveSnapshot: a catalog restored from the tool cache
// serves the same resources, templates and whitelisted spec.
func TestResourcesSurviveSnapshot(t *testing.T) {
	res, err := specloader.Load(context.Background(), "../testdata/specs/petstore.3.0.yaml", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := whitelist.Parse(strings.NewReader(`tools:
  - operationId: findPetsByStatus
  - operationId: getPetById
    resource:
      uri: "petstore://pets/{petId}"
      name: pet
      mimeType: application/json
      complete: {petId: {tool: findPetsByStatus, field: id}}
  - operationId: getInventory
    resource: {uri: "petstore://inventory"}
`))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := pol.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	opts := bridge.Options{BaseURL: "http://127.0.0.1:1", Spec: res.Doc}
	cat, err := bridge.New(ops, opts)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cat.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	opts.Spec = nil
	back, err := bridge.NewFromSnapshot(snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	describe := func(c *bridge.Catalog) []string {
		var out []string
		for _, r := range c.Resources() {
			d := r.URI() + " → " + r.Tool() + " " + r.MIMEType()
			if r.Template() {
				enum, list, _ := r.Completions("petId")
				d += " template"
				if list != nil {
					d += " complete:" + list.Tool + "." + list.Field
				}
				d += " enum:" + strings.Join(enum, ",")
			}
			out = append(out, d)
		}
		return out
	}
	want := []string{"petstore://pets/{petId} → getPetById application/json template complete:findPetsByStatus.id enum:", "petstore://inventory → getInventory "}
	if diff := cmp.Diff(want, describe(cat)); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(describe(cat), describe(back)); diff != "" {
		t.Errorf("resources after the snapshot (-built +restored):\n%s", diff)
	}
	if len(cat.Spec()) == 0 || !bytes.Equal(cat.Spec(), back.Spec()) {
		t.Errorf("the whitelisted spec did not survive the snapshot (%d bytes, then %d)", len(cat.Spec()), len(back.Spec()))
	}
	for _, path := range []string{`"/pet/{petId}"`, `"/pet/findByStatus"`, `"/store/inventory"`} {
		if !bytes.Contains(cat.Spec(), []byte(path)) {
			t.Errorf("the whitelisted spec lacks %s", path)
		}
	}
	if bytes.Contains(cat.Spec(), []byte(`"/user/login"`)) {
		t.Error("the whitelisted spec has an operation the whitelist does not select")
	}
}

// TestDeferredSpec: with Options.DeferSpec the catalog reports
// openapi://spec at once and makes it on first use, the same bytes as
// made at New, once, whoever asks first (concurrent readers, Snapshot).
func TestDeferredSpec(t *testing.T) {
	res, err := specloader.Load(context.Background(), "../testdata/specs/petstore.3.0.yaml", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	now, err := bridge.New(ops, bridge.Options{BaseURL: "http://127.0.0.1:1", Spec: res.Doc})
	if err != nil {
		t.Fatal(err)
	}
	later, err := bridge.New(ops, bridge.Options{BaseURL: "http://127.0.0.1:1", Spec: res.Doc, DeferSpec: true})
	if err != nil {
		t.Fatal(err)
	}
	if !later.HasSpec() {
		t.Fatal("HasSpec is false before the deferred spec is made")
	}
	got := make(chan []byte, 4)
	for range 3 {
		go func() { got <- later.Spec() }()
	}
	go func() {
		snap, err := later.Snapshot()
		if err != nil {
			t.Error(err)
		}
		back, err := bridge.NewFromSnapshot(snap, bridge.Options{BaseURL: "http://127.0.0.1:1"})
		if err != nil {
			t.Error(err)
			got <- nil
			return
		}
		got <- back.Spec()
	}()
	for range 4 {
		if b := <-got; len(now.Spec()) == 0 || !bytes.Equal(b, now.Spec()) {
			t.Errorf("deferred spec: %d bytes; made at New: %d", len(b), len(now.Spec()))
		}
	}
	if !later.HasSpec() {
		t.Error("HasSpec is false once made")
	}
	// Without the document there is nothing to defer.
	none, err := bridge.New(ops, bridge.Options{BaseURL: "http://127.0.0.1:1", DeferSpec: true})
	if err != nil {
		t.Fatal(err)
	}
	if none.HasSpec() || none.Spec() != nil {
		t.Error("a catalog without the document serves openapi://spec")
	}
}

// TestResourceArgsNonFinite: a template variable of a number parameter is
// refused as not a valid number when it reads NaN or Inf (which ParseFloat
// accepts but JSON cannot carry), like any other bad number, not reported
// as a failure to encode the arguments.
func TestResourceArgsNonFinite(t *testing.T) {
	spec := t.TempDir() + "/score.yaml"
	if err := os.WriteFile(spec, []byte(`openapi: 3.0.3
info: {title: score, version: "1"}
paths:
  /score/{v}:
    get:
      operationId: getScore
      parameters: [{name: v, in: path, required: true, schema: {type: number}}]
      responses: {"200": {description: ok}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := specloader.Load(t.Context(), spec, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := whitelist.Parse(strings.NewReader("tools:\n  - operationId: getScore\n    resource: {uri: \"score://{v}\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := pol.Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	r, ok := cat.Resource("score://{v}")
	if !ok {
		t.Fatal("no resource score://{v}")
	}
	if args, err := r.Args("score://1.5e3"); err != nil || string(args) != `{"v":1500}` {
		t.Errorf("score://1.5e3: %s, %v", args, err)
	}
	for _, v := range []string{"NaN", "Inf", "-Infinity", "1e999"} {
		_, err := r.Args("score://" + v)
		var argErr *bridge.ArgumentError
		if !errors.As(err, &argErr) || !strings.Contains(err.Error(), "is not a valid number") {
			t.Errorf("score://%s: %v; want an argument error, not a valid number", v, err)
		}
	}
}
