package bridge

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpbridge/mcpbridge/bridge/request"
	"github.com/mcpbridge/mcpbridge/bridge/schema"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// snapshotVersion changes whenever the encoded form or the meaning of a
// prepared tool changes; an older snapshot is then rejected and rebuilt.
const snapshotVersion = 22

// snapshot is the serializable form of a catalog: the request plans
// themselves (plain data by design) plus the definition fields and schema
// bytes. Runtime dependencies (client, redactor, credentials, logger) are
// not part of it.
type snapshot struct {
	Version     int
	BaseURL     string
	SpecTitle   string
	SpecVersion string
	Tools       []snapTool
	Skipped     []Skipped
	Repairs     []Repair
	Spec        []byte // the whitelisted spec (Catalog.Spec)
	// ListNames are the names of the catalog's EncodedList, when it had
	// one; its ListLen bytes follow the gob message as they are (see
	// [Catalog.Snapshot]).
	ListNames []string
	ListLen   int
}

type snapTool struct {
	Name, Title, Description string
	Annotations              *snapHints // nil: none
	Input, Output            []byte     // nil when found in the list (below)
	// InputAt and OutputAt, when not 0, are 1 + the offset in the encoded
	// list of the bytes of Input and Output, InputLen and OutputLen long.
	InputAt, InputLen   int
	OutputAt, OutputLen int
	Plan                request.Plan
	Tags                []string
	OperationID, Path   string
	Pinned              bool
	Allow               *whitelist.Allow
	Fields              []string
	MaxItems            int
	Timeout             time.Duration
	Retry               bool
	Resource            *whitelist.Resource
	AllowKeys           []string // whitelist redact.allowKeys
	Unmet               []string // the unconfigured security schemes its requirements name, when none is met
}

// Snapshot encodes the prepared tools so that a later start with the same
// spec, whitelist and options can skip parsing and building
// ([NewFromSnapshot]).
//
// The bytes are a gob message followed by the catalog's encoded tools/list
// array, if it has one, as it is. The list holds every listed tool's input
// and output schema byte for byte, so a tool whose schema is found there
// stores its place instead of a copy: GitHub's entry went from 5.5 to
// 3.8 MB, and a restore decodes a gob message of 1.3 MB instead of 5.5
// and copies neither the list nor the schemas (they stay slices of data).
func (c *Catalog) Snapshot() ([]byte, error) {
	base := ""
	if c.base != nil {
		base = c.base.String()
	}
	s := snapshot{Version: snapshotVersion, BaseURL: base, SpecTitle: c.opts.SpecTitle, SpecVersion: c.opts.SpecVersion, Skipped: c.skipped, Repairs: c.repairs, Spec: c.Spec()}
	var list []byte
	if l := c.EncodedList(); l != nil {
		s.ListNames, s.ListLen, list = l.Names, len(l.JSON), l.JSON
	}
	for _, t := range c.tools {
		if t.builtin != notBuiltin {
			continue
		}
		ts := snapTool{
			Name: t.def.Name, Title: t.def.Title, Description: t.def.Description,
			Input: t.input.Raw(), Output: t.output.Raw(),
			Plan: t.plan, Tags: t.tags, OperationID: t.opID, Path: t.path, Pinned: t.pinned, Allow: t.allow, Fields: t.fields, MaxItems: t.maxItm, Timeout: t.timeout, Retry: t.retry,
			Resource: t.resource, AllowKeys: t.relaxedKeys(), Unmet: t.unmet,
		}
		if a := t.def.Annotations; a != nil {
			ts.Annotations = newSnapHints(a)
		}
		s.Tools = append(s.Tools, ts)
	}
	placeSchemas(s.Tools, s.ListNames, list)
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&s); err != nil {
		return nil, fmt.Errorf("encoding tool snapshot: %w", err)
	}
	buf.Write(list)
	return buf.Bytes(), nil
}

