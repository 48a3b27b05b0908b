package bridge

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge/request"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// SchemeSecret is the configured secret of one of the spec's security
// schemes; see [request.SchemeSecret].
type SchemeSecret = request.SchemeSecret

// AuthUse is what a request's security schemes ask of the upstream
// client (see [RequestAuth]).
type AuthUse struct {
	// Grant names the oauth2 scheme whose client credentials grant
	// supplies the request's bearer token ("" when none).
	Grant string
	// Authorization: the request's Authorization header comes from a
	// security scheme (or Grant), which a grant configured for every call
	// must not replace.
	Authorization bool
}

type authKey struct{}

// RequestAuth is the AuthUse of the tool call whose context ctx is (the
// zero AuthUse when the call's schemes ask nothing of the client). An
// upstream client that adds credentials of its own reads it.
func RequestAuth(ctx context.Context) AuthUse {
	u, _ := ctx.Value(authKey{}).(AuthUse)
	return u
}

// SchemeNames are the security schemes doc defines, sorted.
func SchemeNames(doc *openapi3.T) []string {
	if doc == nil || doc.Components == nil {
		return nil
	}
	var names []string
	for name := range doc.Components.SecuritySchemes {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// resolveSchemes checks each configured scheme secret against the scheme
// doc defines under that name, and keeps how each is sent.
func (c *Catalog) resolveSchemes(doc *openapi3.T) error {
	if len(c.opts.Schemes) == 0 {
		return nil
	}
	defined := SchemeNames(doc)
	c.schemes = map[string]request.SchemeUse{}
	var errs []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range c.opts.Schemes {
			if !yield(k) {
				return
			}
		}
	}) {
		sec := c.opts.Schemes[name]
		if !slices.Contains(defined, name) {
			errs = append(errs, fmt.Sprintf("security scheme %q: the spec defines no such scheme (it defines: %s)", name, listOrNone(defined)))
			continue
		}
		ref := doc.Components.SecuritySchemes[name]
		if ref == nil || ref.Value == nil {
			errs = append(errs, fmt.Sprintf("security scheme %q: the spec's definition is empty", name))
			continue
		}
		s := ref.Value
		use := request.SchemeUse{Name: name, Type: s.Type}
		want := ""
		switch s.Type {
		case "apiKey":
			use.In, use.Param = s.In, s.Name
			switch {
			case s.In != "header" && s.In != "query" && s.In != "cookie":
				errs = append(errs, fmt.Sprintf("security scheme %q: an apiKey in %q, which the bridge cannot send (header, query or cookie)", name, s.In))
				continue
			case strings.TrimSpace(s.Name) == "":
				errs = append(errs, fmt.Sprintf("security scheme %q: the apiKey has no name", name))
				continue
			case s.In != "query" && !httpToken(s.Name):
				// net/http would refuse every request (a transport error,
				// retried), or the Cookie header would say something else.
				errs = append(errs, fmt.Sprintf("security scheme %q: the apiKey's %s name %q is not a valid HTTP token", name, s.In, s.Name))
				continue
			case s.In == "cookie" && strings.ContainsAny(sec.Value, ";,\" \\"):
				errs = append(errs, fmt.Sprintf("security scheme %q: its value holds a character a cookie value cannot (;, comma, space, quote or backslash)", name))
				continue
			}
			want = "value"
		case "http":
			use.Scheme = strings.ToLower(s.Scheme)
			switch use.Scheme {
			case "basic":
				want = "user"
			case "bearer":
				want = "value"
			default:
				errs = append(errs, fmt.Sprintf("security scheme %q: HTTP %q authentication is not supported (basic and bearer are)", name, s.Scheme))
				continue
			}
		case "oauth2", "openIdConnect":
			want = "token"
		default:
			errs = append(errs, fmt.Sprintf("security scheme %q: type %q is not supported (apiKey, http, oauth2 and openIdConnect are)", name, s.Type))
			continue
		}
		basic := sec.User != "" || sec.Password != ""
		switch want {
		case "value":
			if sec.Value == "" || basic || sec.Grant {
				errs = append(errs, fmt.Sprintf("security scheme %q is %s: give it a value (no user, password or oauth2 grant)", name, describeScheme(use)))
				continue
			}
		case "user":
			if sec.User == "" || sec.Value != "" || sec.Grant {
				errs = append(errs, fmt.Sprintf("security scheme %q is HTTP basic: give it a user and a password (no value or oauth2 grant)", name))
				continue
			}
		case "token":
			if (sec.Value == "") == !sec.Grant || basic {
				errs = append(errs, fmt.Sprintf("security scheme %q is %s: give it either a value (a static access token) or an oauth2 client credentials grant, and no user or password", name, s.Type))
				continue
			}
		}
		c.schemes[name] = use
	}
	if len(errs) > 0 {
		return fmt.Errorf("upstream-auth.schemes: %s", strings.Join(errs, "; "))
	}
	return nil
}

