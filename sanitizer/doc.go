// Package sanitizer removes secrets from what an upstream API sends back
// before it reaches an agent or a log.
//
// Its one job is redaction: a [Redactor], built once by [New] from [Rules],
// rewrites decoded JSON values ([Redactor.Redact]), free text
// ([Redactor.RedactString]), raw JSON documents ([Redactor.RedactJSON],
// the hot path, a single pass that also compacts and validates) and upstream
// bodies of any media type ([Redactor.RedactBody]). It is a leaf: it
// imports the standard library only, never another mcpbridge package, zap,
// go-sdk or net/http. It does no I/O and never logs. A Redactor is
// immutable and safe for concurrent use; the one thing that changes under
// it is a [Secrets] set given as [Rules.Learned], to which the caller adds
// secrets learned while serving (rotating OAuth2 access tokens), masked
// from then on like configured ones. Package zapredact (a sub-package,
// which does import zap) applies a Redactor to everything a zap logger
// writes.
//
// # What is redacted where
//
//	                                   key rule       value rules
//	Redact, RedactJSON                 members        every string, keys included
//	RedactString                       -              the whole text
//	RedactBody JSON, JSON lines/seq    members        every string
//	RedactBody JSON that is invalid    "name": value  the whole text, strings decoded
//	RedactBody text/*, JS...           "name": value  the whole text, strings decoded
//	RedactBody YAML, TOML, .env...     as text, and "key: value" / "key=value" lines
//	RedactBody XML                     elements, attributes, name/key labels; the whole text, entities decoded
//	RedactBody HTML                    attributes, name/key labels; the whole text
//	RedactBody forms                   fields         names and values, raw and decoded
//	RedactBody multipart               part headers   each part by its own type
//	RedactBody binary (image/*...)     -              the raw bytes, same length ('*')
//	zapredact                          field keys     message, stack, every string field
//
// # Key names
//
// The value of a member (field, element, attribute, header) whose name is a
// sensitive key becomes [Mask], whatever its type (string, number, bool,
// null, object or array). The built-in rule splits the name into words (at
// every byte that is not an ASCII letter or digit, and at camelCase
// boundaries: "accessToken", "APIKey", "x-auth-token", "wsse:Password") and
// lets the last word, the head noun of the name, decide, compared in lower
// case. The name is sensitive when the last word:
//
//   - is, or ends with (words of at most 32 bytes: "dbpassword"), password,
//     passwd, passphrase, secret, credential, credentials, cookie,
//     authorization, sessionid or sessid;
//   - is or ends with "token", except after next, page, continuation,
//     pagination, sync, cursor, resume, start(ing), prev(ious), skip, delta,
//     change, idempotency, csrf or xsrf: paging cursors and anti-forgery
//     tokens stay readable (nextPageToken, csrf_token);
//   - is or ends with "key" after api, access, secret, private, auth,
//     session, signing, encryption, master, license, subscription, client,
//     shared, account or app (api_key, apiKey, x-api-key,
//     aws_secret_access_key, Ocp-Apim-Subscription-Key);
//   - is "id" after "session" (session_id, SESSION_ID);
//   - is "pwd" after another word, or ends with it (db_pwd; "PWD" alone is
//     a working directory);
//   - is value, string, binary, hash, digest or plaintext: then the word
//     before decides (SecretString, password_hash, api_key_value).
//
// So plurals and counts (tokens, max_tokens, secrets, passwords, cookies,
// api_keys), metadata whose head noun is something else (token_type,
// token_endpoint, authorization_url, password_policy,
// client_secret_expires_at, access_key_id, private_key_id, cookie_name),
// "key", "auth", "author", "authority", "passwordless" and "signature" are
// not sensitive. The table is in keys_test.go.
//
// Name/value pairs count too: in a JSON object with a "name" or "key"
// member (any case) whose string value is a sensitive key, the "value"
// members (any case) are sensitive, wherever they stand in the object:
// {"name":"DB_PASSWORD","value":"..."} (container environments), HAR
// headers, {"Key":"api_token","Value":"..."} tags. XML has the same rule
// with name and key attributes.
//
// [Rules.Keys] adds names
// compared whole after folding ASCII case and deleting '-' and '_'
// ("X-Session" matches "x_session"). [Rules.NoDefaults] drops the built-in
// rule. [Rules.AllowKeys] exempts names from both (compared the same way),
// for a tool whose job is to return a secret; the value rules still apply
// inside their values. [Redactor.IsSensitiveKey] exposes the decision.
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
//     block is cut short (in a binary body: to the end of its base64 body).
//     Certificates and public keys are kept.
//   - AWS access key ids: AKIA or ASIA then 16 or more of [A-Z0-9]
//   - Bearer tokens: "Bearer" (any case), white space, then 8 or more of
//     [A-Za-z0-9-._~+/] and any '=' padding. "Bearer " stays visible and
//     only the token is masked, so the result reads "Bearer [REDACTED]".
//   - HTTP Basic credentials: "Basic" (any case), white space, then padded
//     standard base64 of printable text holding a colon (user:password).
//     Only the base64 is masked.
//   - GitHub tokens: ghp_, gho_, ghu_, ghs_ or ghr_ then 16 or more of
//     [A-Za-z0-9]; github_pat_ then 16 or more of [A-Za-z0-9_]
//   - Slack tokens: xoxb-, xoxa-, xoxp-, xoxr- or xoxs- then 8 or more of
//     [A-Za-z0-9-]
//   - Stripe secret and restricted keys: sk_live_, sk_test_, rk_live_ or
//     rk_test_ then 16 or more of [A-Za-z0-9]; Google API keys: AIza then
//     exactly 35 of [A-Za-z0-9_-]; npm tokens: npm_ then exactly 36 of
//     [A-Za-z0-9]; GitLab personal access tokens: glpat- then 20 or more
//     of [A-Za-z0-9_-]
//   - Pairs right after '?', '&', '#' or ';': the value of "NAME=value"
//     when NAME is a sensitive key, up to '&', '#', ';', ',', white space,
//     a control byte, a quote, '<', '>', '\' or ')': a URL's query or
//     fragment ("?access_token=...", "#access_token=...",
//     "&amp;api_key=..." in HTML), a connection string (";Password=...;",
//     ";AccountKey=..."). Only the value is masked; names the key rule
//     leaves alone (cursor, nextPageToken, sig, X-Amz-Signature, key)
//     keep their values.
//   - [Rules.Prefixes]: the prefix then 8 or more of [A-Za-z0-9_.-]
//   - [Rules.Secrets]: the exact value, anywhere, and the forms New derives
//     from it once: URL-escaped (as url.QueryEscape and url.PathEscape
//     write it, and with every reserved byte escaped; upper- and lower-case
//     hex), JSON-escaped, XML/HTML-escaped, UTF-16 (both byte orders), and
//     base64 in the standard and URL-safe alphabets, padded or not, at each
//     of the three alignments the secret can have inside longer encoded
//     data. A base64 match grows over the whole base64 run around it, so
//     "Basic <base64 of user:secret>" becomes "Basic [REDACTED]" without
//     the user name being configured. Secrets shorter than 4 characters
//     are ignored (they would mask ordinary text), as are secrets that
//     occur inside [Mask] itself; base64 forms shorter than 6 characters
//     are only looked for as the whole encoded secret.
//   - [Rules.Learned]: the values its [Secrets] holds at the time of the
//     call, exactly as Rules.Secrets (every form above). A Redactor reads
//     the set with one atomic load per call and rebuilds its tables once
//     after each [Secrets.Add].
//   - [Rules.Patterns]: every match of the regular expression.
//
// The sk-, AWS, GitHub, Slack, Stripe, Google, npm and GitLab forms must
// start a word: the byte before them must not be an ASCII letter, a digit
// or ']', so "task-management-..." is not an sk- key. JWTs, Bearer tokens, configured prefixes and secrets
// match anywhere. Overlapping or touching matches become one [Mask].
//
// # MASKED:
//
// A string that starts with "MASKED:" claims to have been masked upstream.
// As the value of a sensitive key it passes unchanged, but only when no
// value rule matches inside it; otherwise the whole value becomes [Mask].
// In text (and in any other string) it changes nothing: the value rules
// apply as everywhere, so "MASKED:" echoed by an upstream cannot turn
// redaction off.
//
// # Bodies
//
// [Redactor.RedactBody] takes the media type of an upstream body and picks
// the rules, as its documentation lists: JSON through RedactJSON, XML,
// HTML, forms and multipart with rules of their own that keep every byte
// that is not masked, text with the value rules plus the key rule for the
// JSON it may hold, and binary bodies scanned byte for byte and masked in
// place with '*' so that their length never changes. A body of another
// type that is JSON (an error sent as text/plain, as XML or as
// application/octet-stream) gets the JSON rules in place.
// [Redactor.Contains] tells whether a body holds anything the value rules
// match, for a caller that would rather drop it.
//
// # Counting
//
// [Rules.OnRedact] is called once by every redacting call that masked
// something (Redact, RedactString, RedactJSON, RedactBody), with the number
// of masks: merged spans of text plus masked values. RedactBody also
// returns that number. Counting allocates nothing.
//
// # Idempotence
//
// Redacting an already redacted value changes nothing, for the built-in
// rules and configured prefixes. RedactBody goes further for every kind of
// body but valid JSON: when something was masked, it redacts its own result
// again until nothing changes (a few passes at most), which settles the
// cases below. [New] rejects a pattern that matches the
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
