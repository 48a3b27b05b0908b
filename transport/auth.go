package transport

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// principal is an authenticated caller. Its id is stable and carries no
// secret: "api-key:N" (the index of the matching key) or "jwt:ISS|SUB".
type principal struct {
	id      string
	subject string    // a JWT's sub claim, whole; "" for API keys
	expires time.Time // zero for API keys
	scopes  []string
}

// authError is why a request was not authenticated. A zero code means no
// credential was presented (RFC 6750 §3.1: then the challenge has no error).
type authError struct {
	code string // "invalid_token" or ""
	desc string // safe for the client: never echoes the credential
}

// authenticator checks the inbound credential of every MCP request.
type authenticator struct {
	keys           [][sha256.Size]byte // digests of HTTPOptions.APIKeys
	keyIDs         []string            // the caller each key is: api-key:NAME or api-key:N
	allowKeyHeader bool
	jwt            *jwtVerifier // nil without JWKSURL
	resourceURL    string       // HTTPOptions.ResourceURL; "" derives it per request
	advertise      bool         // HTTPOptions.advertiseOAuth: 401s name the RFC 9728 metadata

	// bind stores the principal where go-sdk looks for it; see bindPrincipal.
	bind func(http.Handler) http.Handler
}

// APIKeyID is the caller id of the i-th inbound API key, names being
// their names ("" or missing: unnamed): api-key:NAME, or api-key:i for an
// unnamed key.
func APIKeyID(i int, names []string) string {
	if i < len(names) && names[i] != "" {
		return "api-key:" + names[i]
	}
	return "api-key:" + strconv.Itoa(i)
}

func newAuthenticator(o HTTPOptions, jwt *jwtVerifier) *authenticator {
	a := &authenticator{
		allowKeyHeader: o.AllowAPIKeyHeader,
		jwt:            jwt,
		resourceURL:    o.ResourceURL,
		advertise:      o.advertiseOAuth(),
	}
	for i, k := range o.APIKeys {
		a.keys = append(a.keys, sha256.Sum256([]byte(k)))
		a.keyIDs = append(a.keyIDs, APIKeyID(i, o.APIKeyNames))
	}
	a.bind = auth.RequireBearerToken(principalTokenInfo, &auth.RequireBearerTokenOptions{
		AllowMissingExpiration: true,      // API keys do not expire
		ClockSkew:              jwtLeeway, // exp was already checked with this leeway
	})
	return a
}

// authenticate returns the caller of r, or why it could not be established.
// The Authorization header decides when present; X-API-Key is read only when
// allowed and no Authorization header was sent.
func (a *authenticator) authenticate(r *http.Request) (principal, *authError) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, _ := strings.Cut(strings.TrimSpace(h), " ")
		token = strings.TrimSpace(token)
		if !strings.EqualFold(scheme, "Bearer") || token == "" {
			return principal{}, &authError{desc: "a Bearer token is required"}
		}
		if p, ok := a.matchKey(token); ok {
			return p, nil
		}
		if a.jwt != nil && strings.Count(token, ".") == 2 {
			return a.jwt.verify(r.Context(), token)
		}
		return principal{}, &authError{code: "invalid_token", desc: "unknown API key or invalid token"}
	}
	if a.allowKeyHeader {
		if k := r.Header.Get("X-API-Key"); k != "" {
			if p, ok := a.matchKey(k); ok {
				return p, nil
			}
			return principal{}, &authError{code: "invalid_token", desc: "unknown API key"}
		}
	}
	return principal{}, &authError{desc: "authentication required"}
}

// matchKey compares the SHA-256 digest of candidate with every configured
// key digest in constant time, without stopping at the first match, so that
// neither the key's length nor its position leaks through timing.
func (a *authenticator) matchKey(candidate string) (principal, bool) {
	d := sha256.Sum256([]byte(candidate))
	match := -1
	for i := range a.keys {
		if subtle.ConstantTimeCompare(d[:], a.keys[i][:]) == 1 && match < 0 {
			match = i
		}
	}
	if match < 0 {
		return principal{}, false
	}
	return principal{id: a.keyIDs[match]}, true
}

