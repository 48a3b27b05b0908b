package specloader

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
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
	// credentials for a protected spec. They go to the spec's own origin
	// (scheme, host, port) only: never to a $ref on another origin, and
	// they are dropped on a redirect to another origin (except from http to
	// https on the same host). They are never logged. nil means none.
	Header http.Header

	// SHA256, when not zero, is the SHA-256 of the bytes given to
	// LoadData, which the caller already has (Refetch's Validator): it
	// becomes Result.Hash without hashing the document again.
	SHA256 [32]byte

	// DeferValidation leaves lenient validation (kin-openapi's
	// T.Validate, a quarter of a second on GitHub's spec) out of the load:
	// Result.Validate runs it later, when the caller has done what it
	// loaded the spec for. Ignored with Strict, whose findings are errors.
	DeferValidation bool

	// Strict turns validation findings into an error. The zero value
	// validates leniently: examples, defaults, patterns and formats are not
	// checked, and what remains is reported in [Result.Warnings], because
	// real specs (GitHub, Jira) fail strict validation yet work. Strict
	// validation also checks examples, defaults and patterns.
	Strict bool

	// AllowOrigins lists the origins ("https://schemas.example.com",
	// "http://10.0.0.5:8080": scheme, host and port, nothing else) that
	// the spec's $refs and redirects may reach besides the spec's own. A
	// spec at a URL follows $refs to its own origin and to these; a local
	// spec (a file, or in memory) follows file $refs, and URL $refs to
	// these only. Redirects, of the spec or of a $ref, may stay on the
	// origin of the request, go from http to https on the same host, or go
	// to the spec's origin or one of these; a redirect of the spec to any
	// other origin is an error. Whatever the origin, the address dialed is
	// checked when it is dialed: link-local (cloud metadata) and other
	// special addresses never, loopback and private ones for the spec's
	// own URL, for the hosts listed here, and for every $ref of a spec
	// that is local or whose URL names such an address (or localhost)
	// literally; see guard.go. A file:///directory entry lets a local
	// spec's $refs read files under that directory, besides the spec's own
	// (files elsewhere are refused). Any other entry that is not an origin
	// is an error.
	// nil means the spec's own origin only.
	AllowOrigins []string

	// Client fetches URL specs and URL $refs. nil means a client of its
	// own, which checks each address it dials. A given client is used
	// with the same origin and redirect rules and with Header dropped on a
	// redirect to another origin; its dialing cannot be seen, so addresses
	// are checked by resolving the host before each request, which DNS
	// rebinding can defeat: prefer nil, or a client whose dialer refuses
	// link-local and private addresses itself.
	Client *http.Client

	// TLS configures the connections of the loader's own client (a
	// private CA bundle, a client certificate): a spec served by an
	// upstream behind a private CA or mTLS. nil means the system roots.
	// Not used with Client.
	TLS *tls.Config

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

	// Validate, set with Options.DeferValidation, validates Doc and
	// returns the findings that would otherwise be in Warnings (scrubbed
	// the same way). It only reads Doc: it may run while Doc is read
	// elsewhere, not while it is modified.
	Validate func(context.Context) []string

	// Location is where the spec was loaded from: a file:// URL with an
	// absolute path, or the http(s) URL as requested, not the one after
	// redirects, without its userinfo and with its query values masked
	// (RedactURL). It is the base for relative server URLs: these then
	// point where the operator sent the bridge, and inherit no credential.
	// nil for LoadData without a location.
	Location *url.URL

	// Hash is the hex SHA-256 of the raw bytes of the spec document (not of
	// the documents its $refs pull in), for caches.
	Hash string

	// ExternalRefs lists the documents the spec's $refs pulled in, each
	// once, by Location, with the hash of its bytes: with Hash, what a
	// cache of anything built from the spec must be keyed on (RefsChanged
	// checks them again). nil for a spec in one document.
	ExternalRefs []Ref

	// Pruned is true when Options.Keep left parts of the document out of
	// Doc. A caller that needs the whole document after all (to suggest
	// operations a whitelist misspelled, say) loads again without Keep.
	Pruned bool
}

// Load reads the spec at source, a file path, a file:// URL or an http(s)
// URL, and returns its OpenAPI 3 model. Errors name the source and the step
// that failed.
//
// It is Read followed by LoadData: relative $refs and Result.Location refer
// to the URL as given, not to where redirects led.
func Load(ctx context.Context, source string, opts Options) (res *Result, err error) {
	name := RedactURL(source)
	sc := newScrubber(nil)
	defer func() { err = sc.error(err) }()
	defer recoverPanic(&err, &name)

	loc, err := parseSource(source)
	if err != nil {
		return nil, fmt.Errorf("loading spec %s: %w", name, err)
	}
	sc = newScrubber(loc)
	if isHTTP(loc) {
		name = displayURL(loc)
	}

	s, err := newSession(ctx, loc, opts)
	if err != nil {
		return nil, fmt.Errorf("loading spec %s: %w", name, err)
	}
	defer s.close()
	data, _, _, err := s.readRoot(loc, Validator{})
	if err != nil {
		return nil, fmt.Errorf("loading spec %s: %w", name, err)
	}
	s.setRoot(loc, data)
	if res, err = s.load(data, loc, sc); err != nil {
		return nil, fmt.Errorf("loading spec %s: %w", name, err)
	}
	return res, nil
}

