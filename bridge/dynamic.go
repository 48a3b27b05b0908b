package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/schema"
)

// The tool modes of [Options.Tools].
const (
	// ToolsAll lists one tool per operation (the default).
	ToolsAll = "all"
	// ToolsDynamic lists three meta-tools (search, describe, call) and ping;
	// every operation stays callable through call_operation.
	ToolsDynamic = "dynamic"
	// ToolsHybrid lists the pinned operations next to the meta-tools.
	ToolsHybrid = "hybrid"
)

// Meta-tool names; each gets the prefix "mcpbridge_" when an operation
// already has the name.
const (
	SearchToolName   = "search_operations"
	DescribeToolName = "describe_operation"
	CallToolName     = "call_operation"
)

const searchInput = `{"type":"object","properties":{` +
	`"query":{"type":"string","maxLength":1024,"description":"Words to look for in operation names, summaries, descriptions, tags and paths (at most 32 distinct words)."},` +
	`"tag":{"type":"string","description":"Only operations with this tag."},` +
	`"limit":{"type":"integer","minimum":1,"maximum":50,"description":"Results per page (default 10)."},` +
	`"cursor":{"type":"string","description":"nextCursor of the previous page."}},` +
	`"required":["query"],"additionalProperties":false}`

const describeInput = `{"type":"object","properties":{` +
	`"name":{"type":"string","description":"The operation's name, as search_operations gives it."}},` +
	`"required":["name"],"additionalProperties":false}`

const callInput = `{"type":"object","properties":{` +
	`"name":{"type":"string","description":"The operation's name, as search_operations gives it."},` +
	`"arguments":{"type":"object","description":"The arguments, as describe_operation's inputSchema says."}},` +
	`"required":["name"],"additionalProperties":false}`

// metaTools are the tools of dynamic and hybrid mode, named so as not to
// collide with taken names.
func metaTools(taken map[string]*Tool, ops []*Tool) []*Tool {
	name := func(n string) string {
		if _, ok := taken[n]; ok {
			return "mcpbridge_" + n
		}
		return n
	}
	tr, f := true, false
	destructive := false
	for _, t := range ops {
		if a := t.def.Annotations; a != nil && a.DestructiveHint != nil && *a.DestructiveHint {
			destructive = true
		}
	}
	mk := func(n, title, desc, input string, b builtin, ann *mcp.ToolAnnotations) *Tool {
		ann.Title = title
		return &Tool{
			def:     &mcp.Tool{Name: name(n), Title: title, Description: desc, InputSchema: json.RawMessage(input), Annotations: ann},
			input:   schema.NewLazy(json.RawMessage(input)),
			builtin: b,
		}
	}
	count := fmt.Sprintf("the %d operations", len(ops))
	for _, t := range ops {
		if t.allow != nil {
			// Every caller reads this description: a count would tell those
			// an access list hides operations from that there are more.
			count = "the operations"
			break
		}
	}
	return []*Tool{
		mk(SearchToolName, "Search the API's operations",
			"Searches "+count+" of this API by keywords (names, summaries, descriptions, tags, paths) and returns the best matches, each with its name and a one-line summary. Use describe_operation for an operation's arguments, then call_operation to call it.",
			searchInput, builtinSearch, &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &f}),
		mk(DescribeToolName, "Describe an operation",
			"Returns an operation's description and the exact JSON Schema of its arguments (and of its result when the API declares one).",
			describeInput, builtinDescribe, &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: &f}),
		mk(CallToolName, "Call an operation",
			"Calls an operation of the API with arguments that follow the inputSchema describe_operation returned. The call is validated, limited and sanitized exactly as a dedicated tool would be.",
			callInput, builtinCall, &mcp.ToolAnnotations{DestructiveHint: &destructive, OpenWorldHint: &tr}),
	}
}

// searchDoc is one operation as search_operations sees it: lower-case
// words per field, computed once per catalog.
type searchDoc struct {
	tool                           *Tool
	name, title, tags, path, descr []string
	summary                        string
	sum                            uint64 // of what search reads and shows: see setKey
}

