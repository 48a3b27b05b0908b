package bridge_test

import (
	"strings"
	"testing"
)

// TestPercentEncodedQueryPairsMasked: a credential in a URL's query is
// masked when its pair is percent-encoded too: a name with an escaped
// byte (?api%5Fkey=, ?%74oken=), an escaped '=', or a callback URL quoted
// in another URL's query with every delimiter escaped. All of these
// reached the agent as they were.
func TestPercentEncodedQueryPairsMasked(t *testing.T) {
	rt := answerUpstream(t)
	const secret = "Zx9Qw8Er7Ty6Ui5Op4"
	for _, ct := range []string{"application/json", "text/html", "text/plain"} {
		body := `{"a":"https://h.example/x?api%5Fkey=` + secret + `&page=2",` +
			`"b":"https://h.example/x?access%5Ftoken=` + secret + `",` +
			`"c":"https://h.example/x?%74oken=` + secret + `",` +
			`"d":"https://h.example/x?api_key%3D` + secret + `",` +
			`"e":"https://a.example/login?next=https%3A%2F%2Fh.example%2Fcb%3Faccess_token%3D` + secret + `%26page%3D2"}`
		text := resultText(callAnswer(t, rt, ct, body))
		if strings.Contains(text, secret) {
			t.Errorf("%s: the credential reached the agent: %s", ct, text)
		}
		for _, keep := range []string{"api%5Fkey=[REDACTED]&page=2", "%26page%3D2", "?%74oken=[REDACTED]"} {
			if !strings.Contains(text, keep) {
				t.Errorf("%s: %q missing from %s", ct, keep, text)
			}
		}
	}
}
