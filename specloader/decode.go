package specloader

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v4"
)

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
//
// A non-nil plan leaves out the path items, operations and components it
// does not keep (prune.go).
func decodeJSON(ctx context.Context, jd *jsonDoc, plan *prunePlan) (*openapi3.T, error) {
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
			doc.Components, err = splitComponents(jd, m.val, &jobs, plan)
		case "paths":
			doc.Paths, err = splitPaths(jd, m.val, &jobs, plan)
		default:
			jobs.addExtension(at, m, &doc.Extensions)
		}
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", at, err)
		}
	}
	if err := jobs.run(ctx, jd.data); err != nil {
		return nil, err
	}
	jobs.setExtensions()
	return doc, nil
}

func splitComponents(jd *jsonDoc, s span, jobs *jobList, plan *prunePlan) (*openapi3.Components, error) {
	var ms []member
	if jd.comps != nil {
		ms = jd.comps.members
	} else {
		all, ok, err := newCursor(jd.data, s).members()
		if err != nil || !ok {
			return nil, err
		}
		ms = lastWins(all)
	}
	c := &openapi3.Components{}
	var err error
	for _, m := range ms {
		switch m.key {
		case "schemas":
			c.Schemas, err = splitSection[openapi3.SchemaRef](jd, m, jobs, plan)
		case "parameters":
			c.Parameters, err = splitSection[openapi3.ParameterRef](jd, m, jobs, plan)
		case "headers":
			c.Headers, err = splitSection[openapi3.HeaderRef](jd, m, jobs, plan)
		case "requestBodies":
			c.RequestBodies, err = splitSection[openapi3.RequestBodyRef](jd, m, jobs, plan)
		case "responses":
			c.Responses, err = splitSection[openapi3.ResponseRef](jd, m, jobs, plan)
		case "securitySchemes":
			c.SecuritySchemes, err = splitSection[openapi3.SecuritySchemeRef](jd, m, jobs, plan)
		case "examples":
			c.Examples, err = splitSection[openapi3.ExampleRef](jd, m, jobs, plan)
		case "links":
			c.Links, err = splitSection[openapi3.LinkRef](jd, m, jobs, plan)
		case "callbacks":
			c.Callbacks, err = splitSection[openapi3.CallbackRef](jd, m, jobs, plan)
		default:
			jobs.addExtension("/components/"+escapePointer(m.key), m, &c.Extensions)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.key, err)
		}
	}
	return c, nil
}

// splitSection makes the map of a components section: the entries the
// plan keeps of it, or all of them.
func splitSection[V any](jd *jsonDoc, m member, jobs *jobList, plan *prunePlan) (map[string]*V, error) {
	at := "/components/" + escapePointer(m.key)
	if plan != nil {
		if kept, ok := plan.sections[m.key]; ok {
			return mapEntries[V](jd, kept, at, jobs), nil
		}
	}
	if jd.comps != nil {
		if entries, ok := jd.comps.sections[m.key]; ok {
			return mapEntries[V](jd, entries, at, jobs), nil
		}
	}
	return splitMap[V](jd, m.val, at, jobs) // not an object: null, or an error
}

