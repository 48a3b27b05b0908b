package mcpx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/transport/handoff"
)

// The tools/list answer is the same for every client of one protocol
// class (before or since titleSince) as long as the server lists the same
// definitions, and for a large API it is the largest thing the server
// writes: GitHub's 1,224 tools are 2.4 MB, which encoding/json encoded
// afresh for every list (~16 ms of CPU warm, ~60 ms in a restarting
// process, where the growing buffer's fresh pages are most of it). The
// "tools" array is now encoded once per class and registration and
// spliced into each answer; go-sdk's encoder still checks and copies it.
// A catalog restored from the cache brings the array its first start
// encoded (bridge.EncodedList), so a restart answers its first list
// without encoding it.
//
// The array is only reused for the exact definitions it was encoded from
// (pointer identity: registered definitions are never modified), and never
// when access lists make the list depend on the caller.

// maxCachedList bounds the array kept: a bigger list (DocuSign's spec, all
// operations, is 31.6 MB) is encoded per answer rather than held twice.
const maxCachedList = 16 << 20

// listCache holds the encoded "tools" arrays of one list of definitions.
type listCache struct {
	mu     sync.Mutex
	defs   []*mcp.Tool     // as go-sdk lists them
	enc    [classes][]byte // by list class
	missed [classes]bool   // a list of the class was answered without enc
	whole  [classes][]byte // the last result encoded around enc (encodedList)
}

// The list classes: fitTool shapes a tool alike for every client of one.
const (
	classOld  = iota // before 2025-06-18: the title in annotations, no output schemas
	classNew         // the title on top, output schemas
	classText        // as classNew, without output schemas: a host that takes text alone
	classes
)

// listClass is the class of a client on version named name (callerOf).
func (s *Server) listClass(version, name string) int {
	switch {
	case version != "" && version < titleSince:
		return classOld
	case s.takesText(version, name):
		return classText
	}
	return classNew
}

// tools returns the "tools" array a client of class k receives for defs,
// encoding it unless the cache holds it; ok is false when it cannot be
// encoded (the caller then lets encoding/json report the error).
//
// With lazy, the first list of each class and definitions is not encoded
// here (ok false): the caller encodes it the usual way, which costs a
// starting process less than encoding it here and having go-sdk check the
// result (a first start's list, measured 785 → 820-831 ms otherwise).
// The list after it is. EncodedList fills the cache off that path.
func (lc *listCache) tools(k int, defs []*mcp.Tool, lazy bool) ([]byte, bool) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if !slices.Equal(lc.defs, defs) {
		lc.defs, lc.enc, lc.missed, lc.whole = slices.Clone(defs), [classes][]byte{}, [classes]bool{}, [classes][]byte{}
	}
	if b := lc.enc[k]; b != nil {
		return b, true
	}
	if lazy && !lc.missed[k] {
		lc.missed[k] = true
		return nil, false
	}
	if listEstimate(defs) > maxCachedList {
		return nil, false // too big to keep: encoded per answer, the usual way
	}
	b, err := encodeTools(k, defs)
	if err != nil {
		return nil, false
	}
	if len(b) <= maxCachedList {
		lc.enc[k] = b
	}
	return b, true
}

// seed makes enc the classNew array of defs, which it was encoded from.
func (lc *listCache) seed(defs []*mcp.Tool, enc []byte) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	lc.defs, lc.enc, lc.missed, lc.whole = defs, [classes][]byte{classNew: enc}, [classes]bool{}, [classes][]byte{}
}

