package request

import "strings"

// Names a request may not write: the credentials' own query, cookie and
// header names and the names in the upstream URL's query. An argument
// could otherwise send a second pair that a lenient server files under
// the credential's name and reads instead of it (PHP reads the last of
// repeated query names and the first of repeated cookies; PHP, Rack and
// Sinatra merge a form body over the query). Every comparison with such a
// name goes through credName.

// credName is the name a lenient server files a query, cookie or form
// name (header false) or a header name (header true) under, for comparing
// it with a credential's. The name is unescaped by the caller (see
// unescapeName). It is cut at the first control byte (a C string's end),
// and at the first '[' that a ']' follows (PHP's and Rails' arrays:
// api_key[] and api_key[x] are api_key); spaces are trimmed at both ends
// (PHP skips leading ones); it is lower-cased (ASP.NET reads API_KEY as
// api_key); and '.', ' ' and any other '[' read as '_', as PHP files them
// (api.key, "api key" and api[key are api_key), with '-' too for a header
// (CGI, and PHP's servers, file X-Api-Key and X_Api_Key both under
// HTTP_X_API_KEY).
func credName(name string, header bool) string {
	if i := strings.IndexFunc(name, isControl); i >= 0 {
		name = name[:i]
	}
	if i := strings.IndexByte(name, '['); i >= 0 && strings.IndexByte(name[i+1:], ']') >= 0 {
		name = name[:i]
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if !strings.ContainsAny(name, ". [-") {
		return name
	}
	b := []byte(name)
	for i, c := range b {
		switch c {
		case '.', ' ', '[':
			b[i] = '_'
		case '-':
			if header {
				b[i] = '_'
			}
		}
	}
	return string(b)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// credKey is a query, cookie or form name as lenient servers read it, in
// the two readings that differ: PHP's (credName), and that of servers for
// which a '.' nests as a '[' does (Rails' and qs's brackets, Spring's and
// qs's dots: api_key.x and api_key[ are api_key), which cuts the name at
// its first '.' or '['.
type credKey struct{ php, nest string }

func newCredKey(name string) credKey {
	k := credKey{php: credName(name, false)}
	if i := strings.IndexAny(name, ".["); i >= 0 {
		k.nest = credName(name[:i], false)
	} else {
		k.nest = k.php
	}
	return k
}

// same reports whether a server may file k and o under one name.
func (k credKey) same(o credKey) bool { return k.php == o.php || k.nest == o.nest }

// credKeys are names' keys.
func credKeys(names []string) []credKey {
	keys := make([]credKey, 0, len(names))
	for _, n := range names {
		keys = append(keys, newCredKey(n))
	}
	return keys
}

// SameParamName reports whether a query or cookie parameter named name is
// filed by lenient servers under cred, a credential's name (see credName
// and credKey): a spec parameter of that name is not a tool argument.
func SameParamName(name, cred string) bool {
	return newCredKey(name).same(newCredKey(cred))
}

// SameHeaderName reports whether lenient servers read the headers a and b
// as one (see credName): case aside, '-' and '_' alike, spaces trimmed.
func SameHeaderName(a, b string) bool {
	return credName(a, true) == credName(b, true)
}

// unescapeName decodes a query, cookie or form name as PHP does: "+" is a
// space, a valid %XX its byte, and an invalid '%' stays as it is (where
// url.QueryUnescape would give up on the whole name).
func unescapeName(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func ishex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
