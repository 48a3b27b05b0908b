package bridge

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// snapshotVersion changes whenever the encoded form or the meaning of a
// prepared tool changes; an older snapshot is then rejected and rebuilt.
const snapshotVersion = 3

// snapshot is the serializable form of a built tool set: everything a call
// needs, with no pointer into the spec. Runtime dependencies (client,
// redactor, credentials, logger) are not part of it.
type snapshot struct {
	Version     int
	BaseURL     string
	SpecTitle   string
	SpecVersion string
	Tools       []toolSnap
	Skipped     []Skipped
}

type toolSnap struct {
	Name, Title, Description string
	Annotations              []byte // JSON: gob would turn a *bool false into nil
	Input, Output            []byte
	Label, Method, Base      string
	Accept                   string
	Path                     []pathSeg
	Params                   []paramSnap
	Body                     *bodySnap
	Timeout                  time.Duration
	Retry                    bool
}

type paramSnap struct {
	Arg  string
	Spec paramSpec
}

type bodySnap struct {
	ContentType string
	Required    bool
	Encoding    map[string]encodingSnap
	Kind        uint8
	Header      string
	Accepts     []string
	Files       map[string]fileSnap
}

type encodingSnap struct {
	ContentType   string
	Style         string
	Explode       int8 // 0 unset, 1 false, 2 true (gob drops false pointers)
	AllowReserved bool
}

func explodeSnap(b *bool) int8 {
	switch {
	case b == nil:
		return 0
	case *b:
		return 2
	}
	return 1
}

func explodeFromSnap(v int8) *bool {
	if v == 0 {
		return nil
	}
	b := v == 2
	return &b
}

type fileSnap struct {
	Kind        uint8
	ContentType string
}

// Snapshot encodes the prepared tools so that a later start with the same
// spec, whitelist and options can skip parsing and building
// ([NewFromSnapshot]).
func (b *Bridge) Snapshot() ([]byte, error) {
	base := ""
	if b.base != nil {
		base = b.base.String()
	}
	s := snapshot{Version: snapshotVersion, BaseURL: base, SpecTitle: b.opts.SpecTitle, SpecVersion: b.opts.SpecVersion, Skipped: b.skipped}
	for _, t := range b.tools {
		ts := toolSnap{
			Name: t.def.Name, Title: t.def.Title, Description: t.def.Description,
			Input: t.input.raw, Output: t.output.raw,
			Label: t.label, Method: t.method, Base: t.base.String(), Accept: t.accept,
			Path: t.path, Timeout: t.timeout, Retry: t.retry,
		}
		if t.def.Annotations != nil {
			raw, err := json.Marshal(t.def.Annotations)
			if err != nil {
				return nil, fmt.Errorf("encoding annotations of %s: %w", t.label, err)
			}
			ts.Annotations = raw
		}
		for _, p := range t.params {
			ts.Params = append(ts.Params, paramSnap{Arg: p.arg, Spec: p.spec})
		}
		if bs := t.body; bs != nil {
			snap := &bodySnap{ContentType: bs.ContentType, Required: bs.Required, Kind: uint8(bs.kind), Header: bs.header, Accepts: bs.accepts}
			if len(bs.Encoding) > 0 {
				snap.Encoding = map[string]encodingSnap{}
				for k, e := range bs.Encoding {
					if e != nil {
						snap.Encoding[k] = encodingSnap{ContentType: e.ContentType, Style: e.Style, Explode: explodeSnap(e.Explode), AllowReserved: e.AllowReserved}
					}
				}
			}
			if len(bs.files) > 0 {
				snap.Files = map[string]fileSnap{}
				for k, f := range bs.files {
					snap.Files[k] = fileSnap{Kind: uint8(f.kind), ContentType: f.contentType}
				}
			}
			ts.Body = snap
		}
		s.Tools = append(s.Tools, ts)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&s); err != nil {
		return nil, fmt.Errorf("encoding tool snapshot: %w", err)
	}
	return buf.Bytes(), nil
}

// NewFromSnapshot rebuilds a Bridge from [Bridge.Snapshot] output with
// fresh runtime dependencies from opts. It fails on data written by another
// snapshot version or that does not decode; callers then build from the
// spec.
func NewFromSnapshot(data []byte, opts Options) (*Bridge, error) {
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
	b, err := newBridge(opts)
	if err != nil {
		return nil, err
	}
	b.skipped = s.Skipped
	for i := range s.Tools {
		ts := &s.Tools[i]
		base, err := url.Parse(ts.Base)
		if err != nil {
			return nil, fmt.Errorf("tool snapshot: %s: base URL: %w", ts.Label, err)
		}
		if !json.Valid(ts.Input) || (ts.Output != nil && !json.Valid(ts.Output)) {
			return nil, fmt.Errorf("tool snapshot: %s: corrupt schema", ts.Label)
		}
		var ann mcp.ToolAnnotations
		if err := json.Unmarshal(ts.Annotations, &ann); err != nil {
			return nil, fmt.Errorf("tool snapshot: %s: annotations: %w", ts.Label, err)
		}
		t := &tool{
			def: &mcp.Tool{
				Name: ts.Name, Title: ts.Title, Description: ts.Description, Annotations: &ann,
				InputSchema: json.RawMessage(ts.Input),
			},
			label: ts.Label, method: ts.Method, base: base, accept: ts.Accept,
			path: ts.Path, timeout: ts.Timeout, retry: ts.Retry,
			input: newLazySchema(ts.Input), output: newLazySchema(ts.Output),
		}
		if ts.Output != nil {
			t.def.OutputSchema = json.RawMessage(ts.Output)
		}
		for _, p := range ts.Params {
			t.params = append(t.params, argParam{arg: p.Arg, spec: p.Spec})
		}
		for _, seg := range t.path {
			if seg.Param >= len(t.params) {
				return nil, fmt.Errorf("tool snapshot: %s: corrupt path plan", ts.Label)
			}
		}
		if bs := ts.Body; bs != nil {
			spec := &bodySpec{ContentType: bs.ContentType, Required: bs.Required, kind: bodyKind(bs.Kind), header: bs.Header, accepts: bs.Accepts}
			if bs.Encoding != nil {
				spec.Encoding = map[string]*openapi3.Encoding{}
				for k, e := range bs.Encoding {
					spec.Encoding[k] = &openapi3.Encoding{ContentType: e.ContentType, Style: e.Style, Explode: explodeFromSnap(e.Explode), AllowReserved: e.AllowReserved}
				}
			}
			if bs.Files != nil {
				spec.files = map[string]bodyFilePlan{}
				for k, f := range bs.Files {
					spec.files[k] = bodyFilePlan{kind: bodyFileKind(f.Kind), contentType: f.ContentType}
				}
			}
			t.body = spec
		}
		b.tools = append(b.tools, t)
	}
	return b, nil
}
