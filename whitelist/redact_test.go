package whitelist_test

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

// TestParseRedact checks redact: {allowKeys: [...]}: parsed onto the entry,
// copied to the selected operations (a tag's included), and every malformed
// form refused with its line.
func TestParseRedact(t *testing.T) {
	pol, err := whitelist.Parse(strings.NewReader(`tools:
  - operationId: createToken
    redact: {allowKeys: [token, api_key]}
  - tag: pet
    redact:
      allowKeys: [secret]
  - operationId: getInventory
`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&whitelist.Redact{AllowKeys: []string{"token", "api_key"}}, pol.Entries[0].Redact); diff != "" {
		t.Errorf("entry 0 (-want +got):\n%s", diff)
	}
	if pol.Entries[2].Redact != nil {
		t.Errorf("entry without redact: %+v", pol.Entries[2].Redact)
	}
	doc, err := openapi3.NewLoader().LoadFromFile("../testdata/specs/petstore.3.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pol.Entries[0].OperationID = "loginUser" // petstore has no createToken
	ops, err := pol.Select(doc)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, op := range ops {
		got[op.Op.OperationID] = op.RedactAllowKeys
	}
	if diff := cmp.Diff([]string{"token", "api_key"}, got["loginUser"]); diff != "" {
		t.Errorf("loginUser (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"secret"}, got["addPet"]); diff != "" {
		t.Errorf("addPet, through its tag (-want +got):\n%s", diff)
	}
	if got["getInventory"] != nil {
		t.Errorf("getInventory: %q; want nil", got["getInventory"])
	}

	for _, tc := range []struct{ yaml, want string }{
		{"redact: [token]", "line 3: redact must be a mapping"},
		{"redact: {allowKeys: token}", "line 3: redact.allowKeys must be a non-empty list"},
		{"redact: {allowKeys: []}", "line 3: redact.allowKeys must be a non-empty list"},
		{"redact: {allowKeys: [token, token]}", `line 3: redact.allowKeys lists "token" twice`},
		{"redact: {allowKeys: ['', x]}", "line 3: redact.allowKeys items must be non-empty"},
		{"redact: {allowKeys: [" + strings.Repeat("k", 64) + "]}", "is longer than 63 bytes"},
		{"redact: {allowkeys: [token]}", `unknown key "allowkeys"`},
	} {
		_, err := whitelist.Parse(strings.NewReader("tools:\n  - operationId: x\n    " + tc.yaml + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one containing %q", tc.yaml, err, tc.want)
		}
	}
}
