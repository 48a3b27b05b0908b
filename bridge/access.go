package bridge

import (
	"context"
	"slices"

	"github.com/mcpbridge/mcpbridge/whitelist"
)

// Allowed reports whether id may see and call t: always for a tool without
// an access list, for the local (stdio) caller and for built-ins; else
// when the caller's identity, JWT subject or one of its scopes is listed.
func (t *Tool) Allowed(id *Identity) bool {
	a := t.allow
	if a == nil || t.builtin != notBuiltin || id == Local {
		return true
	}
	if id == nil {
		return false
	}
	if id.ID != "" && slices.Contains(a.Keys, id.ID) {
		return true
	}
	if id.Subject != "" && slices.Contains(a.Subjects, id.Subject) {
		return true
	}
	for _, s := range id.Scopes {
		if slices.Contains(a.Scopes, s) {
			return true
		}
	}
	return false
}

// Access is the middleware of per-tool access control (whitelist allow
// lists): a caller the tool's list does not name gets a Denied outcome, and
// the upstream is not called. The MCP exposure also hides such tools from
// the caller's tools/list.
func Access() Middleware {
	return func(next Invoker) Invoker {
		return InvokerFunc(func(ctx context.Context, c *Call) (*Outcome, error) {
			if t := c.Target(); t != nil && !t.Allowed(c.Caller) {
				if c.viaMeta && c.catalog != nil {
					// call_operation: answered as for a name that names no
					// operation (describe_operation does the same).
					return Reject(Denied, (c.catalog.noOperation(c.Tool)).Error(), 0), nil
				}
				return Reject(Denied, "access denied: this caller may not use "+c.Tool, 0), nil
			}
			return next.Invoke(ctx, c)
		})
	}
}

// SameAccess reports whether a and b admit the same callers: a tool whose
// access list changed is listed to a different set of callers, who are to
// be told (list_changed) like those of a changed definition.
func SameAccess(a, b *Tool) bool {
	x, y := a.allow, b.allow
	if x == nil || y == nil {
		return x == nil && y == nil
	}
	return slices.Equal(x.Keys, y.Keys) && slices.Equal(x.Subjects, y.Subjects) && slices.Equal(x.Scopes, y.Scopes)
}

// allowOf copies an entry's access list for a tool.
func allowOf(a *whitelist.Allow) *whitelist.Allow {
	if a == nil {
		return nil
	}
	cp := whitelist.Allow{Keys: slices.Clone(a.Keys), Subjects: slices.Clone(a.Subjects), Scopes: slices.Clone(a.Scopes)}
	return &cp
}

// AllowKeys are the caller ids (api-key:…, jwt:…) the tool's access list
// names; nil for a tool without one. Shared: never modify them.
func (t *Tool) AllowKeys() []string {
	if t.allow == nil {
		return nil
	}
	return t.allow.Keys
}
