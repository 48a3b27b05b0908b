package bridge

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// buildRequest turns validated arguments into the upstream request. The URL
// is assembled from the tool's base URL and escaped path segments only: no
// argument can change the scheme, host, or path shape. Upstream credentials
// come from configuration, never from arguments.
func (b *Bridge) buildRequest(ctx context.Context, t *tool, args map[string]any) (*http.Request, error) {
	// Path.
	var path strings.Builder
	path.WriteString(strings.TrimRight(t.base.EscapedPath(), "/"))
	for _, seg := range t.path {
		if seg.Param < 0 {
			path.WriteString(seg.Lit)
			continue
		}
		p := t.params[seg.Param]
		v, ok := args[p.arg]
		if !ok || v == nil {
			return nil, &ArgumentError{Field: p.arg, Reason: "required path parameter is missing"}
		}
		enc, err := p.spec.encodePath(v)
		if err != nil {
			return nil, &ArgumentError{Field: p.arg, Reason: err.Error()}
		}
		if enc == "" {
			return nil, &ArgumentError{Field: p.arg, Reason: "path parameter must not be empty"}
		}
		path.WriteString(enc)
	}
	u := *t.base
	u.RawPath = path.String()
	unescaped, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return nil, fmt.Errorf("building path for %s: %w", t.label, err)
	}
	u.Path = unescaped

	// Query, headers, cookies.
	var query []byte
	if t.base.RawQuery != "" {
		query = append(query, t.base.RawQuery...)
	}
	header := make(http.Header, 4)
	var cookies []string
	for i := range t.params {
		p := &t.params[i]
		v, ok := args[p.arg]
		if !ok || p.spec.In == "path" {
			continue
		}
		switch p.spec.In {
		case "query":
			if len(query) > 0 {
				query = append(query, '&')
			}
			before := len(query)
			query, err = p.spec.appendQuery(query, v)
			if err != nil {
				return nil, &ArgumentError{Field: p.arg, Reason: err.Error()}
			}
			if len(query) == before && before > 0 {
				query = query[:before-1] // nothing was written: drop the '&'
			}
		case "header":
			hv, err := p.spec.headerValue(v)
			if err != nil {
				return nil, &ArgumentError{Field: p.arg, Reason: err.Error()}
			}
			if strings.ContainsAny(hv, "\r\n") {
				return nil, &ArgumentError{Field: p.arg, Reason: "header values must not contain line breaks"}
			}
			if hv != "" {
				header.Set(p.spec.Name, hv)
			}
		case "cookie":
			pairs, err := p.spec.cookiePairs(v)
			if err != nil {
				return nil, &ArgumentError{Field: p.arg, Reason: err.Error()}
			}
			cookies = append(cookies, pairs...)
		}
	}
	for _, kv := range b.creds.query {
		if len(query) > 0 {
			query = append(query, '&')
		}
		query = append(query, kv...)
	}
	u.RawQuery = string(query)

	// Body.
	var body []byte
	var contentType string
	if t.body != nil {
		if v, ok := args[bodyArg]; ok {
			body, contentType, err = t.body.encode(v)
			if err != nil {
				return nil, &ArgumentError{Field: bodyArg, Reason: err.Error()}
			}
		}
	}
	var rd *bytes.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	var req *http.Request
	if rd != nil {
		req, err = http.NewRequestWithContext(ctx, t.method, u.String(), rd)
	} else {
		req, err = http.NewRequestWithContext(ctx, t.method, u.String(), nil)
	}
	if err != nil {
		return nil, fmt.Errorf("building request for %s: %w", t.label, err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", t.accept)
	req.Header.Set("User-Agent", b.userAgent)
	if len(cookies) > 0 {
		cookies = append(cookies, b.creds.cookies...)
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	} else if len(b.creds.cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(b.creds.cookies, "; "))
	}
	for k, v := range b.creds.headers {
		req.Header.Set(k, v)
	}
	if b.creds.authorization != "" {
		req.Header.Set("Authorization", b.creds.authorization)
	}
	return req, nil
}

// preparedCredentials are the configured upstream credentials rendered once.
type preparedCredentials struct {
	authorization string
	headers       map[string]string
	query         []string // escaped key=value pairs
	cookies       []string // name=value pairs
}

func prepareCredentials(c Credentials) (preparedCredentials, error) {
	var p preparedCredentials
	switch {
	case c.BearerToken != "" && c.BasicUser != "":
		return p, fmt.Errorf("upstream credentials: bearer token and basic auth are mutually exclusive")
	case c.BearerToken != "":
		p.authorization = "Bearer " + c.BearerToken
	case c.BasicUser != "" || c.BasicPassword != "":
		p.authorization = "Basic " + base64.StdEncoding.EncodeToString([]byte(c.BasicUser+":"+c.BasicPassword))
	}
	p.headers = map[string]string{}
	for k, v := range c.Headers {
		name := http.CanonicalHeaderKey(strings.TrimSpace(k))
		if name == "" || strings.ContainsAny(name+v, "\r\n") {
			return p, fmt.Errorf("upstream header %q: invalid name or value", k)
		}
		if name == "Authorization" && p.authorization != "" {
			return p, fmt.Errorf("upstream header Authorization conflicts with the configured token")
		}
		p.headers[name] = v
	}
	for _, k := range sortedKeys(c.Query) {
		p.query = append(p.query, url.QueryEscape(k)+"="+url.QueryEscape(c.Query[k]))
	}
	for _, k := range sortedKeys(c.Cookies) {
		p.cookies = append(p.cookies, k+"="+c.Cookies[k])
	}
	return p, nil
}

// secrets lists every credential value, for the sanitizer.
func (c Credentials) secrets() []string {
	s := []string{c.BearerToken, c.BasicPassword}
	for _, v := range c.Headers {
		s = append(s, v)
	}
	for _, v := range c.Query {
		s = append(s, v)
	}
	for _, v := range c.Cookies {
		s = append(s, v)
	}
	if c.BasicUser != "" || c.BasicPassword != "" {
		s = append(s, base64.StdEncoding.EncodeToString([]byte(c.BasicUser+":"+c.BasicPassword)))
	}
	out := s[:0]
	for _, v := range s {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}
