package specloader

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// jsonDoc is a valid JSON document split into the members of its root.
type jsonDoc struct {
	data []byte
	top  []member
}

// splitJSON splits a document that json.Valid accepted and whose first byte
// is '{'.
func splitJSON(data []byte) (*jsonDoc, error) {
	c := newCursor(data, span{end: len(data), line: 1})
	top, _, err := c.members()
	if err != nil {
		return nil, err
	}
	return &jsonDoc{data: data, top: lastWins(top)}, nil
}

// lastWins drops all but the last of members sharing a key, as
// encoding/json does, which is also where kin-openapi ends up with such a
// document (its YAML decoder refuses duplicates and it retries as JSON).
func lastWins(ms []member) []member {
	seen := make(map[string]int, len(ms))
	out := ms[:0:0]
	for _, m := range ms {
		if i, ok := seen[m.key]; ok {
			out[i] = m
			continue
		}
		seen[m.key] = len(out)
		out = append(out, m)
	}
	return out
}

// decodeJSON builds the model of an OpenAPI 3 JSON document.
//
// Why not kin-openapi's loader: it parses JSON with go-yaml, whose scanner
// takes most of its 1.6 s and 630 MiB on GitHub's 13 MB spec; and why not
// json.Unmarshal into openapi3.T: kin's UnmarshalJSON methods decode every
// subtree again at each level of nesting (2.2 s). Here the root, the
// components and the paths are split by a scanner that only skips values,
// and each leaf (a schema, a parameter, a path item...) is turned into the
// yaml.Node tree go-yaml would have built and handed to kin-openapi's own
// native decoder, in parallel. The result is what kin's loader builds from
// the same text, minus the positions it does not record without
// IncludeOrigin anyway.
func decodeJSON(ctx context.Context, jd *jsonDoc) (*openapi3.T, error) {
	doc := &openapi3.T{}
	var jobs jobList
	var err error
	for _, m := range jd.top {
		at := "/" + escapePointer(m.key)
		switch m.key {
		case "openapi":
			jobs.add(at, m.val, &doc.OpenAPI)
		case "info":
			jobs.add(at, m.val, &doc.Info)
		case "servers":
			jobs.add(at, m.val, &doc.Servers)
		case "security":
			jobs.add(at, m.val, &doc.Security)
		case "tags":
			jobs.add(at, m.val, &doc.Tags)
		case "externalDocs":
			jobs.add(at, m.val, &doc.ExternalDocs)
		case "jsonSchemaDialect":
			jobs.add(at, m.val, &doc.JSONSchemaDialect)
		case "webhooks":
			doc.Webhooks, err = splitMap[openapi3.PathItem](jd, m.val, at, &jobs)
		case "components":
			doc.Components, err = splitComponents(jd, m.val, &jobs)
		case "paths":
			doc.Paths, err = splitPaths(jd, m.val, &jobs)
		default:
			err = setExtension(jd, &doc.Extensions, m)
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", at, err)
		}
	}
	if err := jobs.run(ctx, jd.data); err != nil {
		return nil, err
	}
	return doc, nil
}

func splitComponents(jd *jsonDoc, s span, jobs *jobList) (*openapi3.Components, error) {
	ms, ok, err := newCursor(jd.data, s).members()
	if err != nil || !ok {
		return nil, err
	}
	c := &openapi3.Components{}
	for _, m := range lastWins(ms) {
		at := "/components/" + escapePointer(m.key)
		switch m.key {
		case "schemas":
			c.Schemas, err = splitMap[openapi3.SchemaRef](jd, m.val, at, jobs)
		case "parameters":
			c.Parameters, err = splitMap[openapi3.ParameterRef](jd, m.val, at, jobs)
		case "headers":
			c.Headers, err = splitMap[openapi3.HeaderRef](jd, m.val, at, jobs)
		case "requestBodies":
			c.RequestBodies, err = splitMap[openapi3.RequestBodyRef](jd, m.val, at, jobs)
		case "responses":
			c.Responses, err = splitMap[openapi3.ResponseRef](jd, m.val, at, jobs)
		case "securitySchemes":
			c.SecuritySchemes, err = splitMap[openapi3.SecuritySchemeRef](jd, m.val, at, jobs)
		case "examples":
			c.Examples, err = splitMap[openapi3.ExampleRef](jd, m.val, at, jobs)
		case "links":
			c.Links, err = splitMap[openapi3.LinkRef](jd, m.val, at, jobs)
		case "callbacks":
			c.Callbacks, err = splitMap[openapi3.CallbackRef](jd, m.val, at, jobs)
		default:
			err = setExtension(jd, &c.Extensions, m)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.key, err)
		}
	}
	return c, nil
}