// newSearchIndex prepares the operations of c for search.
func newSearchIndex(ops []*Tool) []searchDoc {
	docs := make([]searchDoc, 0, len(ops))
	for _, t := range ops {
		d := searchDoc{
			tool:  t,
			name:  words(t.def.Name),
			title: words(t.def.Title),
			path:  words(t.plan.Label),
			descr: words(t.def.Description),
		}
		for _, tag := range t.tags {
			d.tags = append(d.tags, words(tag)...)
		}
		d.summary = oneLine(t.def.Title)
		if d.summary == "" {
			d.summary = oneLine(t.def.Description)
		}
		d.sum = fnvAdd(fnvAdd(fnvAdd(fnvAdd(fnvOffset, t.def.Name), t.def.Title), t.def.Description), t.plan.Label)
		for _, tag := range t.tags {
			d.sum = fnvAdd(d.sum, tag)
		}
		docs = append(docs, d)
	}
	return docs
}

// maxQueryBytes and maxQueryWords bound a search_operations query.
const (
	maxQueryBytes = 1024
	maxQueryWords = 32
)

// distinct is ws without repeated words, in order.
func distinct(ws []string) []string {
	seen := make(map[string]bool, len(ws))
	out := ws[:0]
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// words splits s into lower-case words at non-letters and camelCase
// boundaries ("listPetsByTag" → list, pets, by, tag).
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prev := rune(0)
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && prev != 0 && unicode.IsLower(prev) {
				flush()
			}
			cur = append(cur, r)
		default:
			flush()
		}
		prev = r
	}
	flush()
	return out
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 160 {
		s = strings.TrimSpace(truncateAt(s, 157)) + "..."
	}
	return s
}

func truncateAt(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// stopWords carry no meaning in a query ("list the issues of a repo").
var stopWords = map[string]bool{"a": true, "an": true, "the": true, "of": true, "on": true, "to": true, "for": true,
	"in": true, "by": true, "with": true, "and": true, "or": true, "my": true, "all": true, "from": true, "into": true, "is": true}

// match rates how well term matches one word: exact 1, the word begins
// with the term 0.6 ("repo" → "repository"), the term begins with a word of
// at least 4 letters 0.5 ("repository" → "repos").
func match(term, w string) float64 {
	switch {
	case w == term:
		return 1
	case strings.HasPrefix(w, term):
		return 0.6
	case len(w) >= 4 && strings.HasPrefix(term, w):
		return 0.5
	}
	return 0
}

// termScore is the best weighted match of term in doc: the name weighs
// most, the description least.
func (d *searchDoc) termScore(term string) float64 {
	fields := []struct {
		ws []string
		w  float64
	}{{d.name, 4}, {d.title, 3}, {d.tags, 2.5}, {d.path, 2}, {d.descr, 1}}
	best := 0.0
	for _, f := range fields {
		for _, w := range f.ws {
			best = max(best, f.w*match(term, w))
		}
	}
	return best
}

// rank scores every doc for the query terms, BM25-like: each term weighs
// by its rarity across the operations (idf), and a doc whose name and
// title are long (many words the query did not ask for) weighs less.
func rank(docs []searchDoc, terms []string, keep func(*searchDoc) bool) []scored {
	var kept []string
	for _, t := range terms {
		if !stopWords[t] {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		kept = terms
	}
	n := float64(len(docs))
	idf := make([]float64, len(kept))
	per := make([][]float64, len(kept))
	for i, t := range kept {
		per[i] = make([]float64, len(docs))
		df := 0.0
		for j := range docs {
			if s := docs[j].termScore(t); s > 0 {
				per[i][j] = s
				df++
			}
		}
		idf[i] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	avg := 0.0
	for j := range docs {
		avg += float64(len(docs[j].name) + len(docs[j].title))
	}
	avg = max(1, avg/max(1, n))
	var out []scored
	for j := range docs {
		d := &docs[j]
		if keep != nil && !keep(d) {
			continue
		}
		total, matched := 0.0, 0
		for i := range kept {
			if per[i][j] > 0 {
				total += per[i][j] * idf[i]
				matched++
			}
		}
		if total == 0 {
			continue
		}
		length := float64(len(d.name) + len(d.title))
		total *= float64(matched) / float64(len(kept)) // every term found beats some
		total /= 0.6 + 0.4*length/avg
		out = append(out, scored{d, total})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].score > out[b].score })
	return out
}

type scored struct {
	d     *searchDoc
	score float64
}

func hasTag(t *Tool, tag string) bool {
	for _, x := range t.tags {
		if strings.EqualFold(x, tag) {
			return true
		}
	}
	return false
}

// searchResult is one match of search_operations.
type searchResult struct {
	Name      string   `json:"name"`
	Summary   string   `json:"summary"`
	Operation string   `json:"operation"`
	Tags      []string `json:"tags,omitempty"`
}

// search answers search_operations for caller: only the operations it may
// call are searched, ranked and counted, as if the catalog held no others
// (the ranking's term weights come from those operations alone, so the
// order of what it sees says nothing of what it does not).
func (c *Catalog) search(args map[string]any, caller *Identity) (any, error) {
	q, _ := args["query"].(string)
	tag, _ := args["tag"].(string)
	limit := 10
	switch n := args["limit"].(type) { // validated: an integer from 1 to 50
	case int64:
		limit = int(n)
	case float64: // written 1.0 or 1e0
		limit = int(n)
	}
	docs := visibleDocs(c.searchDocs, caller)
	set := setKey(docs)
	offset := 0
	if cur, _ := args["cursor"].(string); cur != "" {
		key, n, ok := parseCursor(cur)
		if !ok {
			return nil, &ArgumentError{Field: "cursor", Reason: "not a cursor this tool returned"}
		}
		if key != set {
			return nil, &ArgumentError{Field: "cursor", Reason: "the operations changed since this cursor was returned (the server reloaded its tools): search again without a cursor"}
		}
		offset = n
	}
	// Bounded: rank scores every word against every operation (GitHub's
	// 1,223), and a query of 200,000 words took 2 GB and 30 s of CPU.
	if len(q) > maxQueryBytes {
		return nil, &ArgumentError{Field: "query", Reason: fmt.Sprintf("longer than %d bytes: give a few keywords", maxQueryBytes)}
	}
	terms := distinct(words(q))
	if len(terms) > maxQueryWords {
		return nil, &ArgumentError{Field: "query", Reason: fmt.Sprintf("%d distinct words, at most %d: give a few keywords", len(terms), maxQueryWords)}
	}
	var keep func(*searchDoc) bool
	if tag != "" {
		keep = func(d *searchDoc) bool { return hasTag(d.tool, tag) }
	}
	var hits []scored
	if len(terms) == 0 {
		for i := range docs {
			if keep == nil || keep(&docs[i]) {
				hits = append(hits, scored{&docs[i], 1})
			}
		}
	} else {
		hits = rank(docs, terms, keep)
	}
	out := struct {
		Results    []searchResult `json:"results"`
		Total      int            `json:"total"`
		NextCursor string         `json:"nextCursor,omitempty"`
	}{Results: []searchResult{}, Total: len(hits)}
	// offset may be any int a caller wrote: offset+limit could overflow.
	for i := offset; i < len(hits) && i-offset < limit; i++ {
		d := hits[i].d
		out.Results = append(out.Results, searchResult{Name: d.tool.def.Name, Summary: d.summary, Operation: d.tool.plan.Label, Tags: d.tool.tags})
	}
	if offset < len(hits) && limit < len(hits)-offset {
		out.NextCursor = fmt.Sprintf("%016x.%d", set, offset+limit)
	}
	return out, nil
}

// setKey identifies the operations docs holds, as search reads and shows
// them, in order. A cursor carries it, so that a reload that changes them
// (which shifts every page) makes the cursors of before refused rather
// than silently wrong. It depends on the docs the caller may see alone,
// like everything else search answers, and is the same in every replica.
func setKey(docs []searchDoc) uint64 {
	h := uint64(fnvOffset)
	for i := range docs {
		h = (h ^ docs[i].sum) * fnvPrime // a word at a time: one step per doc
	}
	return h
}

// FNV-1a (64-bit), on strings without copying them.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvAdd hashes s and a terminating 0 into h.
func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h * fnvPrime // ^ 0
}

// parseCursor reads a nextCursor: the setKey of its operations and the
// offset of the page.
func parseCursor(cur string) (key uint64, offset int, ok bool) {
	k, o, found := strings.Cut(cur, ".")
	if !found || len(k) != 16 {
		return 0, 0, false
	}
	key, err := strconv.ParseUint(k, 16, 64)
	if err != nil {
		return 0, 0, false
	}
	offset, err = strconv.Atoi(o)
	if err != nil || offset < 0 {
		return 0, 0, false
	}
	return key, offset, true
}

// visibleDocs is docs without the operations id may not call (see
// [Tool.Allowed]); docs itself when it may call them all.
func visibleDocs(docs []searchDoc, id *Identity) []searchDoc {
	for i := range docs {
		if docs[i].tool.Allowed(id) {
			continue
		}
		out := make([]searchDoc, i, len(docs)-1)
		copy(out, docs[:i])
		for j := i + 1; j < len(docs); j++ {
			if docs[j].tool.Allowed(id) {
				out = append(out, docs[j])
			}
		}
		return out
	}
	return docs
}

