package mcpx

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/transport/reqctx"
	"github.com/mcpbridge/mcpbridge/whitelist"
)

// This file exposes the catalog's resources: the whitelist's resources and
// resource templates, each read by a call of its tool through
// bridge.Runtime.Call (so every middleware applies), and openapi://spec,
// the whitelisted part of the spec. Like the tools, they follow the
// runtime's swaps by difference, and a handler looks its resource up in the
// current catalog when it runs.

// maxCompletions is the most values one completion/complete answer carries
// (the protocol's limit).
const maxCompletions = 100

// resourceReg is what the server lists now.
type resourceReg struct {
	mu   sync.Mutex
	reg  map[string]*bridge.Resource // by URI or URI template
	spec bool                        // openapi://spec is listed
}

// specResource is the resources/list entry of the whitelisted spec.
func specResource() *mcp.Resource {
	return &mcp.Resource{
		URI: bridge.SpecURI, Name: "openapi-spec", Title: "OpenAPI document (whitelisted operations)",
		MIMEType:    "application/json",
		Description: "The OpenAPI document the bridge serves, reduced to the whitelisted operations and the components they use.",
	}
}

// syncResources makes the server list exactly cat's resources, templates
// and spec: new and changed ones are added, vanished ones removed (go-sdk
// then notifies resources/list_changed), unchanged ones left alone.
func (s *Server) syncResources(cat *bridge.Catalog) {
	s.res.mu.Lock()
	defer s.res.mu.Unlock()
	s.specs.reset() // kept for the previous catalog
	next := make(map[string]*bridge.Resource, len(cat.Resources()))
	var added, changed, removed int
	for _, r := range cat.Resources() {
		next[r.URI()] = r
		prev, ok := s.res.reg[r.URI()]
		switch {
		case !ok:
			added++
		case bridge.SameResource(prev, r):
			continue
		default:
			changed++
		}
		s.addResource(r)
	}
	var gone, goneTemplates []string
	for uri, r := range s.res.reg {
		if _, ok := next[uri]; ok {
			continue
		}
		if r.Template() {
			goneTemplates = append(goneTemplates, uri)
		} else {
			gone = append(gone, uri)
		}
	}
	switch on := cat.HasSpec(); {
	case on && !s.res.spec:
		s.srv.AddResource(specResource(), s.readSpec)
		added++
	case !on && s.res.spec:
		gone = append(gone, bridge.SpecURI)
	}
	s.res.spec = cat.HasSpec()
	if len(gone) > 0 {
		s.srv.RemoveResources(gone...)
	}
	if len(goneTemplates) > 0 {
		s.srv.RemoveResourceTemplates(goneTemplates...)
	}
	removed = len(gone) + len(goneTemplates)
	if s.res.reg != nil && added+changed+removed > 0 {
		s.log.Info("resource list changed", zap.Int("added", added), zap.Int("changed", changed), zap.Int("removed", removed), zap.Int("resources", len(next)))
	}
	s.res.reg = next
}

// addResource registers r. go-sdk panics on a URI (template) it cannot
// parse; the whitelist rejects those, so a panic here is a bug, logged
// rather than taking the server down.
func (s *Server) addResource(r *bridge.Resource) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("resource not registered", zap.String("uri", r.URI()), zap.Any("reason", p))
		}
	}()
	if r.Template() {
		s.srv.AddResourceTemplate(r.TemplateDef(), s.readResource(r.URI()))
		return
	}
	s.srv.AddResource(r.Def(), s.readResource(r.URI()))
}

// readResource is the go-sdk handler of the resource or template whose URI
// (template) is key: it calls the resource's tool in the current catalog
// with the URI's variables as arguments.
func (s *Server) readResource(key string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		cat := s.rt.Catalog()
		r, ok := cat.Resource(key)
		if !ok || !resourceAllowed(cat, key, callerOf(req)) {
			// Removed by a reload a moment ago, or hidden from this caller
			// (bridge.Access would refuse the call too): checked before the
			// variables, so that a hidden template answers a bad one as an
			// unknown URI does.
			return nil, mcp.ResourceNotFoundError(uri)
		}
		args, err := r.Args(uri)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		ctx = traceContext(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: req.Params.Meta}, Extra: req.Extra})
		// Bound to the HTTP request or session like a tool call (see
		// handler): a client that went away, cancelled the read or deleted
		// its session frees its slot and its upstream request.
		ctx, release := reqctx.Bind(ctx)
		defer release()
		c := s.resourceCall(r.Tool(), args, req.Extra)
		if rep := newReadReporter(req, s.log); rep != nil {
			c.Progress = rep
		}
		out, err := s.rt.Call(ctx, c)
		if err != nil {
			return nil, err // the tool vanished in a reload since the lookup, or a bug
		}
		contents, err := resourceContents(uri, r.MIMEType(), out)
		if err != nil {
			return nil, err
		}
		return &mcp.ReadResourceResult{Contents: contents}, nil
	}
}

