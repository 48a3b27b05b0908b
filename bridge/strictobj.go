package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// StrictObject reads raw, one JSON object, into its members, which must be
// among fields, each named exactly (case and all) and at most once.
//
// encoding/json matches a struct's fields ignoring case and lets a later
// member replace an earlier one, so {"name":"a","NAME":"b"} reads as "b":
// a host that shows the call to a person for approval, or checks it
// against a policy, reads "a" (JavaScript keeps both keys). Envelopes that
// name what to call (call_operation's arguments, a REST batch) are read
// with this instead.
func StrictObject(raw []byte, fields ...string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("got %s, not an object", tokenKind(tok))
	}
	out := make(map[string]json.RawMessage, len(fields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		key, _ := tok.(string) // an object's key is always a string
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		if !slices.Contains(fields, key) {
			if i := slices.IndexFunc(fields, func(f string) bool { return equalFoldASCII(f, key) }); i >= 0 {
				return nil, fmt.Errorf("unknown field %q (names are case-sensitive: %q)", key, fields[i])
			}
			return nil, fmt.Errorf("unknown field %q", key)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("field %q given twice", key)
		}
		out[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("not JSON: data after the object")
	}
	return out, nil
}

// equalFoldASCII compares a and b ignoring ASCII case, as encoding/json
// does for the names this package reads.
func equalFoldASCII(a, b string) bool {
	return len(a) == len(b) && bytes.EqualFold([]byte(a), []byte(b))
}

// tokenKind names the JSON kind of a first token.
func tokenKind(tok json.Token) string {
	switch x := tok.(type) {
	case json.Delim:
		if x == '[' {
			return "an array"
		}
		return "an object"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}

// rawKind names the JSON kind of an encoded value.
func rawKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