// operation returns the operation tool named name for the meta-tools.
func (c *Catalog) operation(name string) (*Tool, error) {
	t, ok := c.byName[name]
	if !ok || t.builtin != notBuiltin {
		return nil, c.noOperation(name)
	}
	return t, nil
}

// visibleOperation is operation for a caller: an operation id may not call
// is answered exactly as one that does not exist, so that describing names
// reveals nothing of the tools its access lists hide.
func (c *Catalog) visibleOperation(name string, id *Identity) (*Tool, error) {
	t, err := c.operation(name)
	if err != nil {
		return nil, err
	}
	if !t.Allowed(id) {
		return nil, c.noOperation(name)
	}
	return t, nil
}

// noOperation is the answer for a name that names no operation.
func (c *Catalog) noOperation(name string) error {
	return &ArgumentError{Field: "name", Reason: fmt.Sprintf("no operation %q: use %s to find one", name, c.metaName(builtinSearch))}
}

func (c *Catalog) metaName(b builtin) string {
	for _, t := range c.tools {
		if t.builtin == b {
			return t.def.Name
		}
	}
	return SearchToolName
}

// describe answers describe_operation for caller, which learns nothing of
// an operation it may not call (see visibleOperation).
func (c *Catalog) describe(args map[string]any, caller *Identity) (any, error) {
	name, _ := args["name"].(string)
	t, err := c.visibleOperation(name, caller)
	if err != nil {
		return nil, err
	}
	return struct {
		Name         string               `json:"name"`
		Title        string               `json:"title,omitempty"`
		Operation    string               `json:"operation"`
		Tags         []string             `json:"tags,omitempty"`
		Description  string               `json:"description"`
		Annotations  *mcp.ToolAnnotations `json:"annotations,omitempty"`
		InputSchema  json.RawMessage      `json:"inputSchema"`
		OutputSchema json.RawMessage      `json:"outputSchema,omitempty"`
	}{t.def.Name, t.def.Title, t.plan.Label, t.tags, t.def.Description, t.def.Annotations, t.input.Raw(), t.output.Raw()}, nil
}

// answerMeta runs search_operations or describe_operation.
func (c *Catalog) answerMeta(_ context.Context, call *Call) *Outcome {
	out := &Outcome{}
	args, err := decodeArgs(call.Args)
	if err == nil {
		in, rerr := call.target.input.Resolved()
		if err = rerr; err == nil {
			args, err = checkArgs(in, call.target.input.UsesIntFormat(), args)
		}
	}
	var v any
	if err == nil {
		if call.target.builtin == builtinSearch {
			v, err = c.search(args, call.Caller)
		} else {
			v, err = c.describe(args, call.Caller)
		}
	}
	if err != nil {
		return c.fail(out, call.target, err)
	}
	body, err := json.Marshal(v)
	if err != nil {
		return c.fail(out, call.target, fmt.Errorf("encoding %s: %w", call.target.def.Name, err))
	}
	out.Result = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}
	return out
}

// unwrapCall turns a call_operation call into the call of the operation it
// names, so that the middleware chain and the invoker see the operation
// itself. A problem with the meta-call's own arguments is an error, and
// call is left as it was.
func (c *Catalog) unwrapCall(call *Call) error {
	const want = "want {\"name\": string, \"arguments\": object}"
	args := call.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	m, err := StrictObject(args, "name", "arguments")
	if err != nil {
		return &ArgumentError{Reason: want + ": " + err.Error()}
	}
	var in struct {
		Name      string
		Arguments json.RawMessage
	}
	in.Arguments = m["arguments"]
	if raw, ok := m["name"]; !ok || json.Unmarshal(raw, &in.Name) != nil || in.Name == "" {
		reason := want
		switch k := rawKind(raw); {
		case !ok:
		case k == "a string":
			reason += `: "name" is empty`
		default:
			reason += `: "name" is ` + k
		}
		return &ArgumentError{Reason: reason}
	}
	t, err := c.operation(in.Name)
	if err != nil {
		return err
	}
	if len(in.Arguments) == 0 || string(in.Arguments) == "null" {
		in.Arguments = json.RawMessage("{}")
	}
	call.Tool, call.Args, call.target, call.viaMeta = t.def.Name, in.Arguments, t, true
	return nil
}
