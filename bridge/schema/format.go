package schema

import (
	"math"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

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
	uuidRE   = lazyRE(`^(?i:urn:uuid:)?[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$`)
	emailRE  = lazyRE(`^[a-zA-Z0-9.!#$%&'*+/=?^_` + "`" + `{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$`)
	labelRE  = lazyRE(`^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$`)
	timeRE   = lazyRE(`^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(?i:z|[+-]([01]\d|2[0-3]):?[0-5]\d)?$`)
	base64RE = lazyRE(`^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$`)
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

func stringFormatOK(f, s string) bool {
	switch f {
	case "date-time":
		if len(s) > 10 && (s[10] == 't' || s[10] == ' ') {
			s = s[:10] + "T" + s[11:]
		}
		_, err := time.Parse(time.RFC3339Nano, strings.ToUpper(s))
		return err == nil
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	case "time":
		return timeRE().MatchString(s)
	case "email":
		return emailRE().MatchString(s)
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
	case "uri", "url":
		u, err := url.Parse(s)
		return err == nil && u.Scheme != "" && !strings.ContainsAny(s, " \t\n")
	case "uri-reference":
		_, err := url.Parse(s)
		return err == nil && !strings.ContainsAny(s, " \t\n")
	case "uuid":
		return uuidRE().MatchString(s)
	case "byte":
		return base64RE().MatchString(s)
	case "regex":
		_, err := regexp.Compile(s)
		return err == nil
	}
	return true
}

// assertedFormat reports whether the checker asserts format f.
func assertedFormat(f string) bool {
	switch f {
	case "date-time", "date", "time", "email", "hostname", "ipv4", "ipv6", "uri", "url", "uri-reference", "uuid", "byte", "regex", "int32", "int64":
		return true
	}
	return false
}

// UsesFormat reports whether s or a subschema (its $defs included)
// declares a format the checker asserts: answers must then be checked
// beyond what jsonschema-go validates.
func UsesFormat(s *jsonschema.Schema) bool {
	found := false
	seen := map[*jsonschema.Schema]bool{}
	var walk func(*jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		if s == nil || found || seen[s] {
			return
		}
		seen[s] = true
		if assertedFormat(s.Format) {
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
