package schema

import (
	"encoding/json"
	"math"
	"math/big"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// JSON Schema 2020-12 makes `format` an annotation, and jsonschema-go does
// not assert it, but JavaScript clients do: the TypeScript SDK compiles
// output schemas with Ajv and ajv-formats, and fails a call whose
// structuredContent breaks a format. The checker therefore asserts the
// common formats, close to ajv-formats; unknown formats pass.

// The format patterns are compiled on first use, not at package init: a
// process that never checks a format (every command but serve, and a
// served spec without formats) does not pay ~1.4 ms of its start for them.
var (
	uuidRE = lazyRE(`^(?i:urn:uuid:)?[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$`)
	// emailRE is the address form JavaScript clients check (ajv-formats):
	// dot-separated atoms before the @, a dotted host name after it.
	emailRE = lazyRE(`(?i)^[a-z0-9!#$%&'*+/=?^_` + "`" + `{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_` + "`" + `{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$`)
	labelRE = lazyRE(`^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)
	// timeRE wants the offset, as RFC 3339 does (and ajv-formats).
	timeRE   = lazyRE(`^([01]\d|2[0-3]):([0-5]\d):([0-5]\d|60)(\.\d+)?(?i:(z)|([+-])([01]\d|2[0-3]):?([0-5]\d))$`)
	base64RE = lazyRE(`^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`)
	// The formats below are checked as JavaScript clients check them
	// (ajv-formats), so that an answer the bridge declares conforming is
	// one they accept.
	jsonPointerRE    = lazyRE(`^(?:/(?:[^~/]|~0|~1)*)*$`)
	relJSONPointerRE = lazyRE(`^(?:0|[1-9][0-9]*)(?:#|(?:/(?:[^~/]|~0|~1)*)*)$`)
	uriTemplateRE    = lazyRE(`(?i)^(?:(?:[^\x00-\x20"'<>%\\^` + "`" + `{|}]|%[0-9a-f]{2})|\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\*)?)*\})*$`)
	durationRE       = lazyRE(`^P(?:(\d+Y)?(\d+M)?(\d+D)?(?:T(\d+H)?(\d+M)?(\d+S)?)?|\d+W)$`)
	// uriRE and uriRefRE are ajv-formats' "uri" and "uri-reference" (full
	// mode) as they are (see uriShapeOK). Go's (?i) also folds U+017F and
	// U+212A, which uriChars refuses before.
	uriRE    = lazyRE(`(?i)^(?:[a-z][a-z0-9+\-.]*:)(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)(?:\?(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$`)
	uriRefRE = lazyRE(`(?i)^(?:[a-z][a-z0-9+\-.]*:)?(?:\/?\/(?:(?:[a-z0-9\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\.[a-z0-9\-._~!$&'()*+,;=:]+)\]|(?:(?:25[0-5]|2[0-4]\d|[01]?\d\d?)\.){3}(?:25[0-5]|2[0-4]\d|[01]?\d\d?)|(?:[a-z0-9\-._~!$&'"()*+,;=]|%[0-9a-f]{2})*)(?::\d*)?(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*|\/(?:(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})+(?:\/(?:[a-z0-9\-._~!$&'"()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\?(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\-._~!$&'"()*+,;=:@/?]|%[0-9a-f]{2})*)?$`)
)

// lazyRE returns a function that compiles expr once, on its first call.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// formatOK reports whether v satisfies format f; values of a type the
// format does not apply to, and unknown formats, pass.
func formatOK(f string, v any) bool {
	if s, ok := v.(string); ok {
		return stringFormatOK(f, s)
	}
	n, ok := number(v)
	if !ok {
		return true
	}
	switch f {
	case "int32":
		return n == math.Trunc(n) && n >= math.MinInt32 && n <= math.MaxInt32
	case "int64":
		return n == math.Trunc(n) && math.Abs(n) <= 1<<53
	}
	return true
}

// intFormatOK reports whether v, a number, lies within the range of the
// integer format f ("int32" or "int64"), read exactly: arguments are held
// to it although jsonschema-go asserts no format, since an upstream that
// reads the value into that type refuses it or wraps it around. Other
// formats, and values that are not numbers, pass.
func intFormatOK(f string, v any) bool {
	lo, hi, ok := intRange(f)
	if !ok {
		return true
	}
	switch x := v.(type) {
	case int64:
		return x >= lo && x <= hi
	case int:
		return int64(x) >= lo && int64(x) <= hi
	case float64:
		// float64(hi) rounds up to 2^63 for int64: the bound is exclusive.
		return x >= float64(lo) && (x <= float64(hi) && f == "int32" || x < float64(hi))
	case json.Number:
		return intTextOK(string(x), lo, hi)
	}
	return true
}

// intRange is the range of the integer format f; ok is false for other
// formats.
func intRange(f string) (lo, hi int64, ok bool) {
	switch f {
	case "int32":
		return math.MinInt32, math.MaxInt32, true
	case "int64":
		return math.MinInt64, math.MaxInt64, true
	}
	return 0, 0, false
}

// intTextOK reports whether the JSON number literal text lies within
// [lo, hi], exactly.
func intTextOK(text string, lo, hi int64) bool {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n >= lo && n <= hi
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return false // beyond float64, so beyond any integer format
	}
	if math.Abs(f) < 1<<30 {
		return true
	}
	if math.Abs(f) > 1<<64 {
		return false
	}
	// Near a bound: compare exactly (the exponent is small here).
	b, _, err := big.ParseFloat(text, 10, 256, big.ToNearestEven)
	if err != nil {
		return false
	}
	return b.Cmp(new(big.Float).SetInt64(lo)) >= 0 && b.Cmp(new(big.Float).SetInt64(hi)) <= 0
}

func stringFormatOK(f, s string) bool {
	switch f {
	case "date-time":
		if len(s) > 10 && (s[10] == 't' || s[10] == ' ') {
			s = s[:10] + "T" + s[11:]
		}
		if strings.ContainsRune(s, ',') { // Go reads 00,5 as a fraction; RFC 3339 does not
			return false
		}
		_, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
		return err == nil
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	case "time":
		return timeOK(s)
	case "email":
		return emailRE().MatchString(s)
	case "json-pointer":
		return jsonPointerRE().MatchString(s)
	case "relative-json-pointer":
		return relJSONPointerRE().MatchString(s)
	case "uri-template":
		return uriTemplateRE().MatchString(s)
	case "duration":
		m := durationRE().FindStringSubmatch(s)
		// P alone, or a T with nothing after it, names no duration.
		return m != nil && s != "P" && !strings.HasSuffix(s, "T")
	case "hostname":
		if len(s) == 0 || len(s) > 253 {
			return false
		}
		for l := range strings.SplitSeq(strings.TrimSuffix(s, "."), ".") {
			if !labelRE().MatchString(l) {
				return false
			}
		}
		return true
	case "ipv4":
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is4()
	case "ipv6":
		a, err := netip.ParseAddr(s)
		return err == nil && a.Is6() && !strings.Contains(s, "%")
	case "uri":
		u, err := url.Parse(s)
		return err == nil && u.Scheme != "" && uriChars(s) && uriShapeOK(s, false)
	case "url":
		return urlOK(s)
	case "uri-reference":
		_, err := url.Parse(s)
		return err == nil && uriChars(s) && uriShapeOK(s, true)
	case "uuid":
		return uuidRE().MatchString(s)
	case "byte":
		return base64RE().MatchString(s)
	case "regex":
		if len(s) > maxRegexFormat {
			// Go's regexp compiles a huge character class in superlinear
			// time and memory (1 MB: ~35 s, 3 GB); a pattern this long is
			// let through unchecked rather than let an answer stall the
			// server.
			return true
		}
		_, err := regexp.Compile(s)
		return err == nil && PatternAsIs(s)
	}
	return true
}

// maxRegexFormat is the longest value the regex format compiles to check.
const maxRegexFormat = 16 << 10

// timeOK checks an RFC 3339 full-time: an offset is required, and a leap
// second only at 23:59:60 UTC.
func timeOK(s string) bool {
	m := timeRE().FindStringSubmatch(s)
	if m == nil {
		return false
	}
	if m[3] != "60" {
		return true
	}
	hour, _ := strconv.Atoi(m[1])
	minute, _ := strconv.Atoi(m[2])
	if m[5] == "" { // an offset
		oh, _ := strconv.Atoi(m[7])
		om, _ := strconv.Atoi(m[8])
		if m[6] == "+" {
			oh, om = -oh, -om
		}
		total := ((hour*60+minute+oh*60+om)%(24*60) + 24*60) % (24 * 60)
		hour, minute = total/60, total%60
	}
	return hour == 23 && minute == 59
}

// uriChars reports whether s holds only what RFC 3986 allows in a URI
// (ASCII letters, digits, "-._~:/?#[]@!$&'()*+,;=" and %XX escapes), as
// JavaScript clients check; url.Parse accepts more (non-ASCII, '|', '{').
func uriChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0:
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

// uriShapeOK refuses what ajv-formats refuses in a "uri" (a
// "uri-reference" when ref) that url.Parse and uriChars let through: a
// second '#'; '[' or ']' anywhere but around an IP literal host, and a
// second '@', which Ajv's own expression decides (it takes ~15 µs, ten
// times the rest, so it runs only then); nothing after a scheme but a
// query or fragment ("http:"). A link whose query reads
// filter[status]=open, or whose token was masked (?token=[REDACTED]),
// is refused here rather than by the client.
func uriShapeOK(s string, ref bool) bool {
	if strings.Count(s, "#") > 1 {
		return false
	}
	if strings.ContainsAny(s, "[]") || strings.Count(s, "@") > 1 {
		if ref {
			return uriRefRE().MatchString(s)
		}
		return uriRE().MatchString(s)
	}
	if !ref {
		// url.Parse found a scheme: it ends at the first ':'.
		i := strings.IndexByte(s, ':')
		if i+1 == len(s) || s[i+1] == '?' || s[i+1] == '#' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// urlOK checks the web address form JavaScript clients check for "url"
// (ajv-formats): http, https or ftp; a public IPv4 address or a host name
// whose last label is letters only, two or more; an optional port of 2-5
// digits; then nothing or a path without spaces (a query needs one).
func urlOK(s string) bool {
	lower := strings.ToLower(s)
	var rest string
	for _, scheme := range []string{"http://", "https://", "ftp://"} {
		if strings.HasPrefix(lower, scheme) {
			rest = s[len(scheme):]
			break
		}
	}
	if rest == "" {
		return false
	}
	authority, path, hasPath := strings.Cut(rest, "/")
	if hasPath && strings.ContainsFunc(path, unicode.IsSpace) {
		return false
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		if at == 0 || strings.ContainsFunc(authority[:at], unicode.IsSpace) {
			return false
		}
		authority = authority[at+1:]
	}
	host := authority
	if i := strings.LastIndexByte(authority, ':'); i >= 0 {
		port := authority[i+1:]
		if len(port) < 2 || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return false
		}
		host = authority[:i]
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !a.Is4() {
			return false
		}
		b := a.As4()
		switch {
		case b[0] == 0 || b[0] > 223 || b[3] == 0 || b[3] == 255,
			b[0] == 10, b[0] == 127, b[0] == 169 && b[1] == 254,
			b[0] == 192 && b[1] == 168, b[0] == 172 && b[1] >= 16 && b[1] <= 31:
			return false
		}
		return true
	}
	labels := strings.Split(host, ".")
	if len(labels) < 2 {
		return false
	}
	for i, l := range labels {
		if l == "" || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") || strings.Contains(l, "--") {
			return false
		}
		for _, r := range strings.ToLower(l) {
			letter := r >= 'a' && r <= 'z' || r >= 0xa1 && r <= 0xffff
			if i == len(labels)-1 {
				if !letter {
					return false
				}
			} else if !letter && !(r >= '0' && r <= '9') && r != '-' {
				return false
			}
		}
		if i == len(labels)-1 && utf8.RuneCountInString(l) < 2 {
			return false
		}
	}
	return true
}

// assertedFormat reports whether the checker asserts format f.
func assertedFormat(f string) bool {
	switch f {
	case "date-time", "date", "time", "email", "hostname", "ipv4", "ipv6", "uri", "url", "uri-reference", "uuid", "byte", "regex", "int32", "int64",
		"json-pointer", "relative-json-pointer", "uri-template", "duration":
		return true
	}
	return false
}

// UsesFormat reports whether s or a subschema (its $defs included)
// declares a format the checker asserts: answers must then be checked
// beyond what jsonschema-go validates.
func UsesFormat(s *jsonschema.Schema) bool { return usesFormat(s, assertedFormat) }

// UsesIntFormat reports whether s or a subschema declares the format int32
// or int64, whose ranges arguments are held to ([IntFormatError]).
func UsesIntFormat(s *jsonschema.Schema) bool {
	return usesFormat(s, func(f string) bool { _, _, ok := intRange(f); return ok })
}

func usesFormat(s *jsonschema.Schema, asserted func(string) bool) bool {
	found := false
	seen := map[*jsonschema.Schema]bool{}
	var walk func(*jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil || found || seen[s] {
			return
		}
		seen[s] = true
		if asserted(s.Format) {
			found = true
			return
		}
		for _, m := range []map[string]*jsonschema.Schema{s.Defs, s.Properties, s.PatternProperties, s.DependentSchemas} {
			for _, sub := range m {
				walk(sub)
			}
		}
		for _, l := range [][]*jsonschema.Schema{s.PrefixItems, s.AllOf, s.AnyOf, s.OneOf} {
			for _, sub := range l {
				walk(sub)
			}
		}
		for _, sub := range []*jsonschema.Schema{s.Items, s.AdditionalProperties, s.UnevaluatedProperties, s.UnevaluatedItems,
			s.Contains, s.PropertyNames, s.Not, s.If, s.Then, s.Else} {
			walk(sub)
		}
	}
	walk(s)
	return found
}

// Check reports the first way v (decoded JSON, numbers as float64 or
// json.Number) does not conform to root, as "pointer: reason", or "" when
// it conforms, formats included (see [Reduce] for what the checker knows).
func Check(v any, root *jsonschema.Schema) string {
	if f := newChecker(root).check(v, root, nil); f != nil {
		return f.String()
	}
	return ""
}
