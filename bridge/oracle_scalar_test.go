package bridge_test

// Strings (formats, patterns, lengths) and numbers for the oracle's
// argument generator.

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// genFormats are values for the string formats real specs use.
var genFormats = map[string]string{
	"date-time":             "2024-01-02T03:04:05Z",
	"date":                  "2024-01-02",
	"time":                  "03:04:05Z",
	"duration":              "P1D",
	"email":                 "user@example.com",
	"idn-email":             "user@example.com",
	"hostname":              "example.com",
	"idn-hostname":          "example.com",
	"ipv4":                  "192.0.2.1",
	"ipv6":                  "2001:db8::1",
	"uri":                   "https://example.com/a",
	"url":                   "https://example.com/a",
	"uri-reference":         "https://example.com/a",
	"iri":                   "https://example.com/a",
	"iri-reference":         "https://example.com/a",
	"uri-template":          "https://example.com/{a}",
	"uuid":                  "123e4567-e89b-12d3-a456-426614174000",
	"json-pointer":          "/a/b",
	"relative-json-pointer": "0/a",
	"regex":                 "^a+$",
	"byte":                  "aGVsbG8=",
	"binary":                "aGVsbG8=",
	"base64":                "aGVsbG8=",
	"password":              "secret",
	"int32":                 "1",
	"int64":                 "1",
	"integer":               "1",
	"number":                "1",
	"float":                 "1.5",
	"double":                "1.5",
	"decimal":               "1.5",
	"unix-time":             "1700000000",
	"timestamp":             "1700000000",
	"date-time-rfc1123":     "Tue, 02 Jan 2024 03:04:05 GMT",
	"color":                 "#ff0000",
	"phone":                 "+15555550100",
	"country-code":          "US",
	"currency":              "USD",
	"language":              "en",
	"locale":                "en-US",
}

// str generates a string: examples and default first when the schema has a
// pattern (they are written by the spec's authors), then the format value,
// then the pattern generator, then a plain word sized to the bounds.
func (g *argGen) str(s map[string]any, variant int) (any, error) {
	minLen := int(genNumOr(s["minLength"], 0))
	maxLen := int(genNumOr(s["maxLength"], 1<<20))
	var patterns []*regexp.Regexp
	var patSrc []string
	if p, ok := s["pattern"].(string); ok {
		patSrc = append(patSrc, p)
	}
	patSrc = append(patSrc, genStrings(s["x-patterns"])...)
	for _, p := range patSrc {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, genFailf("pattern %q does not compile: %v", p, err)
		}
		patterns = append(patterns, re)
	}
	ok := func(v string) bool {
		n := utf8.RuneCountInString(v)
		if n < minLen || n > maxLen {
			return false
		}
		for _, re := range patterns {
			if !re.MatchString(v) {
				return false
			}
		}
		return true
	}
	var cands []string
	if len(patterns) > 0 {
		if ex, okEx := s["examples"].([]any); okEx {
			for _, e := range ex {
				if es, isStr := e.(string); isStr {
					cands = append(cands, es)
				}
			}
		}
		if d, isStr := s["default"].(string); isStr {
			cands = append(cands, d)
		}
	}
	format, _ := s["format"].(string)
	if f, known := genFormats[format]; known {
		cands = append(cands, f)
	}
	if enc, _ := s["contentEncoding"].(string); enc == "base64" {
		cands = append(cands, "aGVsbG8=")
	}
	if mt, _ := s["contentMediaType"].(string); strings.Contains(mt, "json") {
		cands = append(cands, "{}")
	}
	for _, c := range cands {
		if ok(c) {
			return c, nil
		}
	}
	if len(patterns) > 0 {
		if v, found := genPattern(patSrc[0], minLen, maxLen, variant); found && ok(v) {
			return v, nil
		}
		return nil, genFailf("cannot generate a string for pattern %q (length %d..%d)", patSrc[0], minLen, maxLen)
	}
	word := "example"
	if variant > 0 {
		word += strconv.Itoa(variant)
	}
	for utf8.RuneCountInString(word) < minLen {
		word += "x"
	}
	if utf8.RuneCountInString(word) > maxLen {
		word = string([]rune(word)[:maxLen])
	}
	if format != "" && !ok(word) {
		return nil, genFailf("no value for format %q", format)
	}
	return word, nil
}

// genNumber picks a number within the bounds, on multipleOf, near 1.
func genNumber(s map[string]any, integer bool, variant int) (any, error) {
	lo, hi := math.Inf(-1), math.Inf(1)
	if v := genNum(s["minimum"]); !math.IsNaN(v) {
		lo = v
	}
	if v := genNum(s["maximum"]); !math.IsNaN(v) {
		hi = v
	}
	step := 1.0
	if !integer {
		step = 0.5
	}
	if v := genNum(s["exclusiveMinimum"]); !math.IsNaN(v) && v >= lo {
		lo = v + step
		if integer {
			lo = math.Floor(v) + 1
		}
	}
	if v := genNum(s["exclusiveMaximum"]); !math.IsNaN(v) && v <= hi {
		hi = v - step
		if integer {
			hi = math.Ceil(v) - 1
		}
	}
	if integer {
		lo, hi = math.Ceil(lo), math.Floor(hi)
	}
	x := 1.0 + float64(variant)
	if x < lo {
		x = lo
	}
	if x > hi {
		x = hi
	}
	if m := genNum(s["multipleOf"]); !math.IsNaN(m) && m > 0 {
		x = math.Ceil(x/m) * m
		if x > hi {
			x = math.Floor(hi/m) * m
		}
		if integer && x != math.Trunc(x) {
			return nil, genFailf("no integer multiple of %v", m)
		}
	}
	if x < lo || x > hi || math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, genFailf("no number in [%v, %v]", lo, hi)
	}
	if integer || x == math.Trunc(x) {
		return json.Number(strconv.FormatFloat(x, 'f', -1, 64)), nil
	}
	return x, nil
}
