package specloader

import (
	"net/url"
	"regexp"
	"strings"
)

// redacted replaces what RedactURL hides.
const redacted = "REDACTED"

// RedactURL returns raw fit for a log line or an error message: the
// password of the userinfo is masked (user:REDACTED@host), and so is a
// userinfo without a password, which is how tokens are usually given
// (https://TOKEN@host becomes https://REDACTED@host); every query value is
// masked (?access_token=REDACTED&page=REDACTED), a query item without '='
// as a whole, and so is a fragment, unless it is a JSON pointer (see
// pointerFragment). Masking every value rather than those
// of keys that look sensitive is deliberate: signed URLs carry their
// secrets under names no list foresees (sig, X-Amz-Signature, key...).
// Keys, scheme, host and path are kept. A string that is not a URL (a file
// path) is returned as is; one that does not parse is masked from its
// first '?' or '#' on, userinfo included. RedactURL is idempotent, and
// every string specloader returns passes through it.
func RedactURL(raw string) string {
	if !strings.Contains(raw, "://") {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return redactUnparsed(raw)
	}
	return redactParsed(u).String()
}

// redactParsed returns a copy of u masked as RedactURL says.
func redactParsed(u *url.URL) *url.URL {
	c := *u
	if c.User != nil {
		if _, ok := c.User.Password(); ok {
			c.User = url.UserPassword(c.User.Username(), redacted)
		} else {
			c.User = url.User(redacted)
		}
	}
	if c.RawQuery != "" || c.ForceQuery {
		c.RawQuery = redactQuery(c.RawQuery)
	}
	if c.Fragment != "" && !pointerFragment(c.Fragment) {
		c.Fragment, c.RawFragment = redacted, ""
	}
	return &c
}

// pointerFragment reports a fragment that is a JSON pointer
// ("/components/schemas/Pet"), as a $ref's is: it says which part of a
// document an error is about, and holds no credential. One with '=' or
// '&' (an implicit grant's #access_token=...) is not taken for one.
func pointerFragment(f string) bool {
	return strings.HasPrefix(f, "/") && !strings.ContainsAny(f, "=&")
}

// redactQuery masks each value of a raw query, keeping keys and order.
func redactQuery(q string) string {
	items := strings.Split(q, "&")
	for i, it := range items {
		if it == "" {
			continue
		}
		if k, _, ok := strings.Cut(it, "="); ok {
			items[i] = k + "=" + redacted
		} else {
			items[i] = redacted
		}
	}
	return strings.Join(items, "&")
}

// redactUnparsed masks a URL that url.Parse refuses: everything from the
// first '?' or '#', and any userinfo.
func redactUnparsed(raw string) string {
	s := raw
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i] + "?" + redacted
	}
	if i := strings.Index(s, "://"); i >= 0 {
		rest := s[i+3:]
		end := strings.IndexAny(rest, "/?")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
			s = s[:i+3] + redacted + rest[at:]
		}
	}
	return s
}

// publicLocation is the requested URL as Result.Location holds it: without
// userinfo or fragment, and with the query masked as RedactURL masks it.
// Relative servers URLs resolve against it, so none inherits a credential
// of the spec's URL.
func publicLocation(u *url.URL) *url.URL {
	if u == nil {
		return nil
	}
	if isFile(u) {
		c := *u
		c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = "", false, "", ""
		return &c
	}
	c := redactParsed(u)
	c.User = nil
	c.Fragment, c.RawFragment = "", ""
	return c
}

// urlInText finds what looks like a URL in an error message or a warning:
// a scheme, "://", and what follows up to a space or a quote.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>` + "`" + `]+`)

// scrubber masks, in text specloader returns, every URL (RedactURL) and the
// secrets of the spec's own URL wherever they appear. It is the last line:
// messages specloader writes itself name URLs through displayURL already,
// but kin-openapi's and net/http's messages quote URLs as they are,
// including the credentials a relative $ref inherits from the spec's URL.
type scrubber struct {
	secrets []string
}

// newScrubber collects the secrets of the source URL: the userinfo, and
// query values long enough not to be ordinary words (every query value is
// masked wherever it appears in a URL, whatever its length).
func newScrubber(loc *url.URL) *scrubber {
	s := &scrubber{}
	if loc == nil || isFile(loc) {
		return s
	}
	add := func(v string, min int) {
		if len(v) >= min && v != redacted {
			s.secrets = append(s.secrets, v)
			if e := url.QueryEscape(v); e != v {
				s.secrets = append(s.secrets, e)
			}
		}
	}
	if loc.User != nil {
		if p, ok := loc.User.Password(); ok {
			add(p, 4)
		} else {
			add(loc.User.Username(), 4)
		}
	}
	for _, vs := range loc.Query() {
		for _, v := range vs {
			add(v, 12)
		}
	}
	return s
}

func (s *scrubber) text(t string) string {
	t = urlInText.ReplaceAllStringFunc(t, func(m string) string {
		// Punctuation that ends a sentence is not part of the URL.
		trimmed := strings.TrimRight(m, ".,;:)]}")
		return RedactURL(trimmed) + m[len(trimmed):]
	})
	for _, v := range s.secrets {
		t = strings.ReplaceAll(t, v, redacted)
	}
	return t
}

// error returns err with its message scrubbed, still matching what err
// matches with errors.Is and errors.As (ErrFetch, context.Canceled).
func (s *scrubber) error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := s.text(msg); clean != msg {
		return &scrubbedError{msg: clean, err: err}
	}
	return err
}

func (s *scrubber) all(ts []string) []string {
	for i, t := range ts {
		ts[i] = s.text(t)
	}
	return ts
}

// scrubbedError is an error whose message had credentials masked.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }
