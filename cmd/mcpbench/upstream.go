package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// endpoint is one upstream response size, exposed the same way by every
// target: the same URL for the direct client, the same tool name (and
// arguments) for the floor and for mcpbridge.
type endpoint struct {
	Size     string         // "small", "16k", "1m", "16k-pretty"
	Tool     string         // tool name (whitelist override, floor tool)
	OpID     string         // operationId in the generated spec
	Template string         // the spec's path template
	CallPath string         // the request URI the arguments produce
	Args     map[string]any // tools/call arguments
	Pretty   bool           // served indented (shows compaction)
	body     []byte         // what the upstream serves
	compact  []byte         // body compacted (body itself unless Pretty)
}

// endpoints returns the benchmark's endpoints, without bodies (the floor
// needs only the names and URLs; see buildBodies).
func endpoints() []*endpoint {
	return []*endpoint{
		{
			Size: "small", Tool: "get_user", OpID: "users/get-by-username",
			Template: "/users/{username}", CallPath: "/users/octocat",
			Args: map[string]any{"username": "octocat"},
		},
		{
			Size: "16k", Tool: "search_issues", OpID: "issues/search",
			Template: "/repos/{owner}/{repo}/issues/search", CallPath: "/repos/acme/widgets/issues/search?q=is%3Aopen&per_page=20",
			Args: map[string]any{"owner": "acme", "repo": "widgets", "q": "is:open", "per_page": 20},
		},
		{
			Size: "1m", Tool: "export_issues", OpID: "issues/export",
			Template: "/repos/{owner}/{repo}/issues/export", CallPath: "/repos/acme/widgets/issues/export?state=all",
			Args: map[string]any{"owner": "acme", "repo": "widgets", "state": "all"},
		},
		{
			Size: "16k-pretty", Tool: "search_issues_pretty", OpID: "issues/search-pretty",
			Template: "/repos/{owner}/{repo}/issues/search-pretty", CallPath: "/repos/acme/widgets/issues/search-pretty?q=is%3Aopen&per_page=20",
			Args: map[string]any{"owner": "acme", "repo": "widgets", "q": "is:open", "per_page": 20}, Pretty: true,
		},
	}
}

// buildBodies fills in the documents the upstream serves. They are
// deterministic: the same bytes on every run and machine.
func buildBodies(eps []*endpoint) {
	page := searchJSON(16<<10, 1)
	for _, e := range eps {
		switch e.Size {
		case "small":
			e.body = userJSON()
		case "16k":
			e.body = page
		case "1m":
			e.body = searchJSON(1<<20, 2)
		case "16k-pretty":
			var pretty bytes.Buffer
			json.Indent(&pretty, page, "", "  ") //nolint:errcheck // page is our own valid encoding
			e.body = pretty.Bytes()
		}
		e.compact = e.body
		if e.Pretty {
			e.compact = page
		}
	}
}

// upstream is the deterministic loopback API every target calls.
type upstream struct {
	URL string
	srv *http.Server
}

// startUpstream serves eps on a loopback port until Close.
func startUpstream(eps []*endpoint) (*upstream, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the upstream: %w", err)
	}
	byPath := map[string]*endpoint{}
	for _, e := range eps {
		p, _, _ := strings.Cut(e.CallPath, "?")
		byPath[p] = e
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, ok := byPath[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(e.body)))
		w.Write(e.body) //nolint:errcheck // the client went away
	})
	u := &upstream{
		URL: "http://" + ln.Addr().String(),
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
	}
	go u.srv.Serve(ln) //nolint:errcheck // ErrServerClosed after Close
	return u, nil
}

// Close stops the upstream.
func (u *upstream) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := u.srv.Shutdown(ctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return u.srv.Close()
	}
	return nil
}

// The documents imitate GitHub's REST API: a user and pages of issues.

type apiUser struct {
	Login       string `json:"login"`
	ID          int64  `json:"id"`
	NodeID      string `json:"node_id"`
	Type        string `json:"type"`
	SiteAdmin   bool   `json:"site_admin"`
	Name        string `json:"name,omitempty"`
	Company     string `json:"company,omitempty"`
	Location    string `json:"location,omitempty"`
	PublicRepos int    `json:"public_repos,omitempty"`
	Followers   int    `json:"followers,omitempty"`
	CreatedAt   string `json:"created_at,omitempty"`
}

type apiLabel struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Color   string `json:"color"`
	Default bool   `json:"default"`
}

type apiReactions struct {
	TotalCount int `json:"total_count"`
	PlusOne    int `json:"+1"`
	MinusOne   int `json:"-1"`
	Heart      int `json:"heart"`
	Rocket     int `json:"rocket"`
}

