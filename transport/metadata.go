package transport

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// wellKnownPRM is the RFC 9728 well-known path prefix.
const wellKnownPRM = "/.well-known/oauth-protected-resource"

// derivedResourceURL is the resource identifier of the /mcp endpoint as the
// request addressed it. Behind a TLS-terminating proxy the scheme is wrong:
// set HTTPOptions.ResourceURL there (forwarding headers are not trusted).
func derivedResourceURL(r *http.Request) string {
	u := url.URL{Scheme: "http", Host: r.Host, Path: "/mcp"}
	if r.TLS != nil {
		u.Scheme = "https"
	}
	return u.String()
}

// metadataURL is where RFC 9728 §3.1 puts the metadata of resource: the
// well-known path inserted between the host and the resource's path.
func metadataURL(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return resource // validated at startup; derived URLs always parse
	}
	u.Path = wellKnownPRM + strings.TrimSuffix(u.Path, "/")
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u.String()
}

// metadataHandler serves the protected resource metadata at the well-known
// path, at its /mcp suffix, and at the suffix of a configured ResourceURL's
// path. It is unauthenticated and readable cross-origin (go-sdk's
// auth.ProtectedResourceMetadataHandler does the encoding and CORS).
func (a *authenticator) metadataHandler(authServers []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resource := a.resource(r)
		if !a.servesMetadataPath(r.URL.Path, resource) {
			http.NotFound(w, r)
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodOptions:
		case http.MethodHead:
			r = r.Clone(r.Context())
			r.Method = http.MethodGet // net/http drops the body of a HEAD response
		default:
			w.Header().Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "Method Not Allowed", http.StatusMethodNotAllowed)
			return
		}
		auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:               resource,
			AuthorizationServers:   authServers,
			BearerMethodsSupported: []string{"header"},
			ResourceName:           "mcpbridge",
		}).ServeHTTP(w, r)
	})
}

func (a *authenticator) servesMetadataPath(path, resource string) bool {
	switch path {
	case wellKnownPRM, wellKnownPRM + "/mcp":
		return true
	}
	u, err := url.Parse(resource)
	return err == nil && u.Path != "" && u.Path != "/" && path == wellKnownPRM+strings.TrimSuffix(u.Path, "/")
}
