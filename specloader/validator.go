package specloader

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// A Validator can outlive the process that read the document: the tool
// cache keeps the last one of each spec source, so that a restart on an
// unchanged spec trusts its digest without reading it again (a file's size
// and modification time, a URL's ETag or Last-Modified answered by 304).
// What is kept of the source is its SHA-256, never the source itself: a
// URL may carry credentials.

// storedValidator is a Validator as MarshalBinary writes it (JSON).
type storedValidator struct {
	Source       string    `json:"source_sha256"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	Size         int64     `json:"size,omitempty"`
	ModTime      time.Time `json:"mod_time"`
	ReadAt       time.Time `json:"read_at"`
	SHA256       string    `json:"sha256"`
}

// MarshalBinary encodes v for RestoreValidator in a later process.
func (v Validator) MarshalBinary() ([]byte, error) {
	src := sha256.Sum256([]byte(v.source))
	return json.Marshal(storedValidator{
		Source:       hex.EncodeToString(src[:]),
		ETag:         v.ETag,
		LastModified: v.LastModified,
		Size:         v.Size,
		ModTime:      v.ModTime,
		ReadAt:       v.readAt,
		SHA256:       hex.EncodeToString(v.SHA256[:]),
	})
}

// Known reports whether v belongs to a read (it is not the zero value).
func (v Validator) Known() bool { return v.source != "" }

// RestoreValidator decodes what MarshalBinary wrote, for a Refetch of
// source. Bytes it cannot read, or written for another source, give the
// zero Validator, with which the next read is unconditional.
func RestoreValidator(source string, data []byte) Validator {
	var s storedValidator
	if json.Unmarshal(data, &s) != nil {
		return Validator{}
	}
	loc, err := parseSource(source)
	if err != nil {
		return Validator{}
	}
	key := cacheKey(loc)
	src := sha256.Sum256([]byte(key))
	sum, err := hex.DecodeString(s.SHA256)
	if s.Source != hex.EncodeToString(src[:]) || err != nil || len(sum) != sha256.Size {
		return Validator{}
	}
	v := Validator{ETag: s.ETag, LastModified: s.LastModified, Size: s.Size, ModTime: s.ModTime, source: key, readAt: s.ReadAt}
	copy(v.SHA256[:], sum)
	if v.SHA256 == ([sha256.Size]byte{}) || (isHTTP(loc) && v.ETag == "" && v.LastModified == "") {
		// Nothing to send a conditional request with: the read would
		// download and hash the document anyway.
		return Validator{}
	}
	return v
}
