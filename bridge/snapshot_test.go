package bridge_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// TestSnapshotRoundTrip checks that a bridge rebuilt from its snapshot
// lists the same tools and sends the same requests as the original.
func TestSnapshotRoundTrip(t *testing.T) {
	var got []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ct := r.Header.Get("Content-Type")
		if mt, params, err := mime.ParseMediaType(ct); err == nil && mt == "multipart/form-data" {
			// The boundary is random: compare the parts instead.
			body = bytes.ReplaceAll(body, []byte(params["boundary"]), []byte("BOUNDARY"))
			ct = mt
		}
		got = append(got, r.Method+" "+r.RequestURI+" "+ct+" "+string(body))
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":1,"name":"rex"}`)
	}))
	defer up.Close()
	ops := allOperations(t, "../testdata/specs/petstore.3.0.yaml")
	opts := bridge.Options{BaseURL: up.URL + "/v3", Client: up.Client(), SpecTitle: "Petstore"}
	orig, err := bridge.New(ops, opts)
	if err != nil {
		t.Fatal(err)
	}
	data, err := orig.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	restored, err := bridge.NewFromSnapshot(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	toJSON := func(b *bridge.Catalog) string {
		raw, err := json.Marshal(b.OperationDefs())
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	if diff := cmp.Diff(toJSON(orig), toJSON(restored)); diff != "" {
		t.Errorf("tools differ after a snapshot round trip (-orig +restored):\n%s", diff)
	}
	if diff := cmp.Diff(orig.Skipped(), restored.Skipped()); diff != "" {
		t.Errorf("skipped differ:\n%s", diff)
	}

	calls := []struct {
		tool string
		args map[string]any
	}{
		{"getPetById", map[string]any{"petId": 7}},
		{"findPetsByStatus", map[string]any{"status": []any{"sold"}}},
		{"updatePetWithForm", map[string]any{"petId": 7, "body": map[string]any{"name": "rex", "status": "x"}}},
		{"addPet", map[string]any{"body": map[string]any{"name": "rex", "photoUrls": []any{"u"}}}},
		{"uploadFile", map[string]any{"petId": 7, "body": map[string]any{"file": "aGVsbG8=", "additionalMetadata": "m"}}},
	}
	run := func(b *bridge.Catalog) []string {
		got = nil
		cs := connect(t, b)
		for _, c := range calls {
			r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil || r.IsError {
				t.Fatalf("%s: err=%v result=%+v", c.tool, err, r)
			}
		}
		return got
	}
	want := run(orig)
	if len(want) != len(calls) {
		t.Fatalf("upstream saw %d requests, want %d", len(want), len(calls))
	}
	if diff := cmp.Diff(want, run(restored)); diff != "" {
		t.Errorf("requests differ after a snapshot round trip (-orig +restored):\n%s", diff)
	}
}

func TestSnapshotRejectsGarbage(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("not a snapshot"), {0x1, 0x2, 0x3}} {
		if _, err := bridge.NewFromSnapshot(data, bridge.Options{BaseURL: "http://x"}); err == nil {
			t.Errorf("NewFromSnapshot(%q) succeeded", data)
		}
	}
}

// TestSnapshotSchemasInList: with an encoded tools/list, a snapshot keeps
// each schema found there as a place in the list, not as a copy, and the
// catalog restored from it has the same schemas and list.
func TestSnapshotSchemasInList(t *testing.T) {
	ops := allOperations(t, "../testdata/specs/petstore.3.0.yaml")
	opts := bridge.Options{BaseURL: "http://127.0.0.1:1/v3"}
	orig, err := bridge.New(ops, opts)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := orig.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// The list as a server encodes it: the tools by name, schemas as they are.
	defs := append([]*mcp.Tool(nil), orig.OperationDefs()...)
	slices.SortFunc(defs, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	var names []string
	schemaBytes := 0
	for _, d := range defs {
		names = append(names, d.Name)
		schemaBytes += len(d.InputSchema.(json.RawMessage))
		if d.OutputSchema != nil {
			schemaBytes += len(d.OutputSchema.(json.RawMessage))
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(defs); err != nil {
		t.Fatal(err)
	}
	list := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	orig.SetEncodedList(&bridge.EncodedList{Names: names, JSON: list})
	data, err := orig.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if got, most := len(data)-len(list), len(bare)-schemaBytes+64*len(defs); got > most {
		t.Errorf("snapshot without its list is %d bytes, want at most %d (%d without a list, %d of them schemas)", got, most, len(bare), schemaBytes)
	}
	restored, err := bridge.NewFromSnapshot(data, opts)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(orig.OperationDefs())
	got, _ := json.Marshal(restored.OperationDefs())
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("tools differ after a round trip through the list (-orig +restored):\n%s", diff)
	}
	if l := restored.EncodedList(); l == nil || !bytes.Equal(l.JSON, list) || !slices.Equal(l.Names, names) {
		t.Errorf("restored list differs from the one snapshotted")
	}
	// A snapshot cut short, or with bytes past its list, is refused.
	for _, bad := range [][]byte{data[:len(data)-1], append(slices.Clip(data), ' ')} {
		if _, err := bridge.NewFromSnapshot(bad, opts); err == nil {
			t.Errorf("NewFromSnapshot accepted a snapshot of %d bytes (want %d)", len(bad), len(data))
		}
	}
}

// allOperations loads the spec at path and selects every operation.
func allOperations(t testing.TB, path string) []whitelist.Operation {
	t.Helper()
	res, err := specloader.Load(t.Context(), path, specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}
