// Package whitelist decides which operations of an OpenAPI document become
// MCP tools, and with which overrides.
//
// Its one job is to read a whitelist.yaml ([Parse]) and apply it to a loaded
// document ([Policy.Select]), reporting every mistake at once with its line.
// [All] is the policy used when there is no whitelist. It is a leaf: it
// imports kin-openapi, go.yaml.in/yaml/v3 and the standard library only, and
// must not import other mcpbridge packages, go-sdk, viper or zap (net/http
// appears only for its method names). It does no I/O beyond the reader it is
// given and never logs.
//
// # Format
//
// A whitelist.yaml is one YAML document:
//
//	version: 1                # optional; 1 is the only version
//	tools:                    # required, at least one entry
//	  - method: GET           # select by method and path...
//	    path: /pets/{petId}   # ...as written under the spec's paths
//	    name: get_pet         # optional overrides, see below
//	    description: Fetch one pet by its id.
//	    title: Get pet
//	    annotations: {readOnlyHint: true, openWorldHint: false}
//	    timeout: 10s
//	  - operationId: repos/get-content
//	    allowSlashes: [path]  # {path} may hold a/b/c.md
//	  - operationId: listPets # select by operationId
//	    nestedStyle: dots     # nested query values as a.b.1=x
//	  - tag: store            # select every operation carrying a tag
//	    timeout: 5s
//
// Each entry has exactly one selector:
//
//   - method and path (both required). method is one of GET, PUT, POST,
//     DELETE, OPTIONS, HEAD, PATCH, TRACE, in any case. path is the template
//     exactly as it appears under the spec's paths, without the server URL
//     or Swagger 2.0 basePath (write /pets, not /v2/pets). Path parameters
//     are compared by shape, so /pets/{id} and /pets/:id both select the
//     spec's /pets/{petId}; when the spec has two templates of one shape,
//     spell the path exactly. A trailing slash is significant: /pets/ does
//     not select /pets (it is suggested instead).
//   - operationId: the operation's operationId, case-sensitive.
//   - tag: every operation whose tags include this one, case-sensitive.
//
// Optional keys, all overrides of what the bridge derives from the spec:
//
//   - name: the tool name (the bridge still sanitizes it and checks that
//     final names are unique).
//   - description, title: the tool's description and title.
//   - annotations: a mapping of readOnlyHint, destructiveHint,
//     idempotentHint and openWorldHint to true or false; keys left out keep
//     the derived value.
//   - timeout: the upstream call timeout, a positive Go duration (10s, 1m30s).
//   - nestedStyle: how nested values (arrays and objects inside arrays and
//     objects, and deepObject arrays) are written in query parameters and
//     in form and multipart fields with a style: brackets (a[b][0]=x),
//     brackets-empty (a[]=x for arrays of primitives), dots (a.b.1=x) or
//     json (one JSON string); overrides the bridge's setting (brackets by
//     default) for the selected operations.
//   - allowSlashes: a list of path parameters whose value may be a path
//     (GitHub's contents/{path}): '/' separates segments escaped one by one
//     instead of being escaped itself; empty, "." and ".." segments are
//     still refused. Each name must be a path parameter of style simple of
//     the operation (with tag: of at least one of its operations; the
//     others are left as they are).
//   - pinned: true lists the tool in hybrid mode (--tools hybrid) next to
//     the search/describe/call meta-tools.
//   - allow: who may see and call the tool over HTTP, a mapping of keys
//     (caller identities such as api-key:0 or jwt:ISS|SUB), subjects (JWT
//     sub) and scopes (JWT scopes, any one suffices); a caller not listed
//     neither sees the tool in tools/list nor may call it. Without allow,
//     every authenticated caller may; stdio (the local user) always may.
//   - fields: the parts of a JSON answer to keep, as dotted paths with []
//     stepping into arrays (total, items[].name, items[].owner.login); the
//     rest is left out, the output schema follows, and a second text block
//     says what was left out.
//   - maxItems: a positive integer capping every array of a JSON answer;
//     the note says how many items were left out.
//   - redact: {allowKeys: [token, ...]}: for a tool whose job is to return
//     a secret (creating an API token, say), the members of its answers
//     (JSON, XML, form, text "name": value) with these names are not masked
//     by the key-name rules; names compare as the sanitizer's do (case and
//     '-'/'_' ignored). The configured upstream credentials and the secret
//     value patterns are still masked inside them. Off by default; the
//     bridge logs each such tool at startup (INFO).
//   - resource: also expose the operation, which must be a GET, as an MCP
//     resource (resources/read calls the tool, through every middleware):
//     {uri, name, mimeType, description, complete}. uri is required and
//     absolute (api://pets); with {var} expressions (RFC 6570 level 1
//     only: no operators, modifiers or lists; names of letters, digits and
//     _) it is a resource template, each var naming a path or query
//     parameter of the operation, and every path parameter and required
//     query parameter must have one. name defaults to the tool name,
//     description to the tool's; mimeType (a media type) to the answer's.
//     complete maps a var to {tool, field}: completion/complete offers the
//     parameter's enum values plus field (a dotted path; none for scalar
//     items) of each item that the named GET tool (a selected operation, by
//     its whitelist name or operationId, called without arguments) answers,
//     in a top-level array or the first array member of a top-level
//     object. URIs are unique across entries; openapi://spec is the
//     bridge's own (the whitelisted part of the spec).
//
// name, description, title and resource are per operation, so they are not
// allowed with tag; annotations, timeout, nestedStyle, allowSlashes, pinned, allow,
// fields, maxItems and redact are.
//
// # Errors
//
// [Parse] rejects unknown or repeated keys, values of the wrong type, an
// empty document or tools list, more than one document, invalid methods,
// paths, durations and nested styles, empty or repeated allowSlashes names,
// entries with no selector or several, a path without a method (and the
// reverse), and name overrides used twice. [Policy.Select]
// rejects entries that match no operation (suggesting up to three close
// candidates by edit distance), allowSlashes names that are not path
// parameters of style simple, operations selected by two entries of the
// same kind (two tags, or two entries naming one operation; an entry naming
// one operation by method+path or operationId refines a tag that selects it
// too: its overrides win one by one, and what it leaves unset, the access
// list above all, comes from the tag), and name overrides repeated across entries. Each problem is one error
// starting with "line N: "; all of them come back together as an
// [errors.Join], so a caller can print them under the file's name.
//
// # Selection
//
// Only operations under the document's paths are considered, never webhooks
// or callbacks, and only the eight methods above (OpenAPI 3.2's QUERY and
// additionalOperations are not exposed). Selected operations come out
// sorted by path, then by method in the order listed above.
//
// [Policy.Wants] answers the same question for one operation before any
// document is loaded, from its method, path, operationId and tags, so that
// a loader can build only the operations a whitelist may select. It may
// say yes to more than Select picks, never to less.
package whitelist
