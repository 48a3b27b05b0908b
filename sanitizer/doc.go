// Package sanitizer removes secrets from what an upstream API sends back
// before it reaches an agent or a log.
//
// Its one job is redaction: a [Redactor], built once by [New] from [Rules],
// rewrites decoded JSON values ([Redactor.Redact]), free text
// ([Redactor.RedactString]) and raw JSON documents ([Redactor.RedactJSON],
// the hot path, a single pass that also compacts and validates). It is a
// leaf: it imports the standard library only, never another mcpbridge
// package, zap, go-sdk or net/http. It does no I/O and never logs. A
// Redactor is immutable and safe for concurrent use.
//
// # Key names
//
// The value of an object member whose name is a sensitive key becomes the
// string [Mask], whatever its type (string, number, bool, null, object or
// array). Names are compared whole, after folding ASCII upper case to lower
// case and deleting every '-' and '_' (other bytes, non-ASCII included, are
// compared as they are): "X-API-Key", "x_api_key" and "XApiKey" all match
// "x-api-key", but "token_type", "tokens_used" and "csrfToken" do not match
// "token" (no substring matching: it would mask counters and types). The
// defaults are apiKey, api_key, token, accessToken, refreshToken, idToken,
// password, passwd, secret, clientSecret, client_secret, authorization,
// proxy-authorization, cookie, set-cookie, private_key, privateKey,
// x-api-key and sessionToken; [Rules.Keys] adds to them.
//
// # Values
//
// Inside every string (object keys included), these are replaced by [Mask],
// and only the matched part is:
//
//   - JWTs: eyJ<b64url>.eyJ<b64url>.<b64url, possibly empty>
//   - sk- keys: "sk-" then 20 or more of [A-Za-z0-9_-] (covers sk-proj-,
//     sk-ant-...)
//   - PEM private keys: from "-----BEGIN ... PRIVATE KEY ...-----" to the
//     matching "-----END ...-----", or to the end of the string when the
//     block is cut short. Certificates and public keys are kept.
//   - AWS access key ids: AKIA or ASIA then 16 or more of [A-Z0-9]
//   - Bearer tokens: "Bearer" (any case), white space, then 8 or more of
//     [A-Za-z0-9-._~+/] and any '=' padding. "Bearer " stays visible and
//     only the token is masked, so the result reads "Bearer [REDACTED]".
//   - GitHub tokens: ghp_, gho_, ghu_, ghs_ or ghr_ then 16 or more of
//     [A-Za-z0-9]; github_pat_ then 16 or more of [A-Za-z0-9_]
//   - Slack tokens: xoxb-, xoxa-, xoxp-, xoxr- or xoxs- then 8 or more of
//     [A-Za-z0-9-]
//   - [Rules.Prefixes]: the prefix then 8 or more of [A-Za-z0-9_.-]
//   - [Rules.Secrets]: the exact value, anywhere. Secrets shorter than 4
//     characters are ignored (they would mask ordinary text), as are
//     secrets that occur inside [Mask] itself.
//   - [Rules.Patterns]: every match of the regular expression.
//
// The sk-, AWS, GitHub and Slack forms must start a word: the byte before
// them must not be an ASCII letter, a digit or ']', so "task-management-..."
// is not an sk- key. JWTs, Bearer tokens, configured prefixes and secrets
// match anywhere. Overlapping or touching matches become one [Mask].
//
// A string that starts with "MASKED:" was masked on purpose upstream and
// passes unchanged, both as a member value and as text.
//
// # Idempotence
//
// Redacting an already redacted value changes nothing, for the built-in
// rules and configured prefixes. [New] rejects a pattern that matches the
// empty string or inside [Mask], and a prefix containing '[' or ']'. Two
// cases may still mask again on a second pass, and are left so because
// the alternative is to leak: a configured pattern that can match across
// the brackets of a [Mask] and its neighbours, and a secret that begins
// with the end of [Mask] or ends with its beginning (one starting with
// ']' or ending with '[').
//
// # JSON
//
// [Redactor.RedactJSON] accepts exactly the documents encoding/json's Valid
// accepts (nesting depth at most 10000) and writes them compact, as
// encoding/json's Compact would: white space outside strings is dropped,
// numbers and strings are copied byte for byte, escapes included. A string
// in which something is masked and that had escapes is re-encoded as
// encoding/json's Marshal encodes strings. Strings are matched decoded, so
// an escape cannot hide a token ("sk-\u0070roj-..."). Decoding the output
// gives the same value as [Redactor.Redact] applied to the decoded input
// (unless two keys of one object redact to the same text).
//
// # Cost
//
// Every scan is linear in its input, however the text is crafted. RedactJSON
// reads the document once, without building Go values, and copies it to
// the output lazily, in as few appends as the changes allow. Each string is
// read once with tables of the bytes that can start a token, a configured
// prefix or a secret; the matchers run only where a token's first three
// bytes appear. Member names are checked against the sensitive keys without
// allocating. Configured patterns cannot be filtered that way and run on
// every string, so keep them few.
package sanitizer
