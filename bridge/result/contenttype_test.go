package result

import (
	"mime"
	"strings"
	"testing"
)

// TestParseContentType checks the shortcut for the usual JSON headers
// against mime.ParseMediaType, and that everything else still goes
// through it (multipart needs its boundary).
func TestParseContentType(t *testing.T) {
	for _, ct := range []string{
		"application/json", "application/json; charset=utf-8", "application/json;charset=utf-8", "application/json; charset=UTF-8",
		"Application/JSON", "application/problem+json", "text/plain; charset=utf-8", `multipart/mixed; boundary="b1"`,
		"", "application/", "garbage ;;",
	} {
		wantType, wantParams, _ := mime.ParseMediaType(ct)
		wantType = strings.ToLower(wantType)
		gotType, gotParams := parseContentType(ct)
		if gotType != wantType {
			t.Errorf("%q: media type %q, want %q", ct, gotType, wantType)
		}
		if strings.HasPrefix(wantType, "multipart/") && gotParams["boundary"] != wantParams["boundary"] {
			t.Errorf("%q: boundary %q, want %q", ct, gotParams["boundary"], wantParams["boundary"])
		}
	}
}
