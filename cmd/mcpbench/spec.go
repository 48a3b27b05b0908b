package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// writeBenchSpec writes the OpenAPI 3.0 document and the whitelist for eps
// into dir and returns their paths. With outputSchemas false the 200
// responses carry no schema, so the bridge builds no output schema (and
// sends no structuredContent).
func writeBenchSpec(dir, upstreamURL string, eps []*endpoint, outputSchemas bool) (spec, whitelist string, err error) {
	paths := map[string]any{}
	for _, e := range eps {
		paths[e.Template] = map[string]any{"get": operation(e, outputSchemas)}
	}
	doc := map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{
			"title":       "mcpbench upstream",
			"version":     "1.0.0",
			"description": "Deterministic loopback API used by mcpbench (GitHub-like users and issues).",
		},
		"servers":    []any{map[string]any{"url": upstreamURL}},
		"paths":      paths,
		"components": map[string]any{"schemas": componentSchemas()},
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", "", fmt.Errorf("encoding the benchmark spec: %w", err)
	}
	spec = filepath.Join(dir, "mcpbench.openapi.json")
	if err := os.WriteFile(spec, data, 0o644); err != nil {
		return "", "", fmt.Errorf("writing the benchmark spec: %w", err)
	}
	var wl strings.Builder
	wl.WriteString("tools:\n")
	for _, e := range eps {
		fmt.Fprintf(&wl, "  - operationId: %s\n    name: %s\n", e.OpID, e.Tool)
	}
	whitelist = filepath.Join(dir, "mcpbench.whitelist.yaml")
	if err := os.WriteFile(whitelist, []byte(wl.String()), 0o644); err != nil {
		return "", "", fmt.Errorf("writing the benchmark whitelist: %w", err)
	}
	return spec, whitelist, nil
}

func operation(e *endpoint, outputSchemas bool) map[string]any {
	pathParam := func(name, desc string) map[string]any {
		return map[string]any{"name": name, "in": "path", "required": true, "description": desc, "schema": map[string]any{"type": "string"}}
	}
	var params []any
	var schema, summary string
	switch e.Size {
	case "small":
		summary, schema = "Get a user", "User"
		params = append(params, pathParam("username", "The handle of the user."))
	default:
		params = append(params, pathParam("owner", "Account owner of the repository."), pathParam("repo", "Name of the repository."))
		schema = "IssueSearchResult"
		if e.Size == "1m" {
			summary = "Export every issue of a repository"
			params = append(params, map[string]any{
				"name": "state", "in": "query", "description": "Which issues to export.",
				"schema": map[string]any{"type": "string", "enum": []any{"open", "closed", "all"}, "default": "open"},
			})
		} else {
			summary = "Search the issues of a repository"
			if e.Pretty {
				summary += " (indented response)"
			}
			params = append(params,
				map[string]any{"name": "q", "in": "query", "required": true, "description": "Search qualifiers.", "schema": map[string]any{"type": "string", "minLength": 1}},
				map[string]any{"name": "per_page", "in": "query", "description": "Results per page (max 100).", "schema": map[string]any{"type": "integer", "minimum": 1, "maximum": 100, "default": 30}},
			)
		}
	}
	content := map[string]any{}
	if outputSchemas {
		content["schema"] = map[string]any{"$ref": "#/components/schemas/" + schema}
	}
	return map[string]any{
		"operationId": e.OpID,
		"summary":     summary,
		"tags":        []any{"bench"},
		"parameters":  params,
		"responses": map[string]any{
			"200": map[string]any{"description": "OK", "content": map[string]any{"application/json": content}},
			"404": map[string]any{"description": "Not found"},
		},
	}
}

