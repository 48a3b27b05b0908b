package main

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"

	"github.com/mcpbridge/mcpbridge/sanitizer"
)

// upstreamQueryValues are the values in the query of the --upstream URL
// (and the items without '='), decoded, that may be keys: the bridge
// sends them on every request, and a key passed that way (?appid=...,
// ?token=...) is a credential like those of upstream-auth, so the
// redactors mask them. A value is taken for a key when its name is one
// the sanitizer masks (token, key, secret...), or when it mixes letters
// and digits over 8 characters or more and is not a date: masking
// "2024-01-01" or "json" in every answer (Azure's ?api-version=...) would
// cost the agent data and hide nothing. The URL is shown to clients with
// every query value masked (bridge.PublicURL).
func upstreamQueryValues(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return nil
	}
	keyRule, _ := sanitizer.New(sanitizer.Rules{})
	var out []string
	for _, item := range strings.Split(u.RawQuery, "&") {
		name, v, ok := strings.Cut(item, "=")
		if !ok {
			name, v = "", item
		}
		if v == "" {
			continue
		}
		dec, err := url.QueryUnescape(v)
		if err != nil {
			dec = v
		}
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if !(name != "" && keyRule != nil && keyRule.IsSensitiveKey(name)) && !keyLike(dec) {
			continue
		}
		out = append(out, v)
		if dec != v {
			out = append(out, dec)
		}
	}
	return out
}

// keyLike reports whether v looks like a key rather than a word, a
// number, a version or a date: 8 characters or more, letters and digits
// both, and not a date (2024-01-01, 2024-01-01-preview).
func keyLike(v string) bool {
	if len(v) < 8 || dateLike.MatchString(v) {
		return false
	}
	letter, digit := false, false
	for _, c := range v {
		switch {
		case unicode.IsLetter(c):
			letter = true
		case unicode.IsDigit(c):
			digit = true
		}
	}
	return letter && digit
}

var dateLike = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}([T -][\w.:+-]*)?$`)
