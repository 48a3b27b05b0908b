package request

import (
	"encoding/base64"
	"maps"
	"net/http"
	"strings"
)

// SchemeSecret is the configured secret of one of the spec's security
// schemes (components.securitySchemes, Swagger 2.0 securityDefinitions).
// The scheme's definition says how it is sent (see [SchemeUse]).
type SchemeSecret struct {
	// Value is an apiKey's value, or the token of an http bearer, oauth2
	// or openIdConnect scheme.
	Value string
	// User and Password are an http basic scheme's.
	User, Password string
	// Grant: an oauth2 scheme whose token an OAuth 2.0 client credentials
	// grant of the upstream client supplies when the request is sent
	// (Value is then empty).
	Grant bool
}

// Secrets are the values the sanitizer masks.
func (s SchemeSecret) Secrets() []string {
	var out []string
	for _, v := range []string{s.Value, s.Password} {
		if v != "" {
			out = append(out, v)
		}
	}
	if s.User != "" || s.Password != "" {
		out = append(out, base64.StdEncoding.EncodeToString([]byte(s.User+":"+s.Password)))
	}
	return out
}

// SchemeUse is one security scheme an operation's requests carry, as the
// spec defines it. Plain data: it is part of a [Plan].
type SchemeUse struct {
	Name   string // the scheme's name in the spec
	Type   string // apiKey, http, oauth2 or openIdConnect
	Scheme string // http: basic or bearer, lower case
	In     string // apiKey: header, query or cookie
	Param  string // apiKey: the header, query parameter or cookie name
}

// SetsAuthorization reports whether the scheme is sent in the
// Authorization header.
func (u SchemeUse) SetsAuthorization() bool {
	switch u.Type {
	case "http", "oauth2", "openIdConnect":
		return true
	case "apiKey":
		return u.In == "header" && SameHeaderName(u.Param, "Authorization")
	}
	return false
}

// WithSchemes is c with the credentials of the schemes uses (their secrets
// in secrets) added. A scheme's credential is more specific than the
// credentials configured for every call, so it wins where both name the
// same header, query parameter or cookie (as lenient servers read names:
// see SameHeaderName and SameParamName), and a scheme sent in the
// Authorization header replaces the configured bearer token or basic
// auth. grant is the name of the oauth2 scheme whose token the upstream
// client's grant adds when sending ("" when none). c is not modified.
func (c Credentials) WithSchemes(uses []SchemeUse, secrets map[string]SchemeSecret) (out Credentials, grant string) {
	out = c
	if len(uses) == 0 {
		return out, ""
	}
	out.Headers, out.Query, out.Cookies = maps.Clone(c.Headers), maps.Clone(c.Query), maps.Clone(c.Cookies)
	put := func(m *map[string]string, name, v string, same func(a, b string) bool) {
		for k := range *m {
			if same(k, name) {
				delete(*m, k)
			}
		}
		if *m == nil {
			*m = map[string]string{}
		}
		(*m)[name] = v
	}
	clearAuthorization := func() {
		out.BearerToken, out.BasicUser, out.BasicPassword = "", "", ""
		for k := range out.Headers {
			if SameHeaderName(k, "Authorization") {
				delete(out.Headers, k)
			}
		}
	}
	for _, u := range uses {
		s := secrets[u.Name]
		if u.SetsAuthorization() {
			clearAuthorization()
		}
		switch u.Type {
		case "apiKey":
			switch u.In {
			case "header":
				put(&out.Headers, http.CanonicalHeaderKey(strings.TrimSpace(u.Param)), s.Value, SameHeaderName)
			case "query":
				put(&out.Query, u.Param, s.Value, SameParamName)
			case "cookie":
				put(&out.Cookies, u.Param, s.Value, SameParamName)
			}
		case "http":
			if u.Scheme == "basic" {
				out.BasicUser, out.BasicPassword = s.User, s.Password
			} else {
				out.BearerToken = s.Value
			}
		case "oauth2", "openIdConnect":
			if s.Grant {
				grant = u.Name
			} else {
				out.BearerToken = s.Value
			}
		}
	}
	return out, grant
}