// httpToken reports whether s is an RFC 9110 token (a header or cookie
// name).
func httpToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// describeScheme says how a scheme is sent, for messages.
func describeScheme(u request.SchemeUse) string {
	switch u.Type {
	case "apiKey":
		return fmt.Sprintf("an apiKey in the %s %q", u.In, u.Param)
	case "http":
		return "HTTP " + u.Scheme
	}
	return u.Type
}

// security picks the security schemes whose credentials op's requests
// carry: the operation's own requirements when it declares them, the
// document's otherwise; of those, the first (in the spec's order) whose
// schemes are all configured. An empty requirement ({}), or none at all
// (security: []), needs no credentials: nothing is attached. When no
// requirement can be met, unmet lists the unconfigured schemes they name
// and nothing is attached either.
func (c *Catalog) security(op whitelist.Operation) (uses []request.SchemeUse, unmet []string) {
	if len(c.schemes) == 0 {
		return nil, nil
	}
	var reqs openapi3.SecurityRequirements
	switch {
	case op.Op.Security != nil:
		reqs = *op.Op.Security
	case c.opts.Spec != nil:
		reqs = c.opts.Spec.Security
	}
	if len(reqs) == 0 {
		return nil, nil
	}
	for _, r := range reqs {
		names := slices.Sorted(func(yield func(string) bool) {
			for k := range r {
				if !yield(k) {
					return
				}
			}
		})
		ok := true
		for _, n := range names {
			if _, have := c.schemes[n]; !have {
				ok = false
				if !slices.Contains(unmet, n) {
					unmet = append(unmet, n)
				}
			}
		}
		if !ok {
			continue
		}
		uses = make([]request.SchemeUse, 0, len(names))
		for _, n := range names {
			uses = append(uses, c.schemes[n])
		}
		return uses, nil
	}
	slices.Sort(unmet)
	return nil, unmet
}

// toolCredentials are the credentials a request carrying uses sends.
func (c *Catalog) toolCredentials(uses []request.SchemeUse) (request.Credentials, AuthUse) {
	creds, grant := c.opts.Credentials.WithSchemes(uses, c.opts.Schemes)
	auth := AuthUse{Grant: grant, Authorization: grant != ""}
	for _, u := range uses {
		if u.SetsAuthorization() {
			auth.Authorization = true
		}
	}
	return creds, auth
}

// prepareAuth renders the credentials of every operation tool whose plan
// carries security schemes, once per distinct set of schemes.
func (c *Catalog) prepareAuth() error {
	if len(c.opts.Schemes) == 0 {
		return nil
	}
	type prepared struct {
		creds *request.Prepared
		auth  AuthUse
	}
	done := map[string]prepared{}
	for _, t := range c.tools {
		if len(t.plan.Auth) == 0 {
			continue
		}
		var key strings.Builder
		for _, u := range t.plan.Auth {
			fmt.Fprintf(&key, "%d:%s;", len(u.Name), u.Name)
		}
		p, ok := done[key.String()]
		if !ok {
			for _, u := range t.plan.Auth {
				if _, have := c.opts.Schemes[u.Name]; !have {
					return fmt.Errorf("%s: security scheme %q is not configured", t.plan.Label, u.Name)
				}
			}
			creds, auth := c.toolCredentials(t.plan.Auth)
			pc, err := creds.Prepare()
			if err != nil {
				return fmt.Errorf("credentials of the security schemes of %s: %w", t.plan.Label, err)
			}
			p = prepared{pc, auth}
			done[key.String()] = p
		}
		t.creds, t.auth = p.creds, p.auth
	}
	return nil
}

// warnUnmet logs, once for the whole catalog, the operations called
// without the credentials their security requirements ask for, per
// unconfigured scheme.
func (c *Catalog) warnUnmet(tools []*Tool) {
	perScheme := map[string][]string{}
	n := 0
	for _, t := range tools {
		if len(t.unmet) == 0 {
			continue
		}
		n++
		for _, s := range t.unmet {
			perScheme[s] = append(perScheme[s], t.def.Name)
		}
	}
	if n == 0 {
		return
	}
	var parts []string
	for _, s := range slices.Sorted(func(yield func(string) bool) {
		for k := range perScheme {
			if !yield(k) {
				return
			}
		}
	}) {
		names := perScheme[s]
		part := fmt.Sprintf("%s (%d: %s", s, len(names), strings.Join(names[:min(3, len(names))], ", "))
		if len(names) > 3 {
			part += ", …"
		}
		parts = append(parts, part+")")
	}
	c.log.Warn("operations whose security requirements name no configured scheme are called without scheme credentials: configure one of their schemes under upstream-auth.schemes",
		zap.Int("operations", n), zap.String("unconfigured_schemes", strings.Join(parts, "; ")))
}