// placeSchemas replaces the input and output schemas of tools by their
// place in list, the encoded tools/list array of the tools names lists, in
// that order, wherever the bytes after the tool's "inputSchema" or
// "outputSchema" key are the schema byte for byte. One pass over list.
func placeSchemas(tools []snapTool, names []string, list []byte) {
	byName := make(map[string]*snapTool, len(tools))
	for i := range tools {
		byName[tools[i].Name] = &tools[i]
	}
	var inFrom, outFrom int
	for _, n := range names {
		ts := byName[n]
		if ts == nil {
			continue // a built-in tool
		}
		if at, ok := findAfter(list, &inFrom, `"inputSchema":`, ts.Input); ok {
			ts.InputAt, ts.InputLen, ts.Input = at+1, len(ts.Input), nil
		}
		if at, ok := findAfter(list, &outFrom, `"outputSchema":`, ts.Output); ok {
			ts.OutputAt, ts.OutputLen, ts.Output = at+1, len(ts.Output), nil
		}
	}
}

// findAfter finds raw right after one of the next few keys in list from
// *from on, and moves *from past it. The match is exact: the bytes there
// are raw's, whichever object they belong to.
func findAfter(list []byte, from *int, key string, raw []byte) (int, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	i := *from
	for range 4 { // a property named like the key, or bytes that differ
		j := bytes.Index(list[i:], []byte(key))
		if j < 0 {
			return 0, false
		}
		at := i + j + len(key)
		if bytes.HasPrefix(list[at:], raw) {
			*from = at + len(raw)
			return at, true
		}
		i = at
	}
	return 0, false
}

// snapHints is a tool's mcp.ToolAnnotations as gob keeps it: gob cannot
// tell a *bool false from nil, so each optional hint is two bits. It was
// JSON, and its 1,223 json.Unmarshal calls ~1.8 ms of a GitHub restore's
// 16 (BenchmarkCachedRestart). TestSnapHintsRoundTrip fails when go-sdk
// adds a field this leaves out.
type snapHints struct {
	Title string
	Bits  uint8
}

const (
	hintReadOnly uint8 = 1 << iota
	hintIdempotent
	hintDestructiveSet
	hintDestructive
	hintOpenWorldSet
	hintOpenWorld
)

func newSnapHints(a *mcp.ToolAnnotations) *snapHints {
	h := &snapHints{Title: a.Title}
	set := func(b bool, bit uint8) {
		if b {
			h.Bits |= bit
		}
	}
	set(a.ReadOnlyHint, hintReadOnly)
	set(a.IdempotentHint, hintIdempotent)
	set(a.DestructiveHint != nil, hintDestructiveSet)
	set(a.DestructiveHint != nil && *a.DestructiveHint, hintDestructive)
	set(a.OpenWorldHint != nil, hintOpenWorldSet)
	set(a.OpenWorldHint != nil && *a.OpenWorldHint, hintOpenWorld)
	return h
}

// annotations is h as go-sdk's type, nil for nil.
func (h *snapHints) annotations() *mcp.ToolAnnotations {
	if h == nil {
		return nil
	}
	opt := func(set, bit uint8) *bool {
		if h.Bits&set == 0 {
			return nil
		}
		b := h.Bits&bit != 0
		return &b
	}
	return &mcp.ToolAnnotations{
		Title:           h.Title,
		ReadOnlyHint:    h.Bits&hintReadOnly != 0,
		IdempotentHint:  h.Bits&hintIdempotent != 0,
		DestructiveHint: opt(hintDestructiveSet, hintDestructive),
		OpenWorldHint:   opt(hintOpenWorldSet, hintOpenWorld),
	}
}

