package mcpx

import (
	"sync"

	"github.com/mcpbridge/mcpbridge/bridge"
)

// With access lists in the whitelist, openapi://spec is served to each
// caller reduced to the operations it may call (bridge.Catalog.SpecFor).
// Reducing means decoding and encoding the document, up to a megabyte, so
// the result is kept per set of operations (bridge.Catalog.SpecAccess's
// key) rather than made per read: callers whose lists let them call the
// same operations read one document. Without access lists, or for a caller
// that may call everything, the catalog's own document is served and
// nothing is kept here.

// maxSpecViews bounds the reduced documents kept for one catalog. Distinct
// sets are few in practice (one per combination of allow lists a caller
// matches); past the bound, an arbitrary one is dropped to make room.
const maxSpecViews = 64

// specViews holds the reduced documents of one catalog by key.
type specViews struct {
	mu    sync.Mutex
	cat   *bridge.Catalog // whose documents byKey holds
	byKey map[string]*specView
}

// specView is one reduced document, made once however many read it.
type specView struct {
	once sync.Once
	spec []byte
	err  error
}

// get returns cat's document for key, calling build to make it unless it
// is kept.
func (v *specViews) get(cat *bridge.Catalog, key string, build func() ([]byte, error)) ([]byte, error) {
	v.mu.Lock()
	if v.cat != cat {
		v.cat, v.byKey = cat, map[string]*specView{}
	}
	e := v.byKey[key]
	if e == nil {
		if len(v.byKey) >= maxSpecViews {
			for k := range v.byKey {
				delete(v.byKey, k)
				break
			}
		}
		e = &specView{}
		v.byKey[key] = e
	}
	v.mu.Unlock()
	e.once.Do(func() { e.spec, e.err = build() })
	return e.spec, e.err
}

// reset drops what is kept, so that a swapped-out catalog is not held.
func (v *specViews) reset() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.cat, v.byKey = nil, nil
}

// size is the number of documents kept.
func (v *specViews) size() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.byKey)
}
