package media_test

import (
	"mime"
	"testing"

	"github.com/mcpbridge/mcpbridge/bridge/media"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		ct   string
		want media.Kind
	}{
		{"application/json", media.JSON},
		{"Application/JSON; charset=utf-8", media.JSON},
		{"application/vnd.github+json", media.JSON},
		{"application/problem+json", media.JSON},
		{"text/json", media.JSON},
		{"application/x-ndjson", media.JSONLines},
		{"application/json-seq", media.JSONLines},
		{"application/xml", media.XML},
		{"text/xml", media.XML},
		{"application/atom+xml", media.XML},
		{"image/svg+xml", media.XML},
		{"application/x-www-form-urlencoded", media.Form},
		{"text/plain", media.Text},
		{"text/csv", media.Text},
		{"application/yaml", media.Text},
		{"application/vnd.api+yaml", media.Text},
		{"application/javascript", media.Text},
		{"multipart/mixed; boundary=x", media.Multipart},
		{"multipart/form-data", media.Multipart},
		{"image/png", media.Image},
		{"audio/mpeg", media.Audio},
		{"application/octet-stream", media.Binary},
		{"application/pdf", media.Binary},
		{"", media.Binary},
		{"not a type;;", media.Binary},
	} {
		if got := media.Classify(tc.ct); got != tc.want {
			t.Errorf("Classify(%q) = %d; want %d", tc.ct, got, tc.want)
		}
	}
	if !media.IsText("application/x-ndjson") || media.IsText("image/png") || !media.IsJSON("application/hal+json") {
		t.Error("IsText/IsJSON disagree with Classify")
	}
}

// TestType checks Type against mime.ParseMediaType, which it follows for
// every header it accepts (the bare lower-case types it answers without
// parsing included), and its tolerance for the rest.
func TestType(t *testing.T) {
	for _, ct := range []string{
		"application/json", "application/vnd.github.v3+json", "image/svg+xml", "text/plain", "application/x-ndjson", "audio/mp4a-latm",
		"Application/JSON", "application/json; charset=utf-8", " application/json", "text/plain;charset=UTF-8",
	} {
		want, _, err := mime.ParseMediaType(ct)
		if err != nil {
			t.Fatalf("%q: %v", ct, err)
		}
		if got := media.Type(ct); got != want {
			t.Errorf("Type(%q) = %q, want %q", ct, got, want)
		}
	}
	for ct, want := range map[string]string{"application/": "application/", "/json": "/json", "a/b/c": "a/b/c", "Text/Plain; x": "text/plain", "": ""} {
		if got := media.Type(ct); got != want {
			t.Errorf("Type(%q) = %q, want %q", ct, got, want)
		}
	}
}
