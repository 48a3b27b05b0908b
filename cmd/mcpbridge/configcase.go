package main

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// caseMaps are the config file's maps whose keys are names read
// case-sensitively elsewhere: query parameter and cookie names the upstream
// reads, the spec's server variable names. Viper lowercases every key it
// reads from a file ("apiKey" became "apikey"), so these maps are read
// again from the file as written.
var caseMaps = []string{"server-variables", "upstream-auth.query", "upstream-auth.headers", "upstream-auth.cookies"}

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
