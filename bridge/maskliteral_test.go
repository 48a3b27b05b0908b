package bridge_test

import "testing"

// TestSensitiveBooleansAndNullsKept: a boolean or null under a sensitive
// name carries no secret, so it reaches the agent as it is. Masking it
// turned {"secret": false} into {"secret": "[REDACTED]"}: the type changed
// (an agent testing the flag read a truthy string, a strict schema saw a
// string), and nothing was protected. Strings, numbers, objects and arrays
// under such names are still masked, in valid JSON and in JSON cut short
// (the lenient path).
func TestSensitiveBooleansAndNullsKept(t *testing.T) {
	rt := answerUpstream(t)
	body := `{"secret":false,"enable_cookie":true,"api_key":null,"password":"hunter2hunter2","token":424242,` +
		`"client_secret":{"id":"x"},"env":[{"name":"DB_PASSWORD","value":true},{"name":"DB_PASSWORD","value":"pw"}]}`
	res := callAnswer(t, rt, "application/json", body)
	want := `{"secret":false,"enable_cookie":true,"api_key":null,"password":"[REDACTED]","token":"[REDACTED]",` +
		`"client_secret":"[REDACTED]","env":[{"name":"DB_PASSWORD","value":true},{"name":"DB_PASSWORD","value":"[REDACTED]"}]}`
	if got := resultText(res); got != want {
		t.Errorf("text:\n got %s\nwant %s", got, want)
	}

	// Cut short, so not valid JSON: the lenient path keeps them too.
	res = callAnswer(t, rt, "application/json", `{"secret":false,"api_key":null,"token":424242,"password":"hunter2hunter2","more":[1,`)
	if got, want := resultText(res), `{"secret":false,"api_key":null,"token":"[REDACTED]","password":"[REDACTED]","more":[1,`; got != want {
		t.Errorf("cut short:\n got %s\nwant %s", got, want)
	}
}
