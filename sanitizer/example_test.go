package sanitizer_test

import (
	"fmt"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

func ExampleRedactor_RedactJSON() {
	r, err := sanitizer.New(sanitizer.Rules{Secrets: []string{"upstream-key-123"}})
	if err != nil {
		panic(err)
	}
	body := []byte(`{
  "user": "octocat",
  "access_token": "gho_16C7e42F292c6912E7710c838347Ae178B4a",
  "token_type": "bearer",
  "note": "called with upstream-key-123",
  "hint": "MASKED:****123"
}`)
	out, err := r.RedactJSON(nil, body)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output:
	// {"user":"octocat","access_token":"[REDACTED]","token_type":"bearer","note":"called with [REDACTED]","hint":"MASKED:****123"}
}

func ExampleRedactor_RedactString() {
	r, err := sanitizer.New(sanitizer.Rules{})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.RedactString("401 from upstream: Authorization: Bearer 0123456789abcdef rejected"))
	// Output:
	// 401 from upstream: Authorization: Bearer [REDACTED] rejected
}