// readSpec answers openapi://spec from the current catalog: with access
// lists, reduced to the operations the caller may call (specviews.go), so
// that the document shows no tool that tools/list hides from it.
func (s *Server) readSpec(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	cat := s.rt.Catalog()
	spec := cat.Spec()
	if spec == nil {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	if cat.HasAccessLists() {
		id := callerOf(req)
		if key, all := cat.SpecAccess(id); !all {
			var err error
			spec, err = s.specs.get(cat, key, func() ([]byte, error) { return cat.SpecFor(id) })
			if err != nil {
				return nil, fmt.Errorf("reducing %s to the caller's operations: %w", bridge.SpecURI, err)
			}
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: bridge.SpecURI, MIMEType: "application/json", Text: string(spec)}}}, nil
}

// resourceCall is the call a resource read or a completion makes: who
// calls and how they came in, as for a tool call.
func (s *Server) resourceCall(tool string, args json.RawMessage, extra *mcp.RequestExtra) *bridge.Call {
	c := &bridge.Call{Tool: tool, Args: args, Caller: bridge.Local, Transport: "stdio"}
	if extra != nil && extra.Header != nil {
		c.Transport = "http"
		c.Caller = identity(extra)
	}
	return c
}

// resourceContents turns a call's outcome into the contents of uri: text
// blocks as text (declared, else JSON or plain text), images, audio and
// embedded documents as blobs. A failed call is a JSON-RPC error: a 404 or
// 410 from the upstream, or a refusal by access control, is "resource not
// found"; bad variables are invalid params; anything else an internal
// error with the (redacted) message of the tool result.
func resourceContents(uri, declared string, out *bridge.Outcome) ([]*mcp.ResourceContents, error) {
	res := out.Result
	if res == nil {
		return nil, fmt.Errorf("reading %s: the call returned no result", uri)
	}
	if res.IsError {
		msg := firstText(res)
		switch {
		case out.Status == 404 || out.Status == 410 || out.Kind == bridge.Denied:
			return nil, mcp.ResourceNotFoundError(uri)
		case out.Kind == bridge.BadArguments:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
		}
		data, _ := json.Marshal(map[string]any{"uri": uri, "status": out.Status, "kind": out.Kind.String()}) // plain data
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg, Data: data}
	}
	var contents []*mcp.ResourceContents
	for _, c := range res.Content {
		switch x := c.(type) {
		case *mcp.TextContent:
			contents = append(contents, &mcp.ResourceContents{URI: uri, MIMEType: textType(declared, x.Text), Text: x.Text})
		case *mcp.ImageContent:
			contents = append(contents, &mcp.ResourceContents{URI: uri, MIMEType: cmpOr(declared, x.MIMEType), Blob: x.Data})
		case *mcp.AudioContent:
			contents = append(contents, &mcp.ResourceContents{URI: uri, MIMEType: cmpOr(declared, x.MIMEType), Blob: x.Data})
		case *mcp.EmbeddedResource:
			if x.Resource != nil {
				rc := *x.Resource
				rc.URI, rc.MIMEType = uri, cmpOr(declared, rc.MIMEType)
				contents = append(contents, &rc)
			}
		}
	}
	if len(contents) == 0 {
		contents = []*mcp.ResourceContents{{URI: uri, MIMEType: cmpOr(declared, "text/plain"), Text: ""}}
	}
	return contents, nil
}

// textType is the media type of a text block: the declared one (unless it
// says JSON and the text is not, such as a shaping note), else JSON when
// the text parses, else plain text.
func textType(declared, text string) string {
	isJSON := json.Valid([]byte(text))
	switch {
	case declared != "" && (isJSON || !strings.Contains(declared, "json")):
		return declared
	case isJSON:
		return "application/json"
	}
	return "text/plain"
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func firstText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && t.Text != "" {
			return t.Text
		}
	}
	return "the upstream call failed"
}

// complete answers completion/complete for a resource template's variable:
// the parameter's enum values, then the values the whitelist's list tool
// returns, without duplicates, those starting with the typed value
// (ignoring case) first 100. Anything else (prompts, unknown templates or
// variables) gets an empty list.
func (s *Server) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	out := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	p := req.Params
	if p == nil || p.Ref == nil || p.Ref.Type != "ref/resource" {
		return out, nil
	}
	cat := s.rt.Catalog()
	r, ok := cat.Resource(p.Ref.URI)
	if !ok || !r.Template() || !resourceAllowed(cat, p.Ref.URI, callerOf(req)) {
		return out, nil // a template hidden from the caller is as unknown
	}
	enum, list, ok := r.Completions(p.Argument.Name)
	if !ok {
		return out, nil
	}
	values := slices.Clone(enum)
	if list != nil {
		values = append(values, s.listValues(ctx, req, list)...)
	}
	prefix := strings.ToLower(p.Argument.Value)
	seen := map[string]bool{}
	var matched []string
	for _, v := range values {
		if !seen[v] && strings.HasPrefix(strings.ToLower(v), prefix) {
			seen[v] = true
			matched = append(matched, v)
		}
	}
	out.Completion.Total = len(matched)
	out.Completion.HasMore = len(matched) > maxCompletions
	if len(matched) > maxCompletions {
		matched = matched[:maxCompletions]
	}
	if matched != nil {
		out.Completion.Values = matched
	}
	return out, nil
}

