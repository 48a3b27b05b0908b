package bridge_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// searchCases are natural queries an agent would type, with the GitHub
// operation it wants.
var searchCases = []struct{ query, want string }{
	{"create an issue", "issues_create"},
	{"list issues of a repository", "issues_list-for-repo"},
	{"comment on an issue", "issues_create-comment"},
	{"close a pull request", "pulls_update"},
	{"create a pull request", "pulls_create"},
	{"merge a pull request", "pulls_merge"},
	{"list pull requests", "pulls_list"},
	{"get a repository", "repos_get"},
	{"create a repository for the authenticated user", "repos_create-for-authenticated-user"},
	{"delete a repository", "repos_delete"},
	{"list branches", "repos_list-branches"},
	{"get file contents", "repos_get-content"},
	{"create a release", "repos_create-release"},
	{"list commits", "repos_list-commits"},
	{"star a repository", "activity_star-repo-for-authenticated-user"},
	{"get the authenticated user", "users_get-authenticated"},
	{"search code", "search_code"},
	{"search repositories", "search_repos"},
	{"list workflow runs", "actions_list-workflow-runs-for-repo"},
	{"create a gist", "gists_create"},
	{"add labels to an issue", "issues_add-labels"},
	{"list organization members", "orgs_list-members"},
	{"fork a repository", "repos_create-fork"},
	{"create a webhook", "repos_create-webhook"},
}

// TestSearchQualityGitHub measures search_operations on GitHub's 1,223
// operations: the wanted operation must be in the top 5 for most natural
// queries. The hit rate is logged (go test -v) and must not drop below 75%.
func TestSearchQualityGitHub(t *testing.T) {
	if testing.Short() || bridge.RaceEnabled {
		t.Skip("loads GitHub's whole spec: covered by the run without -race")
	}
	res, err := specloader.Load(t.Context(), "../testdata/specs/github-api.3.0.json", specloader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ops, err := whitelist.All().Select(res.Doc)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := bridge.New(ops, bridge.Options{BaseURL: "https://api.github.com", Tools: bridge.ToolsDynamic})
	if err != nil {
		t.Fatal(err)
	}
	rt := bridge.NewRuntime(cat)
	hits := 0
	for _, tc := range searchCases {
		args, _ := json.Marshal(map[string]any{"query": tc.query, "limit": 5})
		out, err := rt.Call(t.Context(), &bridge.Call{Tool: bridge.SearchToolName, Args: args})
		if err != nil {
			t.Fatal(err)
		}
		var page struct{ Results []struct{ Name string } }
		if err := json.Unmarshal([]byte(textOf(t, out.Result)), &page); err != nil {
			t.Fatal(err)
		}
		var names []string
		found := false
		for _, r := range page.Results {
			names = append(names, r.Name)
			found = found || r.Name == tc.want
		}
		if found {
			hits++
		} else {
			t.Logf("miss: %q wants %s, got %v", tc.query, tc.want, names)
		}
	}
	rate := float64(hits) / float64(len(searchCases))
	t.Logf("search_operations on GitHub: %d of %d natural queries find the operation in the top 5 (%.0f%%)", hits, len(searchCases), 100*rate)
	if rate < 0.75 {
		t.Errorf("hit rate %.0f%% below 75%%", 100*rate)
	}
}
