package specloader

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
)

// DefaultMaxBytes is the size limit used when [Options.MaxBytes] is zero.
const DefaultMaxBytes = 64 << 20

// DefaultTimeout is the fetch timeout used when [Options.Timeout] is zero.
const DefaultTimeout = 30 * time.Second

// Options bounds and tunes a load. The zero value is ready to use: 64 MiB,
// 30 s per fetch, no extra headers, lenient validation, a fresh client.
type Options struct {
	// MaxBytes caps the size of the spec document. The documents its
	// external $refs pull in share a second budget of the same size, so a
	// spec cannot grow past the limit by splitting itself into files.
	// 0 (or less) means DefaultMaxBytes (64 MiB).
	MaxBytes int64

	// Timeout bounds each fetch of a URL: the spec itself and every
	// document its $refs point to. 0 (or less) means DefaultTimeout (30 s).
	Timeout time.Duration

	// Header holds extra request headers for fetching a URL spec, typically
	// credentials for a protected spec. They go to the spec's own scheme and
	// host only: never to a $ref on another host, and they are dropped on a
	// redirect to another host. They are never logged. nil means none.
	Header http.Header

	// Strict turns validation findings into an error. The zero value
	// validates leniently: examples, defaults, patterns and formats are not
	// checked, and what remains is reported in [Result.Warnings], because
	// real specs (GitHub, Jira) fail strict validation yet work. Strict
	// validation also checks examples, defaults and patterns.
	Strict bool

	// Client fetches URL specs and URL $refs. nil means a client of its own
	// with Timeout. A given client is used as is, except that redirects to
	// another host lose the Header entries.
	Client *http.Client

	// Keep, when set, says which operations under the document's paths the
	// caller needs, so that the loader builds the model of those only.
	// Before any model is built, it is asked about each operation with the
	// method in upper case ("GET"), the path template as written under
	// paths, the operationId ("" when none) and the tags (a slice Keep
	// must not retain); calls come one at a time from the loading
	// goroutine, and may repeat when a document needs repairs. The
	// operations it rejects are left out of Result.Doc, and so are the
	// path items left without operations and the components that nothing
	// kept refers to, transitively; the rest of the document (info,
	// servers, security, tags, webhooks, securitySchemes, extensions) is
	// kept whole. Each kept operation is what a full load gives, $refs
	// resolved. whitelist's Policy.Wants fits.
	//
	// Keep is a hint: the loader may keep more than it accepts (the
	// operations a kept one refers to by a $ref into paths), and keeps
	// everything (Result.Pruned is then false) for YAML and Swagger 2.0
	// documents, for a document with a $ref to another document, to the
	// whole document or to an anchor, and for a document whose pruned
	// model fails to load, which is then loaded whole. Validation, strict
	// or not, covers only what is kept. nil keeps everything.
	Keep func(method, path, operationID string, tags []string) bool
}

func (o Options) maxBytes() int64 {
	if o.MaxBytes <= 0 {
		return DefaultMaxBytes
	}
	return o.MaxBytes
}

func (o Options) timeout() time.Duration {
	if o.Timeout <= 0 {
		return DefaultTimeout
	}
	return o.Timeout
}

// Result is a loaded spec.
type Result struct {
	// Doc is the OpenAPI 3 model with every $ref resolved (Swagger 2.0 is
	// converted, and then reads "3.0.3" in Doc.OpenAPI).
	Doc *openapi3.T

	// Version is the version the document declares: "2.0", "3.0.3", "3.1.0"...
	Version string

	// Warnings lists validation findings in lenient mode, one per problem,
	// at most maxWarnings of them. Empty when the spec validates or Strict is set.
	Warnings []string

	// Location is where the spec was loaded from: a file:// URL with an
	// absolute path, or the http(s) URL after redirects. It is the base for
	// relative server URLs. nil for LoadData without a location.
	Location *url.URL

	// Hash is the hex SHA-256 of the raw bytes of the spec document (not of
	// the documents its $refs pull in), for caches.
	Hash string

	// Pruned is true when Options.Keep left parts of the document out of
	// Doc. A caller that needs the whole document after all (to suggest
	// operations a whitelist misspelled, say) loads again without Keep.
	Pruned bool
}

// Load reads the spec at source, a file path, a file:// URL or an http(s)
// URL, and returns its OpenAPI 3 model. Errors name the source and the step
// that failed.
func Load(ctx context.Context, source string, opts Options) (res *Result, err error) {
	name := source
	defer recoverPanic(&err, &name)

	loc, err := parseSource(source)
	if err != nil {
		return nil, fmt.Errorf("loading spec %s: %w", name, err)
	}
	if isHTTP(loc) {
		name = loc.Redacted() // no userinfo in errors
	}

	s := newSession(ctx, loc, opts)
	data, loc, err := s.readRoot(loc)
	if err != nil {
		return nil, fmt.Errorf("loading spec %s: %w", name, err)
	}
	s.setRoot(loc, data)
	if res, err = s.load(data, loc); err != nil {
		return nil, fmt.Errorf("loading spec %s: %w", name, err)
	}
	return res, nil
}

