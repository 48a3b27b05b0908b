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

func ExampleRedactor_RedactBody() {
	var redactions int
	r, err := sanitizer.New(sanitizer.Rules{
		Secrets:  []string{"k3y+/=upstream"},
		OnRedact: func(n int) { redactions += n }, // e.g. mcpbridge_redactions_total
	})
	if err != nil {
		panic(err)
	}
	for _, b := range []struct{ mediaType, body string }{
		{"application/xml", `<auth><user>bob</user><password>hunter2</password></auth>`},
		{"application/x-www-form-urlencoded", "grant_type=client_credentials&client_secret=xyz&scope=read"},
		{"text/plain", "echo: k3y%2B%2F%3Dupstream"},
		{"text/plain", "MASKED: but still k3y+/=upstream"},
		{"application/octet-stream", "\x00\x01k3y+/=upstream\x02"},
	} {
		out, n := r.RedactBody(b.mediaType, []byte(b.body))
		fmt.Printf("%d %q\n", n, out)
	}
	fmt.Println("total:", redactions)
	// Output:
	// 1 "<auth><user>bob</user><password>[REDACTED]</password></auth>"
	// 1 "grant_type=client_credentials&client_secret=[REDACTED]&scope=read"
	// 1 "echo: [REDACTED]"
	// 1 "MASKED: but still [REDACTED]"
	// 1 "\x00\x01**************\x02"
	// total: 5
}

func ExampleRedactor_IsSensitiveKey() {
	r, err := sanitizer.New(sanitizer.Rules{})
	if err != nil {
		panic(err)
	}
	for _, k := range []string{"db_password", "x-auth-token", "aws_secret_access_key", "token_type", "nextPageToken", "max_tokens"} {
		fmt.Println(k, r.IsSensitiveKey(k))
	}
	// Output:
	// db_password true
	// x-auth-token true
	// aws_secret_access_key true
	// token_type false
	// nextPageToken false
	// max_tokens false
}
