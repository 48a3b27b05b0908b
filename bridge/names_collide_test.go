package bridge_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// TestDerivedNamesCollide: operations whose derived names collide ("/jobs"
// and "/jobs/", "/users" and "/users/~", an operationId the spec repeats)
// are all served, the later ones with a suffix, in the same order on every
// build; names the whitelist sets still win, and two of them colliding is
// still an error.
func TestDerivedNamesCollide(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: collide, version: "1"}
paths:
  /jobs: {get: {responses: {"200": {description: ok}}}}
  /jobs/: {get: {responses: {"200": {description: ok}}}}
  /users: {get: {operationId: listUsers, responses: {"200": {description: ok}}}}
  /users/~: {get: {operationId: listUsers, responses: {"200": {description: ok}}}}
  /other: {get: {operationId: get_jobs_2, responses: {"200": {description: ok}}}}
`
	res, err := specloader.LoadData(t.Context(), []byte(spec), nil, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	names := func(policy string) ([]string, error) {
		wl := whitelist.All()
		if policy != "" {
			if wl, err = whitelist.Parse(strings.NewReader(policy)); err != nil {
				t.Fatal(err)
			}
		}
		ops, err := wl.Select(res.Doc)
		if err != nil {
			t.Fatal(err)
		}
		c, err := bridge.New(ops, bridge.Options{BaseURL: "http://127.0.0.1:9"})
		if err != nil {
			return nil, err
		}
		var got []string
		for _, d := range c.OperationDefs() {
			got = append(got, d.Name)
		}
		return got, nil
	}
	got, err := names("")
	if err != nil {
		t.Fatalf("--all-operations: %v", err)
	}
	want := []string{"get_jobs", "get_jobs_3", "get_jobs_2", "listUsers", "listUsers_2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("derived names (-want +got):\n%s", diff)
	}
	again, _ := names("")
	if diff := cmp.Diff(got, again); diff != "" {
		t.Errorf("a second build names them differently (-first +second):\n%s", diff)
	}
	// A whitelist name takes precedence over a derived one.
	got, err = names("tools:\n  - path: /jobs/\n    method: GET\n    name: get_jobs\n  - path: /jobs\n    method: GET\n")
	if err != nil {
		t.Fatalf("whitelist name: %v", err)
	}
	if diff := cmp.Diff([]string{"get_jobs_2", "get_jobs"}, got); diff != "" {
		t.Errorf("whitelist name first (-want +got):\n%s", diff)
	}
	// Two whitelist names that become the same tool name are an error.
	_, err = names("tools:\n  - path: /jobs\n    method: GET\n    name: \"a b\"\n  - path: /users\n    method: GET\n    name: a_b\n")
	if err == nil || !strings.Contains(err.Error(), `tool name "a_b" is used by both`) {
		t.Errorf("two whitelist names alike: %v", err)
	}
}
