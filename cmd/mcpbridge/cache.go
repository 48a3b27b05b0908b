package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/bridge"
	"github.com/mcpbridge/mcpbridge/specloader"
)

// The tool cache keeps the prepared tools of a start, so that a restart
// with the same spec bytes, whitelist, build-relevant options and binary
// skips parsing and building. Entries are files named by that key's hash,
// written to a temporary file and renamed (safe against concurrent
// writers), and prefixed by a CRC-32C of their content (a corrupt or
// truncated entry is ignored and rewritten). A checksum, not a digest: who
// can write the cache directory can write any entry, digest or not, and
// SHA-256 over GitHub's entry was ~5% of a restart's CPU.
//
// Writing an entry prunes the directory (pruneCache): entries and index
// entries unused for cacheUnusedAge (those of older binaries, specs or
// options; a hit marks its entry used) and temporary files of writes
// killed more than cacheTmpAge ago. Replicas may share the directory, so
// nothing recent goes: at worst a process misses an entry pruned under it
// and rebuilds it.
//
// The key covers the root spec document; an entry also lists the documents
// the spec's $refs pulled in (location and SHA-256), and a hit counts only
// when none of them changed (specloader.RefsChanged).

// cacheKey hashes everything that shapes the built tools.
func (a *app) cacheKey(specSum [sha256.Size]byte, wl []byte) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field("mcpbridge-tools-3")
	field(version)
	if exe, err := os.Executable(); err == nil {
		if st, err := os.Stat(exe); err == nil {
			field(fmt.Sprint(st.Size(), st.ModTime().UnixNano()))
		}
	}
	field(hex.EncodeToString(specSum[:]))
	var sum [sha256.Size]byte
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
	field(fmt.Sprint(cfg.NestedStyle, cfg.SchemaDetail, cfg.MaxDescription, cfg.OutputSchema))
	// Tolerant output schemas let redactable fields hold the marker.
	field(strings.Join(cfg.RedactKeys, ","))
	// Parameters named like a configured credential are left out of the
	// tools: the credentials' names (never their values) shape the build.
	creds := cfg.credentials()
	var names []string
	for loc, m := range map[string]map[string]string{"query": creds.Query, "header": creds.Headers, "cookie": creds.Cookies} {
		for n := range m {
			if loc == "header" {
				n = strings.ToLower(n) // header names match case-insensitively
			}
			names = append(names, loc+":"+n)
		}
	}
	// The configured security schemes (names and kinds, never secrets)
	// decide which credentials each operation carries (request.Plan.Auth)
	// and which parameters they take the place of.
	for name, s := range cfg.UpstreamAuth.Schemes {
		names = append(names, fmt.Sprintf("scheme:%d:%s:%t:%t:%t", len(name), name, s.Value != "", s.User != "" || s.Password != "", s.OAuth2.on()))
	}
	sort.Strings(names)
	field(strings.Join(names, ","))
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

// A cache file is the CRC-32C of the rest (4 bytes, big-endian), then the
// length (uvarint) of the gob-encoded list of referenced documents, that
// list, and the snapshot bytes; the snapshot is written as it is, never
// copied into a bigger buffer (GitHub's is ~3.8 MB).
const crcSize = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type cacheRef struct {
	Location string
	SHA256   [sha256.Size]byte
}

// loadCached returns the cached catalog for key and the documents its
// spec's $refs pulled in, or nil on any miss (a referenced document that
// changed or cannot be read again is a miss).
func (a *app) loadCached(ctx context.Context, key string, opts bridge.Options, loc *url.URL) (*bridge.Catalog, []specloader.Ref) {
	dir, err := a.cacheDir()
	if err != nil {
		return nil, nil
	}
	data, err := os.ReadFile(filepath.Join(dir, key+".tools"))
	if err != nil {
		return nil, nil
	}
	if len(data) < crcSize || crc32.Checksum(data[crcSize:], castagnoli) != binary.BigEndian.Uint32(data) {
		a.log.Warn("tool cache entry is corrupt; rebuilding", zap.String("key", key))
		return nil, nil
	}
	rest := data[crcSize:]
	n, w := binary.Uvarint(rest)
	if w <= 0 || n > uint64(len(rest)-w) {
		a.log.Warn("tool cache entry unusable; rebuilding", zap.String("key", key))
		return nil, nil
	}
	var stored []cacheRef
	if err := gob.NewDecoder(bytes.NewReader(rest[w : w+int(n)])).Decode(&stored); err != nil {
		a.log.Warn("tool cache entry unusable; rebuilding", zap.String("key", key), zap.Error(err))
		return nil, nil
	}
	snap := rest[w+int(n):]
	refs := make([]specloader.Ref, len(stored))
	for i, r := range stored {
		refs[i] = specloader.Ref{Location: r.Location, SHA256: r.SHA256}
	}
	if len(refs) > 0 {
		changed, err := specloader.RefsChanged(ctx, loc, refs, a.loaderOptions())
		if err != nil || changed {
			a.log.Debug("tool cache entry stale: a referenced document changed", zap.String("key", key), zap.Bool("changed", changed), zap.Error(err))
			return nil, nil
		}
	}
	c, err := bridge.NewFromSnapshot(snap, opts)
	if err != nil {
		a.log.Warn("tool cache entry unusable; rebuilding", zap.String("key", key), zap.Error(err))
		return nil, nil
	}
	// Mark the entry used, so that pruning keeps it (a read-only cache
	// directory is not pruned either).
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, key+".tools"), now, now)
	return c, refs
}