type apiIssue struct {
	ID                int64        `json:"id"`
	Number            int          `json:"number"`
	Title             string       `json:"title"`
	State             string       `json:"state"`
	Locked            bool         `json:"locked"`
	User              apiUser      `json:"user"`
	Labels            []apiLabel   `json:"labels"`
	Assignees         []apiUser    `json:"assignees"`
	Comments          int          `json:"comments"`
	CreatedAt         string       `json:"created_at"`
	UpdatedAt         string       `json:"updated_at"`
	ClosedAt          *string      `json:"closed_at"`
	AuthorAssociation string       `json:"author_association"`
	HTMLURL           string       `json:"html_url"`
	Body              string       `json:"body"`
	Reactions         apiReactions `json:"reactions"`
	Score             float64      `json:"score"`
}

type apiSearch struct {
	TotalCount        int        `json:"total_count"`
	IncompleteResults bool       `json:"incomplete_results"`
	Items             []apiIssue `json:"items"`
}

func userJSON() []byte {
	return mustMarshal(apiUser{
		Login: "octocat", ID: 583231, NodeID: "MDQ6VXNlcjU4MzIzMQ==", Type: "User",
		Name: "The Octocat", Company: "@github", Location: "San Francisco",
		PublicRepos: 8, Followers: 9000, CreatedAt: "2011-01-25T18:44:36Z",
	})
}

// issueGen builds deterministic issues from a seeded generator.
type issueGen struct {
	rng    *rand.Rand
	words  []string
	labels []apiLabel
	assoc  []string
}

func newIssueGen(seed uint64) *issueGen {
	return &issueGen{
		rng:   rand.New(rand.NewPCG(seed, 0x6d6370627269)),
		words: strings.Fields("widget parser cache retry timeout schema build deploy release flaky test docs crash memory leak slow query index migration upgrade regression panic nil pointer overflow locale unicode café naïve emoji 🚀 config yaml json api client server proxy \"quoted\" C:\\temp"),
		labels: []apiLabel{
			{ID: 208045946, Name: "bug", Color: "d73a4a", Default: true},
			{ID: 208045947, Name: "enhancement", Color: "a2eeef", Default: true},
			{ID: 208045948, Name: "good first issue", Color: "7057ff", Default: true},
			{ID: 208045949, Name: "needs triage", Color: "ededed"},
			{ID: 208045950, Name: "performance", Color: "fbca04"},
		},
		assoc: []string{"MEMBER", "CONTRIBUTOR", "NONE", "OWNER", "COLLABORATOR"},
	}
}

// searchJSON returns a search result with as many issues as fit in about
// size bytes (the result is the first encoding at or over size).
func searchJSON(size int, seed uint64) []byte {
	g := newIssueGen(seed)
	res := apiSearch{}
	approx := 60 // the envelope
	for i := 0; approx < size; i++ {
		is := g.issue(1000 + i)
		approx += len(mustMarshal(is)) + 1
		res.Items = append(res.Items, is)
	}
	res.TotalCount = len(res.Items) * 7
	return mustMarshal(res)
}

func (g *issueGen) sentence(k int) string {
	ws := make([]string, k)
	for i := range ws {
		ws[i] = g.words[g.rng.IntN(len(g.words))]
	}
	s := strings.Join(ws, " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

func (g *issueGen) issue(n int) apiIssue {
	rng := g.rng
	login := fmt.Sprintf("dev%d", rng.IntN(500))
	created := fmt.Sprintf("2024-%02d-%02dT%02d:%02d:%02dZ", 1+rng.IntN(12), 1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60))
	is := apiIssue{
		ID: 1800000000 + int64(n)*37, Number: n, Title: g.sentence(4 + rng.IntN(6)),
		State: "open", User: apiUser{Login: login, ID: 10000 + int64(rng.IntN(90000)), NodeID: fmt.Sprintf("U_kgDOB%05d", rng.IntN(99999)), Type: "User"},
		Comments: rng.IntN(40), CreatedAt: created, UpdatedAt: created, AuthorAssociation: g.assoc[rng.IntN(len(g.assoc))],
		HTMLURL:   fmt.Sprintf("https://github.example/acme/widgets/issues/%d", n),
		Body:      g.sentence(8+rng.IntN(20)) + ".\n\n" + g.sentence(6+rng.IntN(15)) + ".\n\n```\n" + g.sentence(3) + "\n```",
		Reactions: apiReactions{PlusOne: rng.IntN(9), Heart: rng.IntN(3), Rocket: rng.IntN(2)},
		Score:     1,
		Labels:    []apiLabel{},
		Assignees: []apiUser{},
	}
	is.Reactions.TotalCount = is.Reactions.PlusOne + is.Reactions.Heart + is.Reactions.Rocket
	for k := rng.IntN(3); k > 0; k-- {
		is.Labels = append(is.Labels, g.labels[rng.IntN(len(g.labels))])
	}
	if rng.IntN(3) == 0 {
		is.State = "closed"
		closed := created
		is.ClosedAt = &closed
	}
	if rng.IntN(2) == 0 {
		is.Assignees = append(is.Assignees, is.User)
	}
	return is
}

// mustMarshal encodes v compactly without HTML escaping, as APIs serve it.
func mustMarshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("encoding benchmark data: " + err.Error()) // unreachable: plain structs
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