// splitPaths mirrors Paths.UnmarshalYAML: x- keys are extensions, the rest
// path items.
func splitPaths(jd *jsonDoc, s span, jobs *jobList) (*openapi3.Paths, error) {
	ms, ok, err := newCursor(jd.data, s).members()
	if err != nil || !ok {
		return nil, err
	}
	ms = lastWins(ms)
	paths := openapi3.NewPathsWithCapacity(len(ms))
	paths.Extensions = make(map[string]any)
	for _, m := range ms {
		if strings.HasPrefix(m.key, "x-") {
			if err := setExtension(jd, &paths.Extensions, m); err != nil {
				return nil, err
			}
			continue
		}
		item := new(openapi3.PathItem)
		paths.Set(m.key, item)
		jobs.add("/paths/"+escapePointer(m.key), m.val, item)
	}
	return paths, nil
}

// splitMap makes the map of a components section (or of webhooks) and
// queues the decoding of each entry. A null entry stays a nil pointer.
func splitMap[V any](jd *jsonDoc, s span, at string, jobs *jobList) (map[string]*V, error) {
	ms, ok, err := newCursor(jd.data, s).members()
	if err != nil || !ok {
		return nil, err
	}
	ms = lastWins(ms)
	out := make(map[string]*V, len(ms))
	for _, m := range ms {
		if string(jd.data[m.val.start:m.val.end]) == "null" {
			out[m.key] = nil
			continue
		}
		v := new(V)
		out[m.key] = v
		jobs.add(at+"/"+escapePointer(m.key), m.val, v)
	}
	return out, nil
}

// setExtension decodes an extension (or any key the model does not declare)
// as kin-openapi does: through its YAML decoder into an any, then with the
// numbers made float64, as encoding/json would have them.
func setExtension(jd *jsonDoc, ext *map[string]any, m member) error {
	n, err := newCursor(jd.data, m.val).node(0)
	if err != nil {
		return fmt.Errorf("%s: %w", m.key, err)
	}
	var v any
	if err := n.Decode(&v); err != nil {
		if jerr := json.Unmarshal(jd.data[m.val.start:m.val.end], &v); jerr != nil {
			return fmt.Errorf("%s: %w", m.key, err)
		}
	}
	if *ext == nil {
		*ext = make(map[string]any)
	}
	(*ext)[m.key] = jsonNumbers(v)
	return nil
}

// jsonNumbers turns the integers of a decoded value into float64, in place.
func jsonNumbers(v any) any {
	switch t := v.(type) {
	case int:
		return float64(t)
	case int64:
		return float64(t)
	case uint64:
		return float64(t)
	case map[string]any:
		for k, e := range t {
			t[k] = jsonNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = jsonNumbers(e)
		}
	}
	return v
}

// escapePointer escapes a key as a JSON pointer token (RFC 6901).
func escapePointer(k string) string {
	if !strings.ContainsAny(k, "~/") {
		return k
	}
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// jobList holds the leaf decodes queued while splitting the outer levels.
type jobList []decodeJob

type decodeJob struct {
	at  string // JSON pointer of the value, for errors
	val span
	dst any // pointer to the field or map entry to fill
}

func (l *jobList) add(at string, val span, dst any) {
	*l = append(*l, decodeJob{at: at, val: val, dst: dst})
}

// run decodes every job on GOMAXPROCS workers. It reports the failure of the
// earliest job in the list so that errors do not depend on scheduling, and
// turns a panic inside kin-openapi into an error, which a deferred recover in
// the caller's goroutine could not catch.
func (l jobList) run(ctx context.Context, data []byte) error {
	errs := make([]error, len(l))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(l)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = l[i].decode(data)
			}
		})
	}
feed:
	for i := range l {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// decode fills the job's destination through kin-openapi's native decoder,
// and, like kin-openapi, retries with encoding/json what that refuses.
func (j decodeJob) decode(data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoding %s: %w", j.at, panicError(r))
		}
	}()
	n, err := newCursor(data, j.val).node(0)
	if err != nil {
		return fmt.Errorf("decoding %s: %w", j.at, err)
	}
	yerr := n.Decode(j.dst)
	if yerr == nil {
		return nil
	}
	reflect.ValueOf(j.dst).Elem().SetZero()
	if json.Unmarshal(data[j.val.start:j.val.end], j.dst) == nil {
		return nil
	}
	reflect.ValueOf(j.dst).Elem().SetZero()
	return fmt.Errorf("decoding %s: %w", j.at, yerr)
}