// NewFromSnapshot rebuilds a catalog from [Catalog.Snapshot] output with
// fresh runtime dependencies from opts. It fails on data written by another
// snapshot version or that does not decode; callers then build from the
// spec.
//
// The catalog keeps slices of data (the encoded list and the schemas in
// it): the caller must not modify data afterwards.
func NewFromSnapshot(data []byte, opts Options) (*Catalog, error) {
	var s snapshot
	r := bytes.NewReader(data) // an io.ByteReader: gob reads no further than its message
	if err := gob.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("decoding tool snapshot: %w", err)
	}
	if s.Version != snapshotVersion {
		return nil, fmt.Errorf("tool snapshot version %d, want %d", s.Version, snapshotVersion)
	}
	list := data[len(data)-r.Len():]
	if len(list) != s.ListLen {
		return nil, fmt.Errorf("tool snapshot: %d bytes of encoded list, want %d", len(list), s.ListLen)
	}
	list = list[:len(list):len(list)]
	inList := func(at, n int) ([]byte, bool) {
		if at <= 0 || n <= 0 || at-1 > len(list)-n {
			return nil, false
		}
		return list[at-1 : at-1+n : at-1+n], true
	}
	opts.SpecTitle, opts.SpecVersion = s.SpecTitle, s.SpecVersion
	if opts.BaseURL == "" {
		opts.BaseURL = s.BaseURL
	}
	c, err := newCatalog(opts)
	if err != nil {
		return nil, err
	}
	c.skipped = s.Skipped
	c.repairs = s.Repairs
	c.spec = s.Spec
	for i := range s.Tools {
		ts := &s.Tools[i]
		if ts.InputAt != 0 {
			var ok bool
			if ts.Input, ok = inList(ts.InputAt, ts.InputLen); !ok {
				return nil, fmt.Errorf("tool snapshot: %s: input schema outside the list", ts.Plan.Label)
			}
		}
		if ts.OutputAt != 0 {
			var ok bool
			if ts.Output, ok = inList(ts.OutputAt, ts.OutputLen); !ok {
				return nil, fmt.Errorf("tool snapshot: %s: output schema outside the list", ts.Plan.Label)
			}
		}
		if err := ts.Plan.Prepare(); err != nil {
			return nil, fmt.Errorf("tool snapshot: %w", err)
		}
		// Not json.Valid: that was half of a restore (GitHub: 26 of 55 ms),
		// and the bytes are ours, marshaled by Snapshot and, in the cache,
		// under a SHA-256 of the whole entry. A truncated or foreign value
		// still fails here.
		if !isObject(ts.Input) || (ts.Output != nil && !isObject(ts.Output)) {
			return nil, fmt.Errorf("tool snapshot: %s: corrupt schema", ts.Plan.Label)
		}
		t := &Tool{
			def: &mcp.Tool{
				Name: ts.Name, Title: ts.Title, Description: ts.Description, Annotations: ts.Annotations.annotations(),
				InputSchema: json.RawMessage(ts.Input),
			},
			plan: ts.Plan, tags: ts.Tags, opID: ts.OperationID, path: ts.Path, pinned: ts.Pinned, allow: ts.Allow, fields: ts.Fields, maxItm: ts.MaxItems, shape: newShapePlan(ts.Fields, ts.MaxItems), timeout: ts.Timeout, retry: ts.Retry, resource: ts.Resource,
			input: schema.NewLazy(ts.Input), output: schema.NewLazy(ts.Output), unmet: ts.Unmet,
		}
		if ts.Output != nil {
			t.def.OutputSchema = json.RawMessage(ts.Output)
		}
		if len(ts.AllowKeys) > 0 {
			if err := c.relaxRedaction(t, ts.AllowKeys); err != nil {
				return nil, fmt.Errorf("tool snapshot: %w", err)
			}
		}
		c.tools = append(c.tools, t)
	}
	if err := c.prepareAuth(); err != nil {
		return nil, fmt.Errorf("tool snapshot: %w", err)
	}
	c.warnUnmet(c.tools) // as the build did
	c.index()
	if len(s.ListNames) > 0 && len(list) > 0 {
		c.SetEncodedList(&EncodedList{Names: s.ListNames, JSON: list})
	}
	return c, nil
}

// isObject reports whether raw looks like one encoded JSON object.
func isObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '{' && raw[len(raw)-1] == '}'
}
