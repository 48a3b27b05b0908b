package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
)

// reloader re-runs provisioning while the bridge serves and swaps the new
// catalog in. Triggers: SIGHUP, --spec-refresh, and, after a degraded start,
// retries with backoff until the spec arrives. A reload that fails keeps
// the old tools serving and logs why, once per distinct error; one whose
// inputs did not change rebuilds nothing.
type reloader struct {
	a  *app
	rt *bridge.Runtime

	mu      sync.Mutex // one reload at a time
	cur     inputs     // what the served catalog was built from
	key     string     // its tool cache entry ("" when none)
	lastErr string

	cfgSum, cfgSaid [sha256.Size]byte // the config file's at the start, and last warned of
}

func newReloader(a *app, rt *bridge.Runtime, bt *built) *reloader {
	r := &reloader{a: a, rt: rt, cur: bt.inputs, key: bt.key}
	r.cfgSum = r.configSum()
	r.cfgSaid = r.cfgSum
	r.cur.spec = nil // only its digest is compared; the bytes would stay in memory
	bt.inputs.spec = nil
	return r
}

// reloadResult says what a reload did.
type reloadResult int

const (
	reloadFailed reloadResult = iota
	reloadUnchanged
	reloadSwapped
)

// reload re-reads the spec and the whitelist and swaps in what they build.
func (r *reloader) reload(ctx context.Context, why string) reloadResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.a
	r.noteConfig(why)
	degraded := r.rt.Catalog().Degraded() != ""
	same, fresh := r.unchanged(ctx)
	if !degraded && same {
		r.lastErr = ""
		r.rt.NoteReload("unchanged")
		r.count("unchanged")
		a.log.Debug("reload: spec and whitelist unchanged", zap.String("trigger", why))
		return reloadUnchanged
	}
	var in inputs
	var err error
	if fresh != nil {
		in, err = *fresh, nil // the conditional read already brought the new bytes
	} else {
		in, err = a.readInputs(ctx, false)
	}
	if err == nil && !degraded && in.sum == r.cur.sum && !r.refsChanged(ctx) {
		r.lastErr = ""
		r.cur.validator = in.validator
		r.rt.NoteReload("unchanged")
		r.count("unchanged")
		a.log.Debug("reload: spec and whitelist unchanged", zap.String("trigger", why))
		return reloadUnchanged
	}
	var bt *built
	if err == nil {
		bt, err = a.provision(ctx, in, !a.cfg.NoCache)
	}
	if err != nil && ctx.Err() != nil {
		// The bridge is stopping: the reload was abandoned, not failed.
		a.log.Debug("reload abandoned: the bridge is stopping", zap.String("trigger", why), zap.Error(err))
		return reloadFailed
	}
	if err != nil {
		msg := err.Error()
		if msg != r.lastErr {
			r.lastErr = msg
			switch {
			case degraded && errors.Is(err, specloader.ErrFetch):
				a.log.Warn("spec still unavailable; serving only ping", zap.String("trigger", why), zap.Error(err))
			case degraded:
				// Retrying will not mend it: the spec or the whitelist needs a fix.
				a.log.Error("spec fetched, but the tools cannot be built; serving only ping", zap.String("trigger", why), zap.Error(err))
			default:
				a.log.Error("reload failed; the previous tools keep serving", zap.String("trigger", why), zap.Error(err))
			}
		}
		r.rt.NoteReload("failed: " + msg)
		r.count("failed")
		return reloadFailed
	}
	r.lastErr = ""
	r.cur = bt.inputs
	r.cur.spec = nil
	bt.spec, bt.inputs.spec = nil, nil
	old := r.rt.Swap(bt.cat)
	if r.key != "" && r.key != bt.key {
		// The replaced tools' entry: kept, every change of the spec
		// would leave one more in the cache directory.
		a.dropCached(r.key)
	}
	r.key = bt.key
	// Noted and logged before the memory is returned: a client that sees
	// the new tools (list_changed, /ready) and asks ping must read "ok",
	// and a forced collection takes a while on a busy machine.
	r.rt.NoteReload("ok")
	r.count("ok")
	a.log.Info("tools reloaded", zap.String("trigger", why), zap.Int("tools", bt.cat.Len()), zap.Int("previous", old.Len()), zap.Bool("recovered", old.Degraded() != ""), zap.Bool("cached", bt.cached))
	debug.FreeOSMemory() // the old catalog and the parsed spec, as at start
	return reloadSwapped
}

