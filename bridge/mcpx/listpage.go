package mcpx

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxListPage bounds one tools/list answer. Every tool goes on one page
// (see pageSize) unless the list would be larger than this: the
// TypeScript SDK's stdio transport drops the connection on a message over
// 10 MiB (its ReadBuffer), so DocuSign's 31.6 MB list or Microsoft
// Graph's 225 MB one made the whole server unusable. Such a list goes in
// pages of at most this many bytes (a tool larger than that alone on its
// page), and nextCursor leads to the next.
var maxListPage = 8 << 20

// pageCursorPrefix starts the cursors of the bridge's own pages; go-sdk's
// cursors (it pages by count) never appear, as every list it makes fits
// on one of its pages.
const pageCursorPrefix = "mcpbridge-page:"

// listPages splits tools, in order, into pages of at most maxListPage
// bytes by estimate (toolEstimate); it returns the first index of each
// page, nil when the whole list fits on one.
func listPages(tools []*mcp.Tool) []int {
	// Every tools/list asks: a bound from lengths alone (escaping at most
	// doubles a title or a description but for control bytes, rare) spares
	// a pass over GitHub's 573 KB of descriptions when no page is needed.
	bound := 2
	for _, t := range tools {
		bound += 321 + 2*len(t.Name) + 4*len(t.Title) + 2*len(t.Description) + rawLen(t.InputSchema) + rawLen(t.OutputSchema)
	}
	if bound <= maxListPage/2 {
		return nil
	}
	total := 2
	for _, t := range tools {
		total += toolEstimate(t) + 1
	}
	if total <= maxListPage {
		return nil
	}
	starts := []int{0}
	size := 2
	for i, t := range tools {
		n := toolEstimate(t) + 1
		if size+n > maxListPage && i > starts[len(starts)-1] {
			starts = append(starts, i)
			size = 2
		}
		size += n
	}
	return starts
}

// toolEstimate is about the encoded size of t as tools/list sends it,
// a little more: its strings as escaped (the title may go twice), its
// schemas' bytes, and room for member names, quotes, annotations and
// punctuation. A page is cut 2 MiB short of the 10 MiB a client takes.
func toolEstimate(t *mcp.Tool) int {
	return 320 + escapedLen(t.Name) + 2*escapedLen(t.Title) + escapedLen(t.Description) + rawLen(t.InputSchema) + rawLen(t.OutputSchema)
}

// listFingerprint names a list by its tools' names, so that a cursor from
// before a reload or for another caller's list is refused rather than
// followed into a different list.
func listFingerprint(tools []*mcp.Tool) string {
	h := fnv.New64a()
	for _, t := range tools {
		h.Write([]byte(t.Name))
		h.Write([]byte{0})
	}
	return strconv.FormatUint(h.Sum64(), 36)
}

// pageCursor is the cursor of the page starting at tools[start].
func pageCursor(start int, fp string) string {
	return pageCursorPrefix + strconv.Itoa(start) + ":" + fp
}

// parsePageCursor reads a cursor of the bridge's pages; ok is false for
// any other cursor.
func parsePageCursor(c string) (start int, fp string, ok bool) {
	rest, ok := strings.CutPrefix(c, pageCursorPrefix)
	if !ok {
		return 0, "", false
	}
	n, fp, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, "", false
	}
	start, err := strconv.Atoi(n)
	if err != nil || start < 0 {
		return 0, "", false
	}
	return start, fp, true
}

// page is the page of lr that cursor names ("" the first), with the
// cursor of the next one; lr itself when the list fits on one page.
func page(lr *mcp.ListToolsResult, cursor string) (*mcp.ListToolsResult, error) {
	starts := listPages(lr.Tools)
	if starts == nil {
		if cursor != "" {
			return nil, fmt.Errorf("invalid cursor: the tool list fits on one page now; list again without a cursor")
		}
		return lr, nil
	}
	fp := listFingerprint(lr.Tools)
	at := 0
	if cursor != "" {
		start, cfp, ok := parsePageCursor(cursor)
		if !ok || cfp != fp {
			return nil, fmt.Errorf("invalid cursor: the tool list changed since it was given; list again without a cursor")
		}
		at = -1
		for i, s := range starts {
			if s == start {
				at = i
			}
		}
		if at < 0 {
			return nil, fmt.Errorf("invalid cursor: no page starts at tool %d", start)
		}
	}
	out := *lr
	end := len(lr.Tools)
	out.NextCursor = ""
	if at+1 < len(starts) {
		end = starts[at+1]
		out.NextCursor = pageCursor(end, fp)
	}
	out.Tools = lr.Tools[starts[at]:end:end]
	return &out, nil
}

// ListPageBytes is the most a tools/list page holds; a larger list goes in
// pages (nextCursor).
func ListPageBytes() int { return maxListPage }