// splitPaths mirrors Paths.UnmarshalYAML: x- keys are extensions, the rest
// path items. With a plan, only the members it lists are decoded, without
// the operations it drops.
func splitPaths(jd *jsonDoc, s span, jobs *jobList, plan *prunePlan) (*openapi3.Paths, error) {
	var ms []member
	switch {
	case plan != nil:
		ms = plan.paths
	case jd.paths != nil:
		ms = make([]member, len(jd.paths.entries))
		for i, e := range jd.paths.entries {
			ms[i] = e.member
		}
	default:
		all, ok, err := newCursor(jd.data, s).members()
		if err != nil || !ok {
			return nil, err
		}
		ms = lastWins(all)
	}
	paths := openapi3.NewPathsWithCapacity(len(ms))
	paths.Extensions = make(map[string]any)
	for _, m := range ms {
		if strings.HasPrefix(m.key, "x-") {
			jobs.addExtension("/paths/"+escapePointer(m.key), m, &paths.Extensions)
			continue
		}
		item := new(openapi3.PathItem)
		paths.Set(m.key, item)
		var drop map[string]bool
		if plan != nil {
			drop = plan.drop[m.key]
		}
		*jobs = append(*jobs, decodeJob{at: "/paths/" + escapePointer(m.key), val: m.val, dst: item, drop: drop})
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
	return mapEntries[V](jd, lastWins(ms), at, jobs), nil
}

// mapEntries makes the map of the entries ms of a section and queues the
// decoding of each.
func mapEntries[V any](jd *jsonDoc, ms []member, at string, jobs *jobList) map[string]*V {
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
	return out
}

// decodeExtension decodes an extension (or any key the model does not
// declare) as kin-openapi does: through its YAML decoder into an any, then
// with the numbers made float64, as encoding/json would have them.
//
// encoding/json gives that very value, three times faster (GitHub's
// x-webhooks is 900 KB), for valid UTF-8 whose numbers fit a float64;
// anything else takes the YAML way.
func decodeExtension(data []byte, s span) (any, error) {
	raw := data[s.start:s.end]
	var v any
	if utf8.Valid(raw) && json.Unmarshal(raw, &v) == nil {
		return v, nil
	}
	n, err := newCursor(data, s).node(0)
	if err != nil {
		return nil, err
	}
	v = nil
	if err := n.Decode(&v); err != nil {
		if jerr := json.Unmarshal(raw, &v); jerr != nil {
			return nil, err
		}
	}
	return jsonNumbers(v), nil
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
	// drop names members of the value (an object) to leave out: the
	// operations a prune plan drops from a path item. nil means none.
	drop map[string]bool

	// ext, when set, makes the job an extension's (dst is unused): its
	// value lands in extVal, and setExtensions stores it under key in
	// *ext once all jobs are done, since maps take no parallel writes.
	ext    *map[string]any
	key    string
	extVal any
}

func (l *jobList) add(at string, val span, dst any) {
	*l = append(*l, decodeJob{at: at, val: val, dst: dst})
}

// addExtension queues the decoding of the extension m into *ext.
func (l *jobList) addExtension(at string, m member, ext *map[string]any) {
	*l = append(*l, decodeJob{at: at, val: m.val, ext: ext, key: m.key})
}

// setExtensions stores the extensions decoded by a run.
func (l jobList) setExtensions() {
	for i := range l {
		if j := &l[i]; j.ext != nil {
			if *j.ext == nil {
				*j.ext = make(map[string]any)
			}
			(*j.ext)[j.key] = j.extVal
		}
	}
}

// run decodes every job on GOMAXPROCS workers, the largest values first so
// that no big one is left to run alone at the end. It reports the failure
// of the earliest job in the list so that errors do not depend on
// scheduling, and turns a panic inside kin-openapi into an error, which a
// deferred recover in the caller's goroutine could not catch.
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
	order := make([]int, len(l))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Compare(l[b].val.end-l[b].val.start, l[a].val.end-l[a].val.start)
	})
feed:
	for _, i := range order {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
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
func (j *decodeJob) decode(data []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoding %s: %w", j.at, panicError(r))
		}
	}()
	if j.ext != nil {
		if j.extVal, err = decodeExtension(data, j.val); err != nil {
			return fmt.Errorf("decoding %s: %w", j.at, err)
		}
		return nil
	}
	if sr, ok := j.dst.(*openapi3.SchemaRef); ok && j.drop == nil && fastSchemas {
		// A component schema: decoded straight from the text where it can
		// be (fastschema.go); an error goes the general way below, which
		// reports it as kin-openapi does.
		c := newCursor(data, j.val)
		if (&schemaDecoder{c: c}).schemaRef(sr, 0) == nil && c.peek() == 0 {
			return nil
		}
		*sr = openapi3.SchemaRef{}
	}
	if ex, ok := j.dst.(*openapi3.ExampleRef); ok && fastSchemas {
		c := newCursor(data, j.val)
		if (&schemaDecoder{c: c}).example(ex) && c.peek() == 0 {
			return nil
		}
		*ex = openapi3.ExampleRef{}
	}
	c := newCursor(data, j.val)
	var n *yaml.Node
	if j.drop != nil {
		n, err = c.nodeWithout(j.drop)
	} else {
		n, err = c.node(0)
	}
	if err != nil {
		return fmt.Errorf("decoding %s: %w", j.at, err)
	}
	yerr := n.Decode(j.dst)
	if yerr == nil {
		return nil
	}
	reflect.ValueOf(j.dst).Elem().SetZero()
	raw := data[j.val.start:j.val.end]
	if j.drop != nil {
		raw = appendJSON(nil, n) // the value without the members dropped
	}
	if json.Unmarshal(raw, j.dst) == nil {
		return nil
	}
	reflect.ValueOf(j.dst).Elem().SetZero()
	return fmt.Errorf("decoding %s: %w", j.at, yerr)
}
