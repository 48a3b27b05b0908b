package request

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// ServerURL returns the base URL of the first server in servers, with its
// {variables} filled from vars (then from each variable's default) and a
// relative URL resolved against specLocation (the URL or file the spec was
// loaded from). It returns "" and no error when servers is empty. A relative
// server URL with no http(s) spec location to resolve against is an error.
func ServerURL(servers openapi3.Servers, vars map[string]string, specLocation *url.URL) (string, error) {
	if len(servers) == 0 || servers[0] == nil {
		return "", nil
	}
	s := servers[0]
	raw := s.URL
	for name, v := range s.Variables {
		val, ok := vars[name]
		if !ok {
			if v == nil {
				continue
			}
			val = v.Default
		}
		if v != nil && len(v.Enum) > 0 && ok {
			found := false
			for _, e := range v.Enum {
				if e == val {
					found = true
					break
				}
			}
			if !found {
				return "", fmt.Errorf("server variable %q: value %q is not one of %v", name, val, v.Enum)
			}
		}
		raw = strings.ReplaceAll(raw, "{"+name+"}", val)
	}
	if strings.Contains(raw, "{") {
		return "", fmt.Errorf("server URL %q has a variable with no value", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("parsing server URL %q: %w", raw, err)
	}
	if u.IsAbs() {
		return checkBase(u)
	}
	if specLocation == nil || (specLocation.Scheme != "http" && specLocation.Scheme != "https") {
		return "", fmt.Errorf("server URL %q is relative and the spec was not loaded from an http(s) URL: set the upstream base URL explicitly", raw)
	}
	return checkBase(specLocation.ResolveReference(u))
}

// ParseBaseURL validates a configured upstream base URL.
func ParseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the whole URL, credentials included
		}
		return nil, fmt.Errorf("parsing upstream base URL: %w", err)
	}
	if _, err := checkBase(u); err != nil {
		return nil, err
	}
	return u, nil
}

// redactedBase is u for an error message, its user information masked:
// url.URL.Redacted masks only a password, and a token is often given as
// the user name (https://TOKEN@host).
func redactedBase(u *url.URL) string {
	if u.User == nil {
		return u.String()
	}
	c := *u
	c.User = url.User("xxxxx")
	return c.String()
}

func checkBase(u *url.URL) (string, error) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("upstream base URL %q: scheme must be http or https", redactedBase(u))
	}
	if u.Host == "" {
		return "", fmt.Errorf("upstream base URL %q has no host", redactedBase(u))
	}
	if u.User != nil {
		return "", fmt.Errorf("upstream base URL %q must not carry credentials: configure them as upstream credentials", redactedBase(u))
	}
	u.Fragment = ""
	return u.String(), nil
}
