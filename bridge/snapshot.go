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
const snapshotVersion = 13

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
	// ListNames and List are the catalog's EncodedList, when it had one.
	ListNames []string
	List      []byte
}

type snapTool struct {
	Name, Title, Description string
	Annotations              []byte // JSON: gob would turn a *bool false into nil
	Input, Output            []byte
	Plan                     request.Plan
	Tags                     []string
	OperationID, Path        string
	Pinned                   bool
	Allow                    *whitelist.Allow
	Fields                   []string
	MaxItems                 int
	Timeout                  time.Duration
	Retry                    bool
	Resource                 *whitelist.Resource
	AllowKeys                []string // whitelist redact.allowKeys
}

// Snapshot encodes the prepared tools so that a later start with the same
// spec, whitelist and options can skip parsing and building
// ([NewFromSnapshot]).
func (c *Catalog) Snapshot() ([]byte, error) {
	base := ""
	if c.base != nil {
		base = c.base.String()
	}
	s := snapshot{Version: snapshotVersion, BaseURL: base, SpecTitle: c.opts.SpecTitle, SpecVersion: c.opts.SpecVersion, Skipped: c.skipped, Repairs: c.repairs, Spec: c.Spec()}
	if l := c.EncodedList(); l != nil {
		s.ListNames, s.List = l.Names, l.JSON
	}
	for _, t := range c.tools {
		if t.builtin != notBuiltin {
			continue
		}
		ts := snapTool{
			Name: t.def.Name, Title: t.def.Title, Description: t.def.Description,
			Input: t.input.Raw(), Output: t.output.Raw(),
			Plan: t.plan, Tags: t.tags, OperationID: t.opID, Path: t.path, Pinned: t.pinned, Allow: t.allow, Fields: t.fields, MaxItems: t.maxItm, Timeout: t.timeout, Retry: t.retry,
			Resource: t.resource, AllowKeys: t.relaxedKeys(),
		}
		if t.def.Annotations != nil {
			raw, err := json.Marshal(t.def.Annotations)
			if err != nil {
				return nil, fmt.Errorf("encoding annotations of %s: %w", t.plan.Label, err)
			}
			ts.Annotations = raw
		}
		s.Tools = append(s.Tools, ts)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&s); err != nil {
		return nil, fmt.Errorf("encoding tool snapshot: %w", err)
	}
	return buf.Bytes(), nil
}

// NewFromSnapshot rebuilds a catalog from [Catalog.Snapshot] output with
// fresh runtime dependencies from opts. It fails on data written by another
// snapshot version or that does not decode; callers then build from the
// spec.
func NewFromSnapshot(data []byte, opts Options) (*Catalog, error) {
	var s snapshot
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return nil, fmt.Errorf("decoding tool snapshot: %w", err)
	}
	if s.Version != snapshotVersion {
		return nil, fmt.Errorf("tool snapshot version %d, want %d", s.Version, snapshotVersion)
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
		var ann mcp.ToolAnnotations
		if err := json.Unmarshal(ts.Annotations, &ann); err != nil {
			return nil, fmt.Errorf("tool snapshot: %s: annotations: %w", ts.Plan.Label, err)
		}
		t := &Tool{
			def: &mcp.Tool{
				Name: ts.Name, Title: ts.Title, Description: ts.Description, Annotations: &ann,
				InputSchema: json.RawMessage(ts.Input),
			},
			plan: ts.Plan, tags: ts.Tags, opID: ts.OperationID, path: ts.Path, pinned: ts.Pinned, allow: ts.Allow, fields: ts.Fields, maxItm: ts.MaxItems, shape: newShapePlan(ts.Fields, ts.MaxItems), timeout: ts.Timeout, retry: ts.Retry, resource: ts.Resource,
			input: schema.NewLazy(ts.Input), output: schema.NewLazy(ts.Output),
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
	c.index()
	if len(s.ListNames) > 0 && len(s.List) > 0 {
		c.SetEncodedList(&EncodedList{Names: s.ListNames, JSON: s.List})
	}
	return c, nil
}

// isObject reports whether raw looks like one encoded JSON object.
func isObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '{' && raw[len(raw)-1] == '}'
}
