package bridge

import "testing"

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