// storeCached writes the snapshot of c under key, with the documents its
// spec's $refs pulled in; failures only warn.
func (a *app) storeCached(key string, c *bridge.Catalog, refs []specloader.Ref) {
	if err := a.writeCache(key, c, refs); err != nil {
		a.log.Warn("tool cache not written", zap.Error(err))
		return
	}
	if dir, err := a.cacheDir(); err == nil {
		a.pruneCache(dir, time.Now())
	}
}

// How long the cache keeps what it no longer uses: an entry or index entry
// not used (written, or restored from) for cacheUnusedAge, and a temporary
// file cacheTmpAge after its write began (a write takes milliseconds; one
// that old was killed).
const (
	cacheUnusedAge = 7 * 24 * time.Hour
	cacheTmpAge    = 15 * time.Minute
)

// pruneCache removes from dir the cache's own files (cacheFileAge) that
// are stale at now; failures only log. Files of other names are left
// alone: --cache-dir may name a directory that is not the cache's alone.
func (a *app) pruneCache(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		a.log.Debug("tool cache not pruned", zap.Error(err))
		return
	}
	removed := 0
	for _, e := range entries {
		maxAge := cacheFileAge(e.Name())
		if maxAge == 0 || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || now.Sub(info.ModTime()) <= maxAge {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			if !errors.Is(err, fs.ErrNotExist) { // another process pruned it first
				a.log.Debug("tool cache file not pruned", zap.Error(err))
			}
			continue
		}
		removed++
	}
	if removed > 0 {
		a.log.Debug("tool cache pruned", zap.Int("files", removed))
	}
}

// cacheFileAge is how long the cache keeps its file named name unused, or
// 0 for a name the cache does not write: KEY.tools, KEY.spec, and their
// temporary files KEY.tools.RANDOM.tmp and KEY.spec.RANDOM.tmp, KEY being
// 32 lowercase hexadecimal digits.
func cacheFileAge(name string) time.Duration {
	const keyLen = 32
	if len(name) <= keyLen || strings.Trim(name[:keyLen], "0123456789abcdef") != "" {
		return 0
	}
	rest := name[keyLen:]
	tmp := strings.HasSuffix(rest, ".tmp")
	if tmp {
		rest = strings.TrimSuffix(rest, ".tmp")
		i := strings.LastIndexByte(rest, '.')
		if i < 0 || strings.Trim(rest[i+1:], "0123456789") != "" || i == len(rest)-1 {
			return 0
		}
		rest = rest[:i]
	}
	if rest != ".tools" && rest != ".spec" {
		return 0
	}
	if tmp {
		return cacheTmpAge
	}
	return cacheUnusedAge
}

func (a *app) writeCache(key string, c *bridge.Catalog, refs []specloader.Ref) error {
	dir, err := a.cacheDir()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	stored := []cacheRef{}
	for _, r := range refs {
		stored = append(stored, cacheRef{Location: r.Location, SHA256: r.SHA256})
	}
	var head bytes.Buffer
	if err := gob.NewEncoder(&head).Encode(stored); err != nil {
		return fmt.Errorf("encoding cache entry: %w", err)
	}
	snap, err := c.Snapshot()
	if err != nil {
		return err
	}
	n := binary.AppendUvarint(nil, uint64(head.Len()))
	sum := crc32.Update(crc32.Update(crc32.Checksum(n, castagnoli), castagnoli, head.Bytes()), castagnoli, snap)
	return writeAtomic(filepath.Join(dir, key+".tools"), binary.BigEndian.AppendUint32(nil, sum), n, head.Bytes(), snap)
}

// dropCached removes the entry under key; failures only log.
func (a *app) dropCached(key string) {
	dir, err := a.cacheDir()
	if err != nil {
		return
	}
	if err := os.Remove(filepath.Join(dir, key+".tools")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		a.log.Debug("tool cache entry not removed", zap.Error(err))
	}
}

// writeAtomic writes parts to path through a temporary file renamed into
// place, so that a concurrent reader sees the old file or the new one.
func writeAtomic(path string, parts ...[]byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	for _, part := range parts {
		if err == nil {
			_, err = f.Write(part)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// The cache's index of spec reads keeps, per spec source, the validator of
// its last read (specloader.Validator: size and modification time of a
// file, ETag or Last-Modified of a URL, and the SHA-256 of the bytes), so
// that a restart on an unchanged spec knows its digest, and so its tools'
// cache key, without reading it. An entry is named by a hash of the source
// and holds no more of it than that hash.

func (a *app) specIndexPath() (string, error) {
	dir, err := a.cacheDir()
	if err != nil {
		return "", err
	}
	src := a.cfg.Spec
	if !strings.Contains(src, "://") {
		if abs, err := filepath.Abs(src); err == nil {
			src = abs // the same file from another directory
		}
	}
	h := sha256.Sum256([]byte("mcpbridge-spec-index-1;" + src))
	return filepath.Join(dir, hex.EncodeToString(h[:16])+".spec"), nil
}

// knownSpec is the validator of the spec's last read by any process using
// this cache, or the zero Validator.
func (a *app) knownSpec() specloader.Validator {
	path, err := a.specIndexPath()
	if err != nil {
		return specloader.Validator{}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return specloader.Validator{}
	}
	now := time.Now() // used: pruning keeps it
	_ = os.Chtimes(path, now, now)
	return specloader.RestoreValidator(a.cfg.Spec, data)
}

// rememberSpec stores v as the spec's last read; failures only log.
func (a *app) rememberSpec(v specloader.Validator) {
	if err := a.writeSpecIndex(v); err != nil {
		a.log.Debug("spec index not written", zap.Error(err))
	}
}

func (a *app) writeSpecIndex(v specloader.Validator) error {
	data, err := v.MarshalBinary()
	if err != nil {
		return err
	}
	path, err := a.specIndexPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return writeAtomic(path, data)
}
