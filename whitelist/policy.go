package whitelist

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// Annotations overrides the MCP tool annotations the bridge would otherwise
// derive from the HTTP method. A nil field keeps the derived value; the zero
// value overrides nothing.
type Annotations struct {
	ReadOnlyHint    *bool // the tool does not modify its environment
	DestructiveHint *bool // the tool may perform destructive updates
	IdempotentHint  *bool // repeating a call with the same arguments has no further effect
	OpenWorldHint   *bool // the tool interacts with an open world of external entities
}

// clone returns a deep copy of a, so that operations selected by one entry do
// not share mutable state. A nil a gives nil.
func (a *Annotations) clone() *Annotations {
	if a == nil {
		return nil
	}
	return &Annotations{
		ReadOnlyHint:    cloneBool(a.ReadOnlyHint),
		DestructiveHint: cloneBool(a.DestructiveHint),
		IdempotentHint:  cloneBool(a.IdempotentHint),
		OpenWorldHint:   cloneBool(a.OpenWorldHint),
	}
}

func cloneBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}

// Entry is one item of the tools list of a whitelist.yaml. Exactly one
// selector must be set: Method and Path together, OperationID, or Tag. The
// other fields are optional overrides; their zero values mean "no override".
type Entry struct {
	// Method is the HTTP method (upper case after [Parse]) and Path the spec's
	// path template as written under `paths`, e.g. /pets/{petId}. Path may
	// use :petId for {petId}, and parameter names need not match the spec's:
	// paths are compared by shape.
	Method, Path string
	// OperationID selects the operation with that operationId (case-sensitive).
	OperationID string
	// Tag selects every operation carrying that tag (case-sensitive).
	Tag string

	// Name, Description and Title override the tool's name, description and
	// title. They are not allowed with Tag, which selects several operations.
	Name, Description, Title string
	// Annotations overrides the tool annotations; nil means none.
	Annotations *Annotations
	// Timeout overrides the upstream call timeout; 0 means the bridge default.
	Timeout time.Duration
	// NestedStyle overrides the bridge's convention for nested values in
	// query parameters and styled form and multipart fields: one of
	// [NestedStyles]; "" keeps the bridge's.
	NestedStyle string
	// AllowSlashes names path parameters (style simple) whose value may be
	// a path: '/' then separates segments escaped one by one, instead of
	// being escaped itself. Nil means none.
	AllowSlashes []string
	// Pinned lists the tool in hybrid mode next to the meta-tools.
	Pinned bool
	// Allow restricts who may see and call the tool (HTTP callers); nil
	// means every authenticated caller may.
	Allow *Allow
	// Fields keeps only these parts of a JSON answer: dotted paths, "[]"
	// stepping into arrays ("id", "items[].name", "owner.login"). Nil
	// keeps everything.
	Fields []string
	// MaxItems caps every array of a JSON answer; 0 means no cap.
	MaxItems int
	// Resource also exposes the operation (a GET) as an MCP resource or
	// resource template; nil means none.
	Resource *Resource
	// Redact relaxes redaction for this tool's answers (see [Redact]); nil
	// redacts them as every other.
	Redact *Redact
	// Line is the 1-based line of the entry in whitelist.yaml, used in error
	// messages; 0 for entries built in code (messages then say "entry #N").
	Line int
}

// Policy says which operations of a spec become tools. The zero value selects
// nothing.
type Policy struct {
	// Entries select operations and carry per-tool overrides.
	Entries []Entry
	// All selects every operation of the spec's paths. Entries then only add
	// overrides to the operations they match, and each must still match one.
	All bool
}

// All returns a policy that selects every operation under the spec's paths
// (never webhooks or callbacks), without overrides. It is what a bridge uses
// when no whitelist.yaml is configured.
func All() *Policy {
	return &Policy{All: true}
}

// Operation is one selected operation, ready for the bridge to turn into a
// tool. The pointers are into the document passed to [Policy.Select].
type Operation struct {
	Method   string              // upper case: GET, PUT, POST, DELETE, OPTIONS, HEAD, PATCH or TRACE
	Path     string              // the spec's path template, e.g. /pets/{petId}
	PathItem *openapi3.PathItem  // the path item holding Op (shared parameters, servers)
	Op       *openapi3.Operation // the operation itself

	// Name, Description and Title are the entry's overrides; "" when none.
	Name, Description, Title string
	// Annotations are the entry's overrides (a copy); nil when none.
	Annotations *Annotations
	// Timeout is the entry's timeout override; 0 when none.
	Timeout time.Duration
	// NestedStyle is the entry's nested-value convention (one of
	// [NestedStyles]); "" when none.
	NestedStyle string
	// AllowSlashes lists the path parameters of this operation whose value
	// may hold '/' (a copy; every name is a path parameter of style simple
	// of the operation); nil when none.
	AllowSlashes []string
	// Pinned is the entry's pinned flag (listed in hybrid mode).
	Pinned bool
	// Allow is the entry's access list; nil when anyone may call.
	Allow *Allow
	// Fields and MaxItems are the entry's response shaping (see Entry).
	Fields   []string
	MaxItems int
	// Resource is the entry's resource (a copy; checked against the
	// operation); nil when none.
	Resource *Resource
	// RedactAllowKeys are the entry's redact.allowKeys (a copy); nil when
	// none.
	RedactAllowKeys []string
}

