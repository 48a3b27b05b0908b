package bridge

import (
	"encoding/json"
	"testing"
)

// TestSafeCut: cut text loses its last word, the last run of token bytes
// when it has no spaces, and never ends inside a UTF-8 sequence. A token
// of a built-in pattern (ghp_ and 36 characters) cut after 7 characters
// matches no rule; the cut drops it.
func TestSafeCut(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a few words and half a tok", "a few words and half a"},
		{`{"items":[{"token":"ghp_abc1234`, `{"items":[{"token":"`},
		{"a=1&key=ab%2Bcd", "a=1&"},
		{"AAAAAAAAAAAAA", ""},
		{"naïve café\xc3", "naïve"},
		{"x=1&y=é\xc3", "x=1&y=é"},
	} {
		if got := string(safeCut([]byte(tc.in))); got != tc.want {
			t.Errorf("safeCut(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCompletePrefix(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"a":1,"b":[1,2,{"c":"x"},{"d":`, `{"a":1,"b":[1,2,{"c":"x"},{}]}`},
		{`{"a":"whole","b":"cut sho`, `{"a":"whole"}`},
		{`{"a":12`, `{}`},               // the number may have lost digits
		{`{"a":12,`, `{"a":12}`},        // the comma ends it
		{`{"a":true,"k"`, `{"a":true}`}, // a key without its value
		{`[{"a":[[`, `[{"a":[[]]}]`},
		{`{`, `{}`},
		{`{"a":{"b":null}}`, `{"a":{"b":null}}`},
		{`{"a":"\u00e9\"x","b`, `{"a":"\u00e9\"x"}`}, // the bytes as sent
	} {
		got, ok := completePrefix([]byte(tc.in))
		if !ok || string(got) != tc.want {
			t.Errorf("completePrefix(%s) = %s, %v; want %s", tc.in, got, ok, tc.want)
		}
		if ok && !json.Valid(got) {
			t.Errorf("completePrefix(%s) = %s: not JSON", tc.in, got)
		}
	}
	for _, in := range []string{``, `"str`, `12`, `nul`, `}`} {
		if got, ok := completePrefix([]byte(in)); ok {
			t.Errorf("completePrefix(%q) = %s; want none", in, got)
		}
	}
}
