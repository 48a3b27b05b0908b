package specloader

import "strings"

// jsonDoc is a valid JSON document split into the members of its root, and
// its components and paths split further, all in one pass over the text:
// on GitHub's 13 MB spec every pass costs about 20 ms, as much as decoding
// the few operations a whitelist keeps.
type jsonDoc struct {
	data []byte
	top  []member
	// comps indexes the components object; nil when there is none or it
	// is not an object (decoding then says what is wrong).
	comps *compsIndex
	// paths indexes the paths object; nil when there is none or it is not
	// an object.
	paths *pathsIndex
}

// compsIndex is the components object split into its members, and each of
// them that is an object into its entries.
type compsIndex struct {
	members  []member            // last of a key wins
	sections map[string][]member // by member key; last of a key wins
}

// pathsIndex is the paths object split into its path items, and each path
// item into its fields, with its operations' operationId and tags read: all
// that Options.Keep is asked about.
type pathsIndex struct {
	entries []pathEntry // last of a key wins
}

// pathEntry is one member of the paths object.
type pathEntry struct {
	member
	ext bool // an x- extension of paths
	// whole is true for a path item whose operations cannot be told apart
	// from the item: it is not an object, or it has a $ref (whose target
	// may hold operations).
	whole  bool
	fields []itemField // the item's members, last of a key wins; nil when whole
}

// itemField is one member of a path item.
type itemField struct {
	member
	op   bool     // an operation: a method key with an object value
	id   string   // the operation's operationId
	tags []string // the operation's tags
}

// splitJSON splits a document whose first byte (after whitespace) is '{',
// checking on the way that it is JSON: it fails where json.Valid does.
func splitJSON(data []byte) (*jsonDoc, error) {
	jd := &jsonDoc{data: data}
	c := newCursor(data, span{end: len(data), line: 1})
	var top []member
	isObject, err := c.object(func(key string) error {
		m := member{key: key, val: c.here()}
		var err error
		// A key given twice is indexed twice; the last one stays, as in
		// lastWins.
		switch key {
		case "components":
			jd.comps, err = indexComponents(c)
		case "paths":
			jd.paths, err = indexPaths(c)
		default:
			err = c.skip()
		}
		m.val.end = c.pos
		top = append(top, m)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !isObject {
		return nil, c.errorf("expected an object")
	}
	if c.ws(); c.pos < len(data) {
		return nil, c.errorf("unexpected text after the document")
	}
	jd.top = lastWins(top)
	return jd, nil
}

// lastWins drops all but the last of members sharing a key, as
// encoding/json does, which is also where kin-openapi ends up with such a
// document (its YAML decoder refuses duplicates and it retries as JSON).
func lastWins(ms []member) []member {
	return lastWinsBy(ms, func(m *member) string { return m.key })
}

// lastWinsBy is lastWins for any list of keyed values: each key keeps the
// place of its first occurrence and the value of its last.
func lastWinsBy[T any](xs []T, key func(*T) string) []T {
	seen := make(map[string]int, len(xs))
	out := xs[:0:0]
	for i := range xs {
		k := key(&xs[i])
		if j, ok := seen[k]; ok {
			out[j] = xs[i]
			continue
		}
		seen[k] = len(out)
		out = append(out, xs[i])
	}
	return out
}

// indexComponents splits the components object at the cursor, which it
// moves past. nil for a value that is not an object.
func indexComponents(c *cursor) (*compsIndex, error) {
	ci := &compsIndex{sections: make(map[string][]member)}
	var ms []member
	isObject, err := c.object(func(key string) error {
		m := member{key: key, val: c.here()}
		var entries []member
		isObject, err := c.object(func(name string) error {
			e := member{key: name, val: c.here()}
			err := c.skip()
			e.val.end = c.pos
			entries = append(entries, e)
			return err
		})
		m.val.end = c.pos
		ms = append(ms, m)
		if isObject {
			ci.sections[key] = lastWins(entries)
		} else {
			delete(ci.sections, key)
		}
		return err
	})
	if err != nil || !isObject {
		return nil, err
	}
	ci.members = lastWins(ms)
	return ci, nil
}

// indexPaths splits the paths object at the cursor, which it moves past.
// nil for a value that is not an object.
func indexPaths(c *cursor) (*pathsIndex, error) {
	var entries []pathEntry
	isObject, err := c.object(func(key string) error {
		e := pathEntry{member: member{key: key, val: c.here()}}
		var err error
		if strings.HasPrefix(key, "x-") {
			e.ext = true
			err = c.skip()
		} else {
			e.fields, e.whole, err = indexItem(c)
		}
		e.val.end = c.pos
		entries = append(entries, e)
		return err
	})
	if err != nil || !isObject {
		return nil, err
	}
	return &pathsIndex{entries: lastWinsBy(entries, func(e *pathEntry) string { return e.key })}, nil
}

// indexItem splits the path item at the cursor, which it moves past.
func indexItem(c *cursor) (fields []itemField, whole bool, err error) {
	isObject, err := c.object(func(key string) error {
		f := itemField{member: member{key: key, val: c.here()}}
		var err error
		if isMethodKey(key) && c.peek() == '{' {
			f.op = true
			f.id, f.tags, err = readOperation(c)
		} else {
			err = c.skip()
		}
		f.val.end = c.pos
		fields = append(fields, f)
		return err
	})
	if err != nil || !isObject {
		return nil, true, err
	}
	fields = lastWinsBy(fields, func(f *itemField) string { return f.key })
	for _, f := range fields {
		if f.key == "$ref" {
			return nil, true, nil
		}
	}
	return fields, false, nil
}

// isMethodKey reports whether a Path Item Object's key holds an operation,
// as kin-openapi's PathItem names them.
func isMethodKey(k string) bool {
	switch k {
	case "get", "put", "post", "delete", "options", "head", "patch", "trace", "query", "connect":
		return true
	}
	return false
}

// readOperation reads the operationId and tags of the operation at the
// cursor, which it moves past. A scalar that is not a string counts by its
// text, as the YAML decoder reads it into a string.
func readOperation(c *cursor) (id string, tags []string, err error) {
	_, err = c.object(func(key string) error {
		switch key {
		case "operationId":
			var err error
			id, err = c.scalarString()
			return err
		case "tags":
			tags = tags[:0]
			_, err := c.array(func() error {
				t, err := c.scalarString()
				tags = append(tags, t)
				return err
			})
			return err
		}
		return c.skip()
	})
	return id, tags, err
}
