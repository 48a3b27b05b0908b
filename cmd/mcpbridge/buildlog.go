package main

import (
	"fmt"
	"slices"
	"sync"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// buildWarnings keeps a reload from repeating the warnings of the build
// before it. Every build of the tools logs what it found in the spec (its
// validation warnings, the repairs, the operations skipped, the parameters
// left out): on a spec with hundreds of repairs, each reload that swapped
// the tools repeated them all, burying the one line that was new. A build
// now logs only the warnings that the last successful build did not, and
// says how many it left out; `mcpbridge validate` and `tools --stats`
// still list them all.
type buildWarnings struct {
	mu   sync.Mutex
	last map[string]struct{} // the warnings of the last build that served
}

// buildRun records the warnings of one build while it is open.
type buildRun struct {
	memo *buildWarnings
	prev map[string]struct{}

	mu      sync.Mutex
	open    bool
	seen    map[string]struct{}
	skipped int
}

// start opens a run for one build, which leaves out the warnings the last
// build that served logged.
func (m *buildWarnings) start() *buildRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &buildRun{memo: m, prev: m.last, open: true, seen: map[string]struct{}{}}
}

// logger is l with this run's filter: while the run is open, a warning
// the previous build logged is left out; once it ends (the logger lives
// on in the catalog, for its calls) everything passes.
func (r *buildRun) logger(l *zap.Logger) *zap.Logger {
	return l.WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return &buildCore{Core: c, run: r} }))
}

// finish closes the run. When the build serves (keep), its warnings become
// the ones the next build leaves out; a failed build, or one restored from
// the cache (which logs none), leaves the last set in place. It returns
// how many warnings the run left out.
func (r *buildRun) finish(keep bool) int {
	r.mu.Lock()
	r.open = false
	seen, skipped := r.seen, r.skipped
	r.mu.Unlock()
	if keep {
		r.memo.mu.Lock()
		r.memo.last = seen
		r.memo.mu.Unlock()
	}
	return skipped
}

// repeated records a warning and reports whether the previous build
// logged it too.
func (r *buildRun) repeated(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.open {
		return false
	}
	r.seen[key] = struct{}{}
	if _, ok := r.prev[key]; ok {
		r.skipped++
		return true
	}
	return false
}

func (r *buildRun) isOpen() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.open
}

// buildCore is the zap core of a build's logger.
type buildCore struct {
	zapcore.Core
	run    *buildRun
	fields []zapcore.Field // from With, part of a warning's identity
}

func (c *buildCore) With(fs []zapcore.Field) zapcore.Core {
	return &buildCore{Core: c.Core.With(fs), run: c.run, fields: append(slices.Clip(c.fields), fs...)}
}

func (c *buildCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Level != zapcore.WarnLevel || !c.run.isOpen() {
		return c.Core.Check(e, ce)
	}
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *buildCore) Write(e zapcore.Entry, fs []zapcore.Field) error {
	if c.run.repeated(warningKey(e.Message, c.fields, fs)) {
		return nil
	}
	return c.Core.Write(e, fs)
}

// warningKey identifies a warning by its message and fields.
func warningKey(msg string, with, fs []zapcore.Field) string {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range with {
		f.AddTo(enc)
	}
	for _, f := range fs {
		f.AddTo(enc)
	}
	return msg + "\x00" + fmt.Sprint(enc.Fields) // fmt prints maps in key order
}
