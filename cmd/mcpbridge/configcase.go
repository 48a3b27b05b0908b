package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// caseMaps are the config file's maps whose keys are names read
// case-sensitively elsewhere: query parameter and cookie names the upstream
// reads, the spec's server variable names. Viper lowercases every key it
// reads from a file ("apiKey" became "apikey"), so these maps are read
// again from the file as written.
var caseMaps = []string{"server-variables", "upstream-auth.query", "upstream-auth.headers", "upstream-auth.cookies", schemesKey}

// schemesKey is the map of the security schemes' secrets, whose keys are
// the spec's scheme names (case-sensitive). fileCaseMaps gives its keys as
// written, each with "" (its values are mappings or scalars).
const schemesKey = "upstream-auth.schemes"

// keepSchemeCase gives cfg's upstream-auth.schemes their names as the
// config file writes them (written: those names). Two names that differ
// in case only are an error: viper merged them into one.
func keepSchemeCase(cfg *Config, written map[string]string) error {
	if len(written) == 0 {
		return nil
	}
	byLower := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(written)) {
		low := strings.ToLower(name)
		if other, ok := byLower[low]; ok {
			a, b := min(name, other), max(name, other)
			return fmt.Errorf("upstream-auth.schemes: %q and %q differ in case only, which the config file cannot tell apart", a, b)
		}
		byLower[low] = name
	}
	out := make(map[string]SchemeAuth, len(cfg.UpstreamAuth.Schemes))
	for k, v := range cfg.UpstreamAuth.Schemes {
		if name, ok := byLower[strings.ToLower(k)]; ok {
			k = name
		}
		out[k] = v
	}
	for _, name := range slices.Sorted(maps.Keys(written)) {
		if _, ok := out[name]; !ok {
			// viper drops an empty mapping or a null: the operator meant
			// to configure the scheme and would get no word of it.
			out[name] = SchemeAuth{} // Validate says it is empty
		}
	}
	cfg.UpstreamAuth.Schemes = out
	return nil
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
			if k.Kind == yaml.ScalarNode && name == schemesKey {
				m[k.Value] = "" // the names only
				continue
			}
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