func componentSchemas() map[string]any {
	str := map[string]any{"type": "string"}
	integer := map[string]any{"type": "integer"}
	boolean := map[string]any{"type": "boolean"}
	ref := func(n string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + n} }
	simpleUser := map[string]any{
		"login": str, "id": integer, "node_id": str,
		"type": str, "site_admin": boolean,
	}
	user := map[string]any{
		"login": str, "id": integer, "node_id": str, "type": str, "site_admin": boolean,
		"name": str, "company": str, "location": str, "public_repos": integer, "followers": integer,
		"created_at": map[string]any{"type": "string", "format": "date-time"},
	}
	return map[string]any{
		"SimpleUser": map[string]any{"type": "object", "required": []any{"login", "id"}, "properties": simpleUser},
		"User":       map[string]any{"type": "object", "required": []any{"login", "id", "type"}, "properties": user},
		"Label": map[string]any{"type": "object", "required": []any{"id", "name"}, "properties": map[string]any{
			"id": integer, "name": str, "color": str, "default": boolean,
		}},
		"Reactions": map[string]any{"type": "object", "properties": map[string]any{
			"total_count": integer, "+1": integer, "-1": integer, "heart": integer, "rocket": integer,
		}},
		"Issue": map[string]any{"type": "object", "required": []any{"id", "number", "title", "state", "user"}, "properties": map[string]any{
			"id": integer, "number": integer, "title": str,
			"state":              map[string]any{"type": "string", "enum": []any{"open", "closed"}},
			"locked":             boolean,
			"user":               ref("SimpleUser"),
			"labels":             map[string]any{"type": "array", "items": ref("Label")},
			"assignees":          map[string]any{"type": "array", "items": ref("SimpleUser")},
			"comments":           integer,
			"created_at":         map[string]any{"type": "string", "format": "date-time"},
			"updated_at":         map[string]any{"type": "string", "format": "date-time"},
			"closed_at":          map[string]any{"type": "string", "format": "date-time", "nullable": true},
			"author_association": str,
			"html_url":           map[string]any{"type": "string", "format": "uri"},
			"body":               str,
			"reactions":          ref("Reactions"),
			"score":              map[string]any{"type": "number"},
		}},
		"IssueSearchResult": map[string]any{"type": "object", "required": []any{"total_count", "items"}, "properties": map[string]any{
			"total_count":        integer,
			"incomplete_results": boolean,
			"items":              map[string]any{"type": "array", "items": ref("Issue")},
		}},
	}
}

// githubPicks are 20 operations an agent would typically use, chosen for a
// realistic mix of small and very large response schemas.
func githubPicks() []string {
	return []string{
		"repos/get", "repos/list-for-org", "repos/get-content", "repos/list-commits",
		"repos/compare-commits", "issues/list-for-repo", "issues/get", "issues/create",
		"issues/create-comment", "issues/list-comments", "pulls/list", "pulls/get",
		"pulls/create", "pulls/list-files", "search/issues-and-pull-requests",
		"search/code", "search/repositories", "users/get-by-username",
		"actions/list-workflow-runs-for-repo", "git/get-ref",
	}
}

// writeGitHubWhitelist writes a 20-operation whitelist for the GitHub spec:
// githubPicks, with any the spec lacks replaced by operations spread evenly
// over the spec, so the list always has 20 entries.
func writeGitHubWhitelist(dir, specPath string) (string, error) {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return "", fmt.Errorf("reading the GitHub spec: %w", err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("decoding the GitHub spec: %w", err)
	}
	var all []string
	for _, item := range doc.Paths {
		for method, raw := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
			default:
				continue
			}
			var op struct {
				OperationID string `json:"operationId"`
			}
			if json.Unmarshal(raw, &op) == nil && op.OperationID != "" {
				all = append(all, op.OperationID)
			}
		}
	}
	slices.Sort(all)
	var picks []string
	for _, id := range githubPicks() {
		if _, found := slices.BinarySearch(all, id); found {
			picks = append(picks, id)
		}
	}
	for i := 0; len(picks) < 20 && i < len(all); i += max(1, len(all)/20) {
		if !slices.Contains(picks, all[i]) {
			picks = append(picks, all[i])
		}
	}
	var wl strings.Builder
	wl.WriteString("tools:\n")
	for _, id := range picks {
		fmt.Fprintf(&wl, "  - operationId: %s\n", id)
	}
	path := filepath.Join(dir, "github-20.whitelist.yaml")
	if err := os.WriteFile(path, []byte(wl.String()), 0o644); err != nil {
		return "", fmt.Errorf("writing the GitHub whitelist: %w", err)
	}
	return path, nil
}
