package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// caseMaps are the config file's maps whose keys are names read
// case-sensitively elsewhere: query parameter and cookie names the upstream
// reads, the spec's server variable names. Viper lowercases every key it
// reads from a file ("apiKey" became "apikey"), so these maps are read
// again from the file as written.
var caseMaps = []string{"server-variables", "upstream-auth.query", "upstream-auth.headers", "upstream-auth.cookies"}

// schemeKeys are the keys of an upstream-auth.schemes entry, and
// oauth2Keys those of its oauth2 grant (as Config's tags say).
var (
	schemeKeys = []string{"value", "user", "password", "oauth2"}
	oauth2Keys = []string{"tokenURL", "clientID", "clientSecret", "scopes", "audience", "resource"}
)

// fileSchemes reads upstream-auth.schemes from the config file data as
// written: viper lowercases its keys and reads a dot in them as nesting,
// and scheme names are the spec's, case-sensitive, dots allowed. An entry
// is a scalar (its value) or a mapping of schemeKeys (matched ignoring
// case, as viper matches the others); a null or empty one is kept empty,
// for Validate to name. nil when the file has no such map.
func fileSchemes(data []byte) (map[string]SchemeAuth, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	n := yamlChild(yamlChild(yamlResolve(doc.Content[0]), "upstream-auth"), "schemes")
	if n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null") {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("upstream-auth.schemes: want a mapping of scheme names to their secrets (line %d)", n.Line)
	}
	out := map[string]SchemeAuth{}
	lower := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := yamlResolve(n.Content[i]), yamlResolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("upstream-auth.schemes: line %d: a scheme name must be a string", k.Line)
		}
		name, where := k.Value, "upstream-auth.schemes."+k.Value
		if other, ok := lower[strings.ToLower(name)]; ok {
			if other == name {
				return nil, fmt.Errorf("%s: given twice (line %d)", where, k.Line)
			}
			return nil, fmt.Errorf("upstream-auth.schemes: %q and %q differ in case only: one of them is not the spec's name", min(name, other), max(name, other))
		}
		lower[strings.ToLower(name)] = name
		var s SchemeAuth
		switch {
		case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
		case v.Kind == yaml.ScalarNode:
			s.Value = v.Value
		case v.Kind == yaml.MappingNode:
			fields, err := yamlStrings(v, where, schemeKeys, "oauth2")
			if err != nil {
				return nil, err
			}
			s.Value, s.User, s.Password = fields["value"], fields["user"], fields["password"]
			if o := yamlChild(v, "oauth2"); o != nil && !(o.Kind == yaml.ScalarNode && o.ShortTag() == "!!null") {
				if o.Kind != yaml.MappingNode {
					return nil, fmt.Errorf("%s.oauth2: want a mapping of %s (line %d)", where, strings.Join(oauth2Keys, ", "), o.Line)
				}
				g, err := yamlStrings(o, where+".oauth2", oauth2Keys, "scopes")
				if err != nil {
					return nil, err
				}
				s.OAuth2 = OAuth2{TokenURL: g["tokenURL"], ClientID: g["clientID"], ClientSecret: g["clientSecret"], Audience: g["audience"], Resource: g["resource"]}
				if sc := yamlChild(o, "scopes"); sc != nil {
					switch sc.Kind {
					case yaml.SequenceNode:
						for _, it := range sc.Content {
							if it = yamlResolve(it); it.Kind != yaml.ScalarNode {
								return nil, fmt.Errorf("%s.oauth2.scopes: line %d: a scope must be a string", where, it.Line)
							}
							s.OAuth2.Scopes = append(s.OAuth2.Scopes, it.Value)
						}
					case yaml.ScalarNode: // "read write" or "read,write"
						for sc := range strings.FieldsFuncSeq(sc.Value, func(r rune) bool { return r == ',' || r == ' ' }) {
							s.OAuth2.Scopes = append(s.OAuth2.Scopes, sc)
						}
					default:
						return nil, fmt.Errorf("%s.oauth2.scopes: want a list (line %d)", where, sc.Line)
					}
				}
			}
		default:
			return nil, fmt.Errorf("%s: want a value, or a mapping of %s (line %d)", where, strings.Join(schemeKeys, ", "), v.Line)
		}
		out[name] = s
	}
	return out, nil
}

// yamlStrings reads mapping n's scalar members among keys (ignoring
// case), by their name in keys; a member named nested is skipped (read
// by the caller); another key is an error naming the nearest of keys.
func yamlStrings(n *yaml.Node, where string, keys []string, nested string) (map[string]string, error) {
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := yamlResolve(n.Content[i]), yamlResolve(n.Content[i+1])
		j := slices.IndexFunc(keys, func(s string) bool { return strings.EqualFold(s, k.Value) })
		if k.Kind != yaml.ScalarNode || j < 0 {
			msg := fmt.Sprintf("%s: unknown key %s (line %d)", where, k.Value, k.Line)
			if near := nearest(k.Value, keys); near != "" {
				msg = fmt.Sprintf("%s: unknown key %s (did you mean %s?) (line %d)", where, k.Value, near, k.Line)
			}
			return nil, errors.New(msg)
		}
		if strings.EqualFold(keys[j], nested) {
			continue
		}
		if v.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("%s.%s: want a string (line %d)", where, keys[j], v.Line)
		}
		if v.ShortTag() != "!!null" {
			out[keys[j]] = v.Value
		}
	}
	return out, nil
}

// fileCaseMaps returns the caseMaps the config file data holds, keyed by
// their dotted name, each with its keys as written and its scalar values as
// written (a null as ""). Keys are matched ignoring case, as viper does. A
// map of another shape is left out: viper's decoding reports it.
func fileCaseMaps(data []byte) (map[string]map[string]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	out := map[string]map[string]string{}
	for _, name := range caseMaps {
		n := yamlResolve(doc.Content[0])
		for part := range strings.SplitSeq(name, ".") {
			n = yamlChild(n, part)
		}
		if n == nil || n.Kind != yaml.MappingNode {
			continue
		}
		m := map[string]string{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := yamlResolve(n.Content[i]), yamlResolve(n.Content[i+1])
			if k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode {
				continue
			}
			if v.ShortTag() == "!!null" {
				m[k.Value] = ""
				continue
			}
			m[k.Value] = v.Value
		}
		out[name] = m
	}
	return out, nil
}

// yamlChild is the value under key (ignoring case) of mapping n, or nil.
func yamlChild(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := yamlResolve(n.Content[i]); k.Kind == yaml.ScalarNode && strings.EqualFold(k.Value, key) {
			return yamlResolve(n.Content[i+1])
		}
	}
	return nil
}

// yamlResolve follows an alias to the node it names.
func yamlResolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}
