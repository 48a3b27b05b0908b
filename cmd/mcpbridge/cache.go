package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// The tool cache keeps the prepared tools of a start, so that a restart
// with the same spec bytes, whitelist, build-relevant options and binary
// skips parsing and building. Entries are files named by that key's hash,
// written to a temporary file and renamed (safe against concurrent
// writers), and prefixed by a SHA-256 of their content (a corrupt or
// truncated entry is ignored and rewritten).
//
// The key covers the root spec document only: a spec split into several
// files whose referenced files change needs --no-cache.

// cacheKey hashes everything that shapes the built tools.
func (a *app) cacheKey(spec, wl []byte) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field("mcpbridge-tools")
	field(version)
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			field(fmt.Sprint(st.Size(), st.ModTime().UnixNano()))
		}
	}
	sum := sha256.Sum256(spec)
	field(hex.EncodeToString(sum[:]))
	if wl == nil {
		field("all-operations")
	} else {
		sum = sha256.Sum256(wl)
		field(hex.EncodeToString(sum[:]))
	}
	cfg := a.cfg
	field(cfg.Spec)
	field(cfg.Upstream)
	field(fmt.Sprint(cfg.Strict, cfg.MaxOutputSchema, cfg.Timeout))
	keys := make([]string, 0, len(cfg.ServerVars))
	for k := range cfg.ServerVars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		field(k + "=" + cfg.ServerVars[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func (a *app) cacheDir() (string, error) {
	if a.cfg.CacheDir != "" {
		return a.cfg.CacheDir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "mcpbridge"), nil
}

// loadCached returns the cached bridge for key, or nil on any miss.
func (a *app) loadCached(key string, opts bridge.Options) *bridge.Catalog {
	dir, err := a.cacheDir()
	if err != nil {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(dir, key+".tools"))
	if err != nil {
		return nil
	}
	if len(data) < sha256.Size {
		return nil
	}
	sum := sha256.Sum256(data[sha256.Size:])
	if !bytes.Equal(sum[:], data[:sha256.Size]) {
		a.log.Warn("tool cache entry is corrupt; rebuilding", zap.String("key", key))
		return nil
	}
	b, err := bridge.NewFromSnapshot(data[sha256.Size:], opts)
	if err != nil {
		a.log.Warn("tool cache entry unusable; rebuilding", zap.String("key", key), zap.Error(err))
		return nil
	}
	return b
}

// storeCached writes the snapshot of b under key; failures only warn.
func (a *app) storeCached(key string, b *bridge.Catalog) {
	dir, err := a.cacheDir()
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	var snap []byte
	if err == nil {
		snap, err = b.Snapshot()
	}
	if err == nil {
		sum := sha256.Sum256(snap)
		var f *os.File
		f, err = os.CreateTemp(dir, key+".*.tmp")
		if err == nil {
			_, err = f.Write(append(sum[:], snap...))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = os.Rename(f.Name(), filepath.Join(dir, key+".tools"))
			}
			if err != nil {
				os.Remove(f.Name())
			}
		}
	}
	if err != nil {
		a.log.Warn("tool cache not written", zap.Error(err))
	}
}