// Allow is a tool's access list: a caller may see and call the tool when
// its API key identity, its JWT subject, or one of its JWT scopes is
// listed.
type Allow struct {
	// Keys are caller identities as the HTTP transport names them:
	// "api-key:0" is the first configured inbound key, "jwt:ISS|SUB" a JWT
	// caller.
	Keys []string
	// Subjects are JWT subjects ("sub"), whatever the issuer.
	Subjects []string
	// Scopes are JWT scopes; holding any one of them is enough.
	Scopes []string
}

// NestedStyles lists the values a nestedStyle key takes, the bridge's
// default first. The bridge's request package defines what each means;
// this package only checks the spelling.
func NestedStyles() []string { return []string{"brackets", "brackets-empty", "dots", "json"} }

// methodList is the set of HTTP methods a whitelist can select, in output
// order. OpenAPI 3.2's QUERY, CONNECT and additionalOperations are not exposed.
const methodList = "GET, PUT, POST, DELETE, OPTIONS, HEAD, PATCH, TRACE"

// methods returns the methods of methodList, in order.
func methods() []string {
	return []string{
		http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete,
		http.MethodOptions, http.MethodHead, http.MethodPatch, http.MethodTrace,
	}
}

// methodRank returns the position of m (upper case) in methodList, or -1.
func methodRank(m string) int {
	return slices.Index(methods(), m)
}

// location names an entry in messages: "line N", or "entry #N" (1-based
// index) for entries built in code.
func location(e *Entry, index int) string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d", e.Line)
	}
	return fmt.Sprintf("entry #%d", index+1)
}

// problem is one error found in a policy, with a key to report it in order:
// its line when parsing, its entry's index when selecting.
type problem struct {
	order int
	err   error
}

// checkOptions tunes [Entry.problems] for the parser.
type checkOptions struct {
	// keyLine, when not nil, gives the line of a key of the entry so that
	// messages point at it; nil (or 0) means the entry's location.
	keyLine func(key string) int
	// quietNoSelector drops the "no selector" problem, for entries whose
	// selector keys were already reported as malformed.
	quietNoSelector bool
}

// problems returns what is wrong with e on its own: selectors, method, path,
// overrides not allowed with tag, negative timeout. Each problem's order is
// the line it names (0 for entries built in code).
func (e *Entry) problems(index int, opts checkOptions) []problem {
	var probs []problem
	// add reports at the line of key when known, else at the entry.
	add := func(key, format string, args ...any) {
		loc, line := location(e, index), e.Line
		if key != "" && opts.keyLine != nil {
			if l := opts.keyLine(key); l > 0 {
				loc, line = fmt.Sprintf("line %d", l), l
			}
		}
		probs = append(probs, problem{line, fmt.Errorf("%s: "+format, append([]any{loc}, args...)...)})
	}
	var selectors []string
	if e.Method != "" || e.Path != "" {
		selectors = append(selectors, "method+path")
	}
	if e.OperationID != "" {
		selectors = append(selectors, "operationId")
	}
	if e.Tag != "" {
		selectors = append(selectors, "tag")
	}
	switch {
	case len(selectors) == 0 && !opts.quietNoSelector:
		add("", "entry has no selector: set method and path, operationId, or tag")
	case len(selectors) > 1:
		add("", "entry has more than one selector (%s): use exactly one", strings.Join(selectors, ", "))
	}
	switch {
	case e.Path != "" && e.Method == "":
		add("path", "path %q requires a method", e.Path)
	case e.Method != "" && e.Path == "":
		add("method", "method %s requires a path", e.Method)
	}
	if e.Method != "" && methodRank(strings.ToUpper(e.Method)) < 0 {
		add("method", "method %q is not one of %s", e.Method, methodList)
	}
	if e.Path != "" {
		if err := checkPath(e.Path); err != nil {
			add("path", "path %q: %v", e.Path, err)
		}
	}
	if e.Tag != "" {
		for _, f := range []struct{ key, val string }{{"name", e.Name}, {"description", e.Description}, {"title", e.Title}} {
			if f.val != "" {
				add(f.key, "%s cannot be used with tag (a tag selects several operations): list the operation by method and path or operationId to override it", f.key)
			}
		}
	}
	if e.Timeout < 0 {
		add("timeout", "timeout %s is negative", e.Timeout)
	}
	if e.NestedStyle != "" && !slices.Contains(NestedStyles(), e.NestedStyle) {
		add("nestedStyle", "nestedStyle %q is not one of %s%s", e.NestedStyle, strings.Join(NestedStyles(), ", "),
			didYouMean(closest(e.NestedStyle, NestedStyles(), NestedStyles())))
	}
	e.resourceProblems(add)
	for i, name := range e.AllowSlashes {
		switch {
		case name == "":
			add("allowSlashes", "allowSlashes items must be non-empty parameter names")
		case slices.Contains(e.AllowSlashes[:i], name):
			add("allowSlashes", "allowSlashes lists %q twice", name)
		}
	}
	return probs
}

// duplicateNames reports, through report, every entry whose Name override
// repeats an earlier entry's, naming both; i is the later entry's index.
func duplicateNames(entries []Entry, report func(i int, err error)) {
	first := make(map[string]int)
	for i := range entries {
		e := &entries[i]
		if e.Name == "" {
			continue
		}
		if j, ok := first[e.Name]; ok {
			report(i, fmt.Errorf("%s: name %q is already used by the entry at %s", location(e, i), e.Name, location(&entries[j], j)))
			continue
		}
		first[e.Name] = i
	}
}