// configSum is the SHA-256 of the config file (zero without one, or when
// it cannot be read).
func (r *reloader) configSum() [sha256.Size]byte {
	if r.a.cfg.Config == "" {
		return [sha256.Size]byte{}
	}
	data, err := os.ReadFile(r.a.cfg.Config)
	if err != nil {
		return [sha256.Size]byte{}
	}
	return sha256.Sum256(data)
}

// noteConfig says, once per new content, that the config file changed
// since the start: its settings are read at start only, and an operator
// who edited it and sent SIGHUP would otherwise believe them applied.
func (r *reloader) noteConfig(why string) {
	if r.a.cfg.Config == "" {
		return
	}
	sum := r.configSum()
	if sum == r.cfgSaid {
		return
	}
	r.cfgSaid = sum
	if sum != r.cfgSum {
		r.a.log.Warn("config file changed: its settings take effect at the next start; a reload re-reads only the spec and the whitelist", zap.String("config", r.a.cfg.Config), zap.String("trigger", why))
	}
}

// count records a reload's result in mcpbridge_spec_reloads_total.
func (r *reloader) count(result string) {
	if m := r.a.metrics; m != nil {
		m.Reload(result)
	}
}

// unchanged reports, without reading more than it must, that neither the
// spec (a conditional GET answered 304, or a file of the same size and
// modification time), nor the documents its $refs pulled in, nor the
// whitelist changed since the served catalog was built. When the
// conditional read brought a new document, fresh holds the inputs made of
// it, so that the reload does not download it a second time.
func (r *reloader) unchanged(ctx context.Context) (same bool, fresh *inputs) {
	a := r.a
	if a.specData != nil || r.cur.validator == (specloader.Validator{}) {
		return false, nil
	}
	data, loc, v, notModified, err := specloader.Refetch(ctx, a.cfg.Spec, a.loaderOptions(), r.cur.validator)
	if err != nil {
		return false, nil
	}
	wl, err := a.whitelistBytes(ctx)
	if err != nil {
		return false, nil
	}
	if !notModified {
		in := inputs{spec: data, whitelist: wl, loc: loc, validator: v}
		in.setSums(v.SHA256)
		return false, &in
	}
	if !bytes.Equal(wl, r.cur.whitelist) || r.refsChanged(ctx) {
		return false, nil
	}
	r.cur.validator = v
	return true, nil
}

// refsChanged reports whether a document the spec's $refs pulled in
// changed (or cannot be read again).
func (r *reloader) refsChanged(ctx context.Context) bool {
	if len(r.cur.refs) == 0 {
		return false
	}
	changed, err := specloader.RefsChanged(ctx, r.cur.loc, r.cur.refs, r.a.loaderOptions())
	return err != nil || changed
}

// watch runs the triggers until ctx is done; the returned channel closes
// when they have stopped.
func (r *reloader) watch(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	hup := r.a.hup
	if hup == nil {
		hup = make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
	}
	refresh := r.a.cfg.SpecRefresh
	go func() {
		defer close(done)
		defer signal.Stop(hup)
		var tick <-chan time.Time
		if refresh > 0 {
			t := time.NewTicker(refresh)
			defer t.Stop()
			tick = t.C
		}
		// A degraded start retries with backoff from 1 s, capped at
		// --spec-refresh or 60 s.
		backoff := time.Second
		maxBackoff := 60 * time.Second
		if refresh > 0 && refresh < maxBackoff {
			maxBackoff = refresh
		}
		retry := time.NewTimer(backoff)
		defer retry.Stop()
		if r.rt.Catalog().Degraded() == "" {
			retry.Stop()
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				r.reload(ctx, "SIGHUP")
			case <-tick:
				r.reload(ctx, "spec-refresh")
			case <-retry.C:
				if r.rt.Catalog().Degraded() == "" {
					continue // recovered by another trigger
				}
				if r.reload(ctx, "degraded retry") != reloadSwapped {
					backoff = min(backoff*2, maxBackoff)
					retry.Reset(backoff)
				}
			}
		}
	}()
	return done
}