// listValues calls the completion's list tool (no arguments) through the
// runtime and takes its field from every item of the answer. A failed call
// gives no values: completion is a hint, never an error.
func (s *Server) listValues(ctx context.Context, req *mcp.CompleteRequest, list *whitelist.Completion) []string {
	ctx, release := reqctx.Bind(ctx)
	defer release()
	out, err := s.rt.Call(ctx, s.resourceCall(list.Tool, nil, req.Extra))
	if err != nil || out.Result == nil || out.Result.IsError {
		reason := ""
		if err != nil {
			reason = err.Error()
		} else if out.Result != nil {
			reason = firstText(out.Result)
		}
		s.log.Debug("completion list call failed", zap.String("tool", list.Tool), zap.String("reason", reason))
		return nil
	}
	var body []byte
	for _, c := range out.Result.Content {
		if t, ok := c.(*mcp.TextContent); ok && json.Valid([]byte(t.Text)) {
			body = []byte(t.Text)
			break
		}
	}
	if body == nil && out.Result.StructuredContent != nil {
		body, _ = json.Marshal(out.Result.StructuredContent) // a decoded JSON value
	}
	return fieldValues(body, list.Field)
}

// fieldValues takes field (a dotted path; "" for the item itself) from each
// item of body's top-level array, or of the first array member of its
// top-level object, as text. Items without a scalar there are skipped.
func fieldValues(body []byte, field string) []string {
	items := firstArray(body)
	var out []string
	for _, raw := range items {
		var v any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if dec.Decode(&v) != nil {
			continue
		}
		if field != "" {
			for _, k := range strings.Split(field, ".") {
				m, _ := v.(map[string]any)
				v = m[k]
			}
		}
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case json.Number:
			out = append(out, x.String())
		case bool:
			out = append(out, strconv.FormatBool(x))
		}
	}
	return out
}

// firstArray is the items of body's top-level array, or of the first member
// of its top-level object (in document order) that is an array.
func firstArray(body []byte) []json.RawMessage {
	body = bytes.TrimSpace(body)
	var items []json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		_ = json.Unmarshal(body, &items) // nil items on garbage
		return items
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		if _, err := dec.Token(); err != nil { // the key
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if v = bytes.TrimSpace(v); len(v) > 0 && v[0] == '[' {
			_ = json.Unmarshal(v, &items)
			return items
		}
	}
	return nil
}

// filterResources adapts answers to the catalog: resources/list and
// resources/templates/list hide what the caller's access lists forbid
// (reading them is refused by bridge.Access too), and the completions
// capability is declared only while some resource template exists.
func (s *Server) filterResources(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		cat := s.rt.Catalog()
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Capabilities = completionCapability(r.Capabilities, cat, callerOf(req))
		case *mcp.DiscoverResult:
			r.Capabilities = completionCapability(r.Capabilities, cat, callerOf(req))
		case *mcp.ListResourcesResult:
			if cat.HasAccessLists() {
				id := callerOf(req)
				r.Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(x *mcp.Resource) bool { return !resourceAllowed(cat, x.URI, id) })
			}
		case *mcp.ListResourceTemplatesResult:
			if cat.HasAccessLists() {
				id := callerOf(req)
				r.ResourceTemplates = slices.DeleteFunc(slices.Clone(r.ResourceTemplates), func(x *mcp.ResourceTemplate) bool { return !resourceAllowed(cat, x.URITemplate, id) })
			}
		}
		return res, nil
	}
}

// completionCapability is caps without completions when cat has no
// resource template id may read (a copy; caps itself is shared).
func completionCapability(caps *mcp.ServerCapabilities, cat *bridge.Catalog, id *bridge.Identity) *mcp.ServerCapabilities {
	if caps == nil || caps.Completions == nil || hasTemplateFor(cat, id) {
		return caps
	}
	cp := *caps
	cp.Completions = nil
	return &cp
}

// hasTemplateFor reports whether cat has a resource template id may read.
func hasTemplateFor(cat *bridge.Catalog, id *bridge.Identity) bool {
	if !cat.HasAccessLists() {
		return cat.HasTemplates()
	}
	for _, r := range cat.Resources() {
		if r.Template() && resourceAllowed(cat, r.URI(), id) {
			return true
		}
	}
	return false
}

// callerOf is who sent req: the identity the HTTP transport authenticated,
// or bridge.Local over stdio.
func callerOf(req mcp.Request) *bridge.Identity {
	if extra := req.GetExtra(); extra != nil && extra.Header != nil {
		return identity(extra)
	}
	return bridge.Local
}

// resourceAllowed reports whether id may read the resource listed as uri.
func resourceAllowed(cat *bridge.Catalog, uri string, id *bridge.Identity) bool {
	r, ok := cat.Resource(uri)
	if !ok {
		return true // openapi://spec, or gone since
	}
	t, ok := cat.Lookup(r.Tool())
	return !ok || t.Allowed(id)
}
