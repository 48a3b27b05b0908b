package sanitizer_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// TestKeyWords is the table of the built-in word rule: the last word of
// a name decides (see the package documentation).
func TestKeyWords(t *testing.T) {
	r := newRedactor(t, sanitizer.Rules{})
	sensitive := []string{
		"password", "db_password", "DB_PASSWORD", "userPassword", "new-password", "MYSQL_ROOT_PASSWORD",
		"dbpassword", "passwd", "passphrase", "db_pwd", "dbPwd",
		"secret", "client_secret", "clientSecret", "CLIENT-SECRET", "webhookSecret", "aws_secret_access_key",
		"AWS_SECRET_ACCESS_KEY", "SecretAccessKey", "secret_key", "secretKey", "SecretString", "password_hash",
		"token", "auth_token", "authToken", "x-auth-token", "X-Auth-Token", "accessToken", "access_token",
		"ACCESS_TOKEN", "refresh-token", "id_token", "bearerToken", "x-amz-security-token", "PRIVATE-TOKEN",
		"X-Vault-Token", "GITHUB_TOKEN", "oauth2Token", "accesstoken", "_token_",
		"api-key", "api_key", "apiKey", "APIKey", "ApiKEY", "apikey", "x-api-key", "XApiKey", "x-goog-api-key",
		"Ocp-Apim-Subscription-Key", "privateKey", "private_key", "access_key", "accessKey", "auth_key",
		"signing-key", "encryptionKey", "master_key", "license_key", "account_key", "app_key", "api key",
		"credential", "credentials", "aws:credentials", "cookie", "Cookie", "set-cookie", "SetCookie",
		"authorization", "Proxy-Authorization", "wsse:Password",
		"session_id", "sessionId", "SESSION_ID", "session-id", "JSESSIONID", "PHPSESSID", "sessionToken",
	}
	harmless := []string{
		"token_type", "tokenType", "tokens", "max_tokens", "maxTokens", "input_tokens", "tokens_used",
		"token_count", "tokenizer", "token_endpoint", "token_url", "expires_in", "csrfToken", "csrf_token",
		"X-XSRF-TOKEN", "nextPageToken", "next_page_token", "pageToken", "NextToken", "ContinuationToken",
		"sync_token", "idempotency_token", "nexttoken",
		"author", "authority", "auth", "authentication", "authorization_url", "authorization_endpoint",
		"authorization2", "passwordless", "password_policy", "password_changed_at", "password_length",
		"passwords", "secrets", "secret_name", "client_secret_expires_at", "cookies", "cookie_name",
		"credential_id", "credentials_type", "key", "keys", "api", "api_keys", "public_key", "publicKey",
		"primary_key", "sort_key", "monkey", "turkey", "x-api-key-id", "access_key_id", "AccessKeyId",
		"private_key_id", "session", "session_count", "id", "node_id", "user_id", "pwd", "PWD", "value",
		"string", "hash", "pass word", "signature", "description", "name", "url", "tokén", "", "-",
	}
	for _, k := range sensitive {
		if !r.IsSensitiveKey(k) {
			t.Errorf("IsSensitiveKey(%q) = false, want true", k)
		}
	}
	for _, k := range harmless {
		if r.IsSensitiveKey(k) {
			t.Errorf("IsSensitiveKey(%q) = true, want false", k)
		}
	}
	// The JSON path agrees with IsSensitiveKey.
	for _, set := range [][]string{sensitive, harmless} {
		for _, k := range set {
			doc, _ := json.Marshal(map[string]string{k: "v"})
			out, err := r.RedactJSON(nil, doc)
			if err != nil {
				t.Fatal(err)
			}
			masked := string(out) != string(doc)
			if masked != r.IsSensitiveKey(k) {
				t.Errorf("RedactJSON(%s) = %s; IsSensitiveKey = %t", doc, out, r.IsSensitiveKey(k))
			}
		}
	}
	// NoDefaults turns the word rule off; configured keys stay exact.
	nd := newRedactor(t, sanitizer.Rules{NoDefaults: true, Keys: []string{"pin"}})
	if nd.IsSensitiveKey("password") || !nd.IsSensitiveKey("PIN") || nd.IsSensitiveKey("user_pin") {
		t.Errorf("NoDefaults: password %t, PIN %t, user_pin %t; want false, true, false",
			nd.IsSensitiveKey("password"), nd.IsSensitiveKey("PIN"), nd.IsSensitiveKey("user_pin"))
	}
}

// TestOnRedact checks the counter hook: one call per call that masked
// something, with the number of masks.
func TestOnRedact(t *testing.T) {
	var calls, total int
	rules := testRules()
	rules.OnRedact = func(n int) { calls++; total += n }
	r := newRedactor(t, rules)
	r.RedactString("nothing here")
	if calls != 0 {
		t.Fatalf("OnRedact called for a clean string")
	}
	r.RedactString("a " + skKey + " b " + secret)
	if calls != 1 || total != 2 {
		t.Errorf("RedactString: %d calls, total %d; want 1, 2", calls, total)
	}
	calls, total = 0, 0
	if _, err := r.RedactJSON(nil, []byte(`{"password":{"a":"`+jwt+`"},"m":"`+awsKey+`","ok":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || total != 2 {
		t.Errorf("RedactJSON: %d calls, total %d; want 1, 2", calls, total)
	}
	calls, total = 0, 0
	if _, err := r.RedactJSON(nil, []byte(`{"value":"`+skKey+`","name":"token","v":"`+secret+`"}`)); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || total != 2 {
		t.Errorf("RedactJSON name/value: %d calls, total %d; want 1, 2", calls, total)
	}
	calls, total = 0, 0
	r.Redact(map[string]any{"password": "x", "m": []any{skKey, "ok"}})
	if calls != 1 || total != 2 {
		t.Errorf("Redact: %d calls, total %d; want 1, 2", calls, total)
	}
	allocs := testing.AllocsPerRun(100, func() { r.RedactString("a clean string") })
	if allocs != 0 && !raceEnabled {
		t.Errorf("RedactString with a hook: %v allocations on a clean string", allocs)
	}
}