// LoadData parses and resolves a spec held in memory. location is where it
// came from, the base for relative $refs: a file:// URL with an absolute path
// or an http(s) URL; nil means nowhere, and then a relative external $ref is
// an error. data is subject to Options.MaxBytes like a read spec.
func LoadData(ctx context.Context, data []byte, location *url.URL, opts Options) (res *Result, err error) {
	name := "(in-memory spec)"
	if location != nil {
		name = displayURL(location)
	}
	defer recoverPanic(&err, &name)

	if location != nil {
		if err := checkLocation(location); err != nil {
			return nil, fmt.Errorf("loading spec %s: %w", name, err)
		}
	}
	if max := opts.maxBytes(); int64(len(data)) > max {
		return nil, fmt.Errorf("loading spec %s: %w", name, tooLarge(int64(len(data)), max))
	}
	s := newSession(ctx, location, opts)
	s.setRoot(location, data)
	if res, err = s.load(data, location); err != nil {
		return nil, fmt.Errorf("loading spec %s: %w", name, err)
	}
	return res, nil
}

// recoverPanic turns a panic (kin-openapi has had several on malformed
// documents) into an error naming the source. It must be deferred directly.
func recoverPanic(err *error, name *string) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("loading spec %s: %w", *name, panicError(r))
	}
}

func panicError(r any) error {
	return fmt.Errorf("internal error in the OpenAPI library (a malformed document?): %v", r)
}

// load turns the raw bytes of the spec into a Result: detect the format and
// version, decode, resolve $refs, validate.
func (s *session) load(data []byte, loc *url.URL) (*Result, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	// Hashing 13 MB takes 10 ms or more: it runs beside the load.
	hash := make(chan string, 1)
	go func() {
		sum := sha256.Sum256(data)
		hash <- hex.EncodeToString(sum[:])
	}()
	res := &Result{Location: loc}

	body := trimBOM(data)
	p, err := probe(body)
	if err != nil {
		return nil, err
	}
	res.Version = p.version

	doc, pruned, err := s.decode(p, body, loc)
	var notes []string
	if err != nil && !p.swagger && !s.opts.Strict && s.ctx.Err() == nil {
		var fixed []byte
		if fixed, notes = s.repair(body, p, loc); len(notes) > 0 {
			p2, err2 := probe(fixed)
			if err2 == nil {
				doc, pruned, err2 = s.decode(p2, fixed, loc)
			}
			if err2 != nil {
				err = fmt.Errorf("%w; still failing after %d repairs: %v", err, len(notes), err2)
			} else {
				err = nil
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	res.Doc, res.Pruned = doc, pruned

	warnings, err := validate(s.ctx, res.Doc, s.opts.Strict)
	if err != nil {
		return nil, err
	}
	res.Warnings = append(notes, warnings...)
	res.Hash = <-hash
	return res, nil
}

// decode builds the OpenAPI 3 model with its $refs resolved, pruned as
// Options.Keep asks when pruned is true.
func (s *session) decode(p probeResult, body []byte, loc *url.URL) (doc *openapi3.T, pruned bool, err error) {
	kl := s.kinLoader()
	switch {
	case p.swagger:
		var doc2 openapi2.T
		if err := openapi2.UnmarshalFromData(body, &doc2); err != nil {
			return nil, false, fmt.Errorf("parsing Swagger 2.0 document: %w", err)
		}
		doc, err := openapi2conv.ToV3WithLoader(&doc2, kl, loc)
		if err != nil {
			return nil, false, fmt.Errorf("converting Swagger 2.0 to OpenAPI 3: %w", err)
		}
		return doc, false, nil
	case p.json != nil:
		if s.opts.Keep != nil {
			if plan := planPrune(p.json, s.opts.Keep); plan != nil {
				if doc, err := s.decodePruned(p.json, plan, loc); err == nil {
					return doc, true, nil
				}
				// A pruned document that fails to load is loaded whole:
				// the whole one fails the same way, with the same message,
				// or works, and then a $ref escaped the plan.
			}
		}
		doc, err := decodeJSON(s.ctx, p.json, nil)
		if err != nil {
			return nil, false, err
		}
		if err := kl.ResolveRefsIn(doc, loc); err != nil {
			return nil, false, fmt.Errorf("resolving references: %w", err)
		}
		return doc, false, nil
	default:
		doc, err := loadKin(kl, body, loc)
		return doc, false, err
	}
}

// decodePruned decodes and resolves what plan keeps. While it resolves,
// the spec's own bytes are not handed to kin-openapi, which reads them
// again (whole, through its slow YAML path) when a $ref into the spec does
// not resolve on the model: in a pruned model that is a $ref the plan
// missed, and the caller loads the document whole instead.
func (s *session) decodePruned(jd *jsonDoc, plan *prunePlan, loc *url.URL) (*openapi3.T, error) {
	doc, err := decodeJSON(s.ctx, jd, plan)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.pruning = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.pruning = false
		s.mu.Unlock()
	}()
	if err := s.kinLoader().ResolveRefsIn(doc, loc); err != nil {
		return nil, fmt.Errorf("resolving references: %w", err)
	}
	return doc, nil
}

// loadKin decodes and resolves through kin-openapi's own loader: the path for
// YAML, and for repaired documents.
func loadKin(kl *openapi3.Loader, body []byte, loc *url.URL) (*openapi3.T, error) {
	var (
		doc *openapi3.T
		err error
	)
	if loc == nil {
		doc, err = kl.LoadFromData(body)
	} else {
		doc, err = kl.LoadFromDataWithPath(body, loc)
	}
	if err != nil {
		return nil, fmt.Errorf("decoding and resolving OpenAPI 3 document: %w", err)
	}
	return doc, nil
}
