package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"go.uber.org/zap"
)

// jwksFetchTimeout bounds one JWKS download, jwksMaxBytes its size (a key
// set of a few dozen keys is a few KiB).
const (
	jwksFetchTimeout = 10 * time.Second
	jwksMaxBytes     = 1 << 20
)

// jwksClient is the HTTP client of JWKS downloads: redirects are followed
// only within the JWKS URL's origin (at most 5), and a body past
// jwksMaxBytes fails the download instead of being read on.
func jwksClient() *http.Client {
	return &http.Client{
		Transport: limitedBodies{http.DefaultTransport, jwksMaxBytes},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("JWKS: more than 5 redirects")
			}
			if from := via[0].URL; req.URL.Scheme != from.Scheme || req.URL.Host != from.Host {
				return fmt.Errorf("JWKS: redirect to another origin (%s://%s) refused", req.URL.Scheme, req.URL.Host)
			}
			return nil
		},
	}
}

// limitedBodies is a RoundTripper whose response bodies fail past max bytes.
type limitedBodies struct {
	next http.RoundTripper
	max  int64
}

func (l limitedBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(r)
	if err == nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: l.max}
	}
	return resp, err
}

// cappedBody reads at most left bytes, then fails.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (c *cappedBody) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, fmt.Errorf("JWKS: body larger than %d bytes", jwksMaxBytes)
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}

// jwtVerifier checks bearer JWTs: signature against the JWKS, issuer,
// audience, expiry and subject (both required), with jwtLeeway of clock
// skew.
type jwtVerifier struct {
	keys   keyfunc.Keyfunc
	parser *jwt.Parser
	issuer string
}

// newJWTVerifier fetches the JWKS once (a failure is logged, not fatal: keys
// are fetched again for an unknown key ID, at most every 5 minutes) and
// refreshes it hourly until ctx is done.
func newJWTVerifier(ctx context.Context, o HTTPOptions, log *zap.Logger) (*jwtVerifier, error) {
	audience := o.JWTAudience
	if audience == "" {
		audience = o.ResourceURL
	}
	keys, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{o.JWKSURL}, keyfunc.Override{
		Client:      jwksClient(),
		HTTPTimeout: jwksFetchTimeout,
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) {
				log.Warn("fetching JWKS failed", zap.String("url", u), zap.Error(err))
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("loading JWKS %s: %w", o.JWKSURL, err)
	}
	return &jwtVerifier{
		keys:   keys,
		issuer: o.JWTIssuer,
		parser: jwt.NewParser(
			// Asymmetric algorithms only. HMAC ("HS*") and "none" are refused:
			// a resource server verifying against a JWKS has no shared secret,
			// and accepting HS256 would let a public key be used as one.
			jwt.WithValidMethods([]string{
				"RS256", "RS384", "RS512",
				"PS256", "PS384", "PS512",
				"ES256", "ES384", "ES512",
				"EdDSA",
			}),
			jwt.WithIssuer(o.JWTIssuer),
			jwt.WithAudience(audience),
			jwt.WithExpirationRequired(),
			jwt.WithLeeway(jwtLeeway),
		),
	}, nil
}

// verify validates token and returns its principal. The error description
// names the failed check but never the token or its claims' values.
func (v *jwtVerifier) verify(ctx context.Context, token string) (principal, *authError) {
	claims := jwt.MapClaims{}
	if _, err := v.parser.ParseWithClaims(token, claims, v.keys.KeyfuncCtx(ctx)); err != nil {
		return principal{}, &authError{code: "invalid_token", desc: jwtErrorDescription(err)}
	}
	sub, err := claims.GetSubject()
	if err != nil || sub == "" {
		// The subject is the caller: without one every such token would
		// share one quota, and one another's sessions and cancellations
		// (RFC 9068 requires it of access tokens).
		return principal{}, &authError{code: "invalid_token", desc: "token lacks a required claim"}
	}
	p := principal{id: "jwt:" + v.issuer + "|" + sub, subject: sub, scopes: scopes(claims)}
	if exp, err := claims.GetExpirationTime(); err == nil && exp != nil {
		p.expires = exp.Time
	}
	return p, nil
}

func jwtErrorDescription(err error) string {
	for _, c := range []struct {
		err  error
		desc string
	}{
		{jwt.ErrTokenExpired, "token expired"},
		{jwt.ErrTokenNotValidYet, "token not valid yet"},
		{jwt.ErrTokenInvalidAudience, "token audience does not match this resource"},
		{jwt.ErrTokenInvalidIssuer, "token issuer not accepted"},
		{jwt.ErrTokenRequiredClaimMissing, "token lacks a required claim"},
		{jwt.ErrTokenMalformed, "malformed token"},
		{jwt.ErrTokenSignatureInvalid, "token signature invalid"},
		{jwt.ErrTokenUnverifiable, "token signature could not be verified"},
	} {
		if errors.Is(err, c.err) {
			return c.desc
		}
	}
	return "invalid token"
}

// scopes reads the OAuth "scope" claim (space-separated, RFC 8693 and
// RFC 9068), or else "scp", which issuers write either way: an array
// (Okta) or, like "scope", one space-separated string (Microsoft Entra
// ID's delegated tokens). An array "scope" is read too. A token with
// neither is read by its "roles" (Microsoft Entra ID's app-only tokens,
// from the client-credentials flow, carry the application roles granted
// to the calling app there and no "scp"; RFC 9068 section 2.2.3.1 names
// the claim too).
func scopes(claims jwt.MapClaims) []string {
	for _, name := range []string{"scope", "scp", "roles"} {
		switch v := claims[name].(type) {
		case string:
			return strings.Fields(v)
		case []any:
			var out []string
			for _, s := range v {
				if s, ok := s.(string); ok {
					out = append(out, s)
				}
			}
			return out
		}
	}
	return nil
}