// LoadData parses and resolves a spec held in memory. location is where it
// came from (the loc of Read or Refetch), the base for relative $refs and
// what decides which $refs may be followed (Options.AllowOrigins): a
// file:// URL with an absolute path or an http(s) URL, credentials
// included; nil means nowhere, and then a relative external $ref is an
// error and the spec counts as local. data is subject to Options.MaxBytes
// like a read spec. Result.Location is location with its credentials
// removed or masked.
func LoadData(ctx context.Context, data []byte, location *url.URL, opts Options) (res *Result, err error) {
	name := "(in-memory spec)"
	if location != nil {
		name = displayURL(location)
	}
	sc := newScrubber(location)
	defer func() { err = sc.error(err) }()
	defer recoverPanic(&err, &name)

	if location != nil {
		if err := checkLocation(location); err != nil {
			return nil, fmt.Errorf("loading spec %s: %w", name, err)
		}
	}
	if max := opts.maxBytes(); int64(len(data)) > max {
		return nil, fmt.Errorf("loading spec %s: %w", name, tooLarge(int64(len(data)), max))
	}
	s, err := newSession(ctx, location, opts)
	if err != nil {
		return nil, fmt.Errorf("loading spec %s: %w", name, err)
	}
	defer s.close()
	s.setRoot(location, data)
	if res, err = s.load(data, location, sc); err != nil {
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
func (s *session) load(data []byte, loc *url.URL, sc *scrubber) (*Result, error) {
	if s.ctx.Err() != nil {
		return nil, context.Cause(s.ctx) // "terminated signal received", not "context canceled"
	}
	// Hashing 13 MB takes 10 ms or more: it runs beside the load, unless
	// the caller has the hash.
	hash := make(chan string, 1)
	if s.opts.SHA256 != ([32]byte{}) {
		hash <- hex.EncodeToString(s.opts.SHA256[:])
	} else {
		go func() {
			sum := sha256.Sum256(data)
			hash <- hex.EncodeToString(sum[:])
		}()
	}
	res := &Result{Location: publicLocation(loc)}

	body := trimBOM(data)
	p, err := probe(body)
	if err != nil {
		return nil, err
	}
	res.Version = p.version

	doc, pruned, err := s.decode(p, body, loc)
	var notes []string
	if err != nil && !s.opts.Strict && s.ctx.Err() == nil {
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
	if s.ctx.Err() != nil {
		return nil, context.Cause(s.ctx) // "terminated signal received", not "context canceled"
	}
	res.Doc, res.Pruned = doc, pruned

	if s.opts.DeferValidation && !s.opts.Strict {
		res.Warnings = sc.all(notes)
		doc := res.Doc
		res.Validate = func(ctx context.Context) []string {
			warnings, _ := validate(ctx, doc, false) // lenient: never an error
			return sc.all(warnings)
		}
	} else {
		warnings, err := validate(s.ctx, res.Doc, s.opts.Strict)
		if err != nil {
			return nil, err
		}
		res.Warnings = sc.all(append(notes, warnings...))
	}
	res.ExternalRefs = s.sortedRefs()
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
		if err := checkAliasChains2(&doc2); err != nil {
			return nil, false, err
		}
		doc, err := openapi2conv.ToV3WithLoader(&doc2, kl, loc)
		if err != nil {
			return nil, false, fmt.Errorf("converting Swagger 2.0 to OpenAPI 3: %w", err)
		}
		applyCollectionFormats(&doc2, doc) // collection.go
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
		prelink(doc) // prelink.go
		if err := checkAliasChains3(doc); err != nil {
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
	prelink(doc)
	if err := checkAliasChains3(doc); err != nil {
		return nil, err
	}
	if err := s.kinLoader().ResolveRefsIn(doc, loc); err != nil {
		return nil, fmt.Errorf("resolving references: %w", err)
	}
	return doc, nil
}

// checkAliasChains2 applies checkAliasChains to the definitions,
// parameters and responses of a Swagger 2.0 document.
func checkAliasChains2(doc *openapi2.T) error {
	for _, err := range []error{
		aliasChains2(doc.Definitions, "definitions", func(x *openapi2.SchemaRef) string { return x.Ref }),
		aliasChains2(doc.Parameters, "parameters", func(x *openapi2.Parameter) string { return x.Ref }),
		aliasChains2(doc.Responses, "responses", func(x *openapi2.Response) string { return x.Ref }),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

func aliasChains2[R any](m map[string]*R, section string, ref func(*R) string) error {
	next := make(map[string]string)
	for name, x := range m {
		if x != nil {
			if to, ok := strings.CutPrefix(ref(x), "#/"+section+"/"); ok {
				next[name] = to
			}
		}
	}
	return checkAliasChains(section, next)
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