// challenge answers 401 with the RFC 6750 WWW-Authenticate header. It names
// the RFC 9728 metadata (resource_metadata) only when an authorization
// server stands behind the bridge: MCP clients such as the Inspector start an
// OAuth flow when they see it, which cannot succeed with API keys alone.
//
// The request body, if any, has not been read: the connection is closed after
// the answer, so that net/http sends it at once instead of first draining a
// body that may never come.
func (a *authenticator) challenge(w http.ResponseWriter, r *http.Request, e *authError) {
	var params []string
	if a.advertise {
		params = append(params, fmt.Sprintf("resource_metadata=%q", metadataURL(a.resource(r))))
	}
	if e.code != "" {
		params = append(params, fmt.Sprintf("error=%q", e.code), fmt.Sprintf("error_description=%q", e.desc))
	}
	challenge := "Bearer"
	if len(params) > 0 {
		challenge += " " + strings.Join(params, ", ")
	}
	w.Header().Set("WWW-Authenticate", challenge)
	closeUnreadBody(w, r)
	http.Error(w, "Unauthorized: "+e.desc, http.StatusUnauthorized)
}

// resource is the RFC 9728 resource identifier of this server as seen by r.
func (a *authenticator) resource(r *http.Request) string {
	if a.resourceURL != "" {
		return a.resourceURL
	}
	return derivedResourceURL(r)
}

// principalKey carries the authenticated principal in a request context.
type principalKey struct{}

func principalFrom(ctx context.Context) (principal, bool) {
	p, ok := ctx.Value(principalKey{}).(principal)
	return p, ok
}

// bindPrincipal hands the authenticated principal to go-sdk as an
// auth.TokenInfo, so that stateful streamable sessions are bound to the user
// that created them (go-sdk answers 403 to another user presenting the same
// Mcp-Session-Id). The context key go-sdk reads is unexported and only
// auth.RequireBearerToken sets it, so the request passes through that
// middleware with a placeholder bearer value, whose verifier returns the
// principal established by authenticate; the placeholder is removed again
// before go-sdk sees the request. The real credential was removed earlier
// (see stripCredentials).
func (a *authenticator) bindPrincipal(w http.ResponseWriter, r *http.Request, p principal, next http.Handler) {
	r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
	r.Header.Set("Authorization", "Bearer authenticated-by-mcpbridge")
	a.bind(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del("Authorization")
		next.ServeHTTP(w, r)
	})).ServeHTTP(w, r)
}

// principalTokenInfo is the auth.TokenVerifier used by bindPrincipal.
func principalTokenInfo(ctx context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
	p, ok := principalFrom(ctx)
	if !ok {
		return nil, auth.ErrInvalidToken // unreachable: bindPrincipal sets it
	}
	ti := &auth.TokenInfo{UserID: p.id, Expiration: p.expires, Scopes: p.scopes}
	if r != nil || p.subject != "" {
		ti.Extra = map[string]any{}
	}
	if r != nil {
		ti.Extra["remote"] = r.RemoteAddr
	}
	if p.subject != "" {
		// The subject as the token says it, not parsed back out of the
		// id: a sub may hold '|' itself (Auth0's "auth0|123").
		ti.Extra["sub"] = p.subject
	}
	return ti, nil
}

// stripCredentials returns a copy of r without the inbound credential
// headers, so that nothing downstream (go-sdk, tool handlers through
// mcp.RequestExtra.Header, their logs or upstream requests) can see them.
// Cookies go too: a browser client's cookies for the bridge's host are no
// business of a tool.
func stripCredentials(r *http.Request) *http.Request {
	if r.Header.Get("Authorization") == "" && r.Header.Get("X-API-Key") == "" && r.Header.Get("Cookie") == "" {
		return r
	}
	r = r.Clone(r.Context())
	r.Header.Del("Authorization")
	r.Header.Del("X-API-Key")
	r.Header.Del("Cookie")
	return r
}