// encodeTools is the "tools" array of fitList(k, defs) as go-sdk's
// jsonrpc2 writes it: encoding/json without HTML escaping.
//
// The tools are encoded one by one into one buffer sized for them all:
// encoding the slice whole would grow encoding/json's own buffer by
// doubling and then copy it, three times the bytes in fresh memory, which
// a starting process pays for in page faults.
func encodeTools(k int, defs []*mcp.Tool) ([]byte, error) {
	size := listEstimate(defs)
	var buf bytes.Buffer
	buf.Grow(size + size/16)
	buf.WriteByte('[')
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, d := range defs {
		if i > 0 {
			buf.WriteByte(',')
		}
		t := fitTool(k, d)
		if err := enc.Encode(&t); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

// listEstimate is about the size of the encoded array of defs (a little
// more for most lists).
func listEstimate(defs []*mcp.Tool) int {
	size := 2
	for _, d := range defs {
		size += 256 + len(d.Name) + len(d.Title) + len(d.Description) + rawLen(d.InputSchema) + rawLen(d.OutputSchema)
	}
	return size
}

func rawLen(schema any) int {
	if raw, ok := schema.(json.RawMessage); ok {
		return len(raw)
	}
	return 0
}

// encodeNoEscape appends v to buf as jsonrpc2 encodes: no HTML escaping,
// no trailing newline.
func encodeNoEscape(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}

// encodedList is a tools/list result whose "tools" array is already
// encoded. Like listResult it embeds go-sdk's result, so what go-sdk sets
// on it after the middleware is encoded with it.
type encodedList struct {
	*mcp.ListToolsResult
	tools []byte
	lc    *listCache // where tools came from (nil: none)
	class int
	taker *handoff.Taker // from the request's context (nil: none)
}

// listTail ends the encoding of a listResult without tools: encoding/json
// writes the shadowing field last.
const listTail = `"tools":null}`

// MarshalJSON writes every field but the tools as listResult does, then
// the encoded array. TestEncodedListMatches holds it to listResult's
// encoding byte for byte.
func (l *encodedList) MarshalJSON() ([]byte, error) {
	var rest bytes.Buffer
	if err := encodeNoEscape(&rest, &listResult{ListToolsResult: l.ListToolsResult}); err != nil {
		return nil, err
	}
	head, ok := bytes.CutSuffix(rest.Bytes(), []byte(listTail))
	if !ok {
		return nil, fmt.Errorf("mcpx: tools/list result encodes as %.40q…, not ending in %s", rest.Bytes(), listTail)
	}
	if l.taker != nil && len(l.tools) >= handoff.MinBytes {
		// Written as they are (transport/handoff): no copy of the array.
		return l.taker.Put(head, []byte(`"tools":`), l.tools, []byte("}")), nil
	}
	if l.lc != nil {
		return l.lc.result(l.class, head, l.tools), nil
	}
	return joinList(head, l.tools), nil
}

func joinList(head, tools []byte) []byte {
	out := make([]byte, 0, len(head)+len(`"tools":`)+len(tools)+1)
	out = append(out, head...)
	out = append(out, `"tools":`...)
	out = append(out, tools...)
	return append(out, '}')
}

// result is joinList(head, tools), the same slice as last time when
// nothing changed: GitHub's list is 2.4 MB, and go-sdk only reads it.
func (lc *listCache) result(k int, head, tools []byte) []byte {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	enc := lc.enc[k]
	cached := len(tools) > 0 && len(enc) == len(tools) && &enc[0] == &tools[0]
	if w := lc.whole[k]; cached && len(w) == len(head)+len(`"tools":`)+len(tools)+1 && bytes.HasPrefix(w, head) {
		return w
	}
	out := joinList(head, tools)
	if cached {
		lc.whole[k] = out
	}
	return out
}

// EncodedList is the "tools" array a client on a current revision
// receives from s while s lists exactly cat's tools to every caller,
// encoded now unless already; nil otherwise. Kept with cat
// (bridge.Catalog.SetEncodedList), it goes into the tool cache.
func (s *Server) EncodedList(cat *bridge.Catalog) *bridge.EncodedList {
	if cat.HasAccessLists() {
		return nil
	}
	s.mu.Lock()
	listed := cat.Listed()
	if len(s.reg) != len(listed) {
		s.mu.Unlock()
		return nil
	}
	names := make([]string, 0, len(listed))
	for _, t := range listed {
		if s.reg[t.Name()] != t {
			s.mu.Unlock()
			return nil // the server lists another catalog's tools
		}
		names = append(names, t.Name())
	}
	sort.Strings(names) // go-sdk lists by name
	defs := make([]*mcp.Tool, len(names))
	for i, n := range names {
		defs[i] = s.defs[n]
	}
	s.mu.Unlock()
	b, ok := s.lists.tools(classNew, defs, false)
	if !ok || len(b) > maxCachedList {
		return nil
	}
	return &bridge.EncodedList{Names: names, JSON: b}
}

// seedList hands the list cache the array a restored catalog brought, if
// it names exactly the tools just registered, in go-sdk's order. Called
// with s.mu held, before any session exists.
func (s *Server) seedList(cat *bridge.Catalog) {
	l := cat.EncodedList()
	if l == nil || cat.HasAccessLists() || len(l.Names) != len(s.defs) || !sort.StringsAreSorted(l.Names) {
		return
	}
	defs := make([]*mcp.Tool, len(l.Names))
	for i, n := range l.Names {
		d, ok := s.defs[n]
		if !ok || (i > 0 && l.Names[i-1] == n) {
			return
		}
		defs[i] = d
	}
	s.lists.seed(defs, l.JSON)
}
